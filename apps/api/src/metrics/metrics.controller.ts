import { Controller, Get, Header, Res } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { Public } from '../common/auth/auth.decorators';
import { ApiErrors, HTTP_ERRORS } from '../common/swagger/api-errors.decorator';
import { ApiPublic } from '../common/swagger/api-public.decorator';
import { ApiMetrics } from './api-metrics';

/** Prometheus scrapes this without a key, like the health probes. */
@ApiTags('operations')
@ApiPublic()
@Public()
@Controller()
export class MetricsController {
  constructor(private readonly metrics: ApiMetrics) {}

  @Get('metrics')
  @Header('cache-control', 'no-store')
  @ApiOperation({
    summary: 'Prometheus metrics',
    description:
      "The api's requests by route, method and status, its process figures, and the delivery queue as the database holds it " +
      '(herald_database_up is 0 when the database could not be read; the scrape still answers 200).',
  })
  @ApiOkResponse({
    description: 'Prometheus text exposition format, version 0.0.4 (`text/plain; version=0.0.4; charset=utf-8`).',
    content: {
      'text/plain': {
        schema: { type: 'string' },
        example:
          '# HELP herald_database_up 1 when the last scrape could read the delivery queue from the database, 0 when it could not.\n# TYPE herald_database_up gauge\nherald_database_up 1\n',
      },
    },
    headers: { 'Cache-Control': { description: 'Every scrape is read fresh.', schema: { type: 'string', enum: ['no-store'] } } },
  })
  @ApiErrors(...HTTP_ERRORS)
  async scrape(@Res({ passthrough: true }) reply: FastifyReply): Promise<string> {
    const text = await this.metrics.render();
    reply.type(this.metrics.contentType);
    return text;
  }
}
