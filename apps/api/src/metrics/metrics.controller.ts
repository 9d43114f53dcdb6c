import { Controller, Get, Header, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { Public } from '../common/auth/auth.decorators';
import { ApiMetrics } from './api-metrics';

/** Prometheus scrapes this without a key, like the health probes. */
@ApiExcludeController()
@Public()
@Controller()
export class MetricsController {
  constructor(private readonly metrics: ApiMetrics) {}

  @Get('metrics')
  @Header('cache-control', 'no-store')
  async scrape(@Res({ passthrough: true }) reply: FastifyReply): Promise<string> {
    const text = await this.metrics.render();
    reply.type(this.metrics.contentType);
    return text;
  }
}
