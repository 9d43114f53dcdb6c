import { createServer, Server } from 'node:http';
import { HERALD_CONFIG, HeraldConfig, StartupError } from '@herald/core';
import { Inject, Injectable, Logger, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import { WorkerMetrics } from './worker-metrics';

/**
 * Serves GET /metrics for Prometheus on HERALD_WORKER_METRICS_PORT (0: not at all). Plain
 * node:http: one route does not need a framework in the worker. It listens in onModuleInit,
 * before the delivery loop starts, so a port already taken stops the worker before it claims
 * any work.
 */
@Injectable()
export class MetricsServer implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger(MetricsServer.name);
  private server: Server | null = null;

  constructor(
    private readonly metrics: WorkerMetrics,
    @Inject(HERALD_CONFIG) private readonly config: HeraldConfig,
  ) {}

  async onModuleInit(): Promise<void> {
    const port = this.config.metrics.workerPort;
    if (port === 0) return;
    const host = this.config.http.host;
    const server = createServer((request, response) => {
      if (request.method !== 'GET' || request.url?.split('?')[0] !== '/metrics') {
        response.writeHead(404, { 'content-type': 'text/plain' }).end('Only GET /metrics is served here.\n');
        return;
      }
      this.metrics.registry.metrics().then(
        (text) => response.writeHead(200, { 'content-type': this.metrics.registry.contentType }).end(text),
        (error: unknown) => {
          this.logger.error({ err: error }, 'collecting metrics failed');
          response.writeHead(500, { 'content-type': 'text/plain' }).end('Collecting metrics failed; see the worker log.\n');
        },
      );
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', (error: NodeJS.ErrnoException) =>
        reject(
          error.code === 'EADDRINUSE'
            ? new StartupError(
                `HERALD_WORKER_METRICS_PORT: ${host}:${port} is already in use; choose another port, or 0 to turn the worker's metrics off`,
              )
            : error,
        ),
      );
      server.listen(port, host, resolve);
    });
    this.server = server;
    this.logger.log(`metrics on http://${host}:${port}/metrics`);
  }

  async onApplicationShutdown(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = null;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
