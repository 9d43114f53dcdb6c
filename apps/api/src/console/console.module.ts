import { Inject, Module, OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { FastifyInstance } from 'fastify';
import { CONSOLE_DIST_DIR, defaultConsoleDistDir, registerConsoleRoutes } from './console-routes';

/**
 * Serves the Herald Console (apps/console, built into its dist/) at /console. The files are
 * static and public: the page asks for a key itself and sends it with each API call, so these
 * routes sit outside Nest's controllers (no guard, no OpenAPI entry) and go straight to Fastify.
 */
@Module({ providers: [{ provide: CONSOLE_DIST_DIR, useFactory: defaultConsoleDistDir }] })
export class ConsoleModule implements OnModuleInit {
  constructor(
    private readonly adapterHost: HttpAdapterHost,
    @Inject(CONSOLE_DIST_DIR) private readonly distDir: string,
  ) {}

  onModuleInit(): void {
    const fastify = this.adapterHost.httpAdapter.getInstance<FastifyInstance>();
    registerConsoleRoutes(fastify, this.distDir);
  }
}
