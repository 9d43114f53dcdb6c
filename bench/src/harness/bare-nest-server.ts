// The API-read framework floor: the same stack as Herald's api (NestJS 11 on Fastify 5) with one
// route answering the same JSON, and nothing else: no guard, no logging, no metrics, no database.
// Herald's api cannot be faster than this; the gap to it is what Herald's own request path costs.
import 'reflect-metadata';
import { Controller, Get, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';

const body: unknown = JSON.parse(process.env.BODY ?? '{}');

@Controller()
class ErrorCodeController {
  @Get('error_codes/:code')
  find(): unknown {
    return body;
  }
}

@Module({ controllers: [ErrorCodeController] })
class FloorModule {}

async function main(): Promise<void> {
  const app = await NestFactory.create<NestFastifyApplication>(FloorModule, new FastifyAdapter(), { logger: false });
  await app.listen(Number(process.env.PORT), '127.0.0.1');
  console.log('listening');
}

void main();
