import { ok, StatisticsQuery, StatisticsResponse } from '@herald/contracts';
import { ApplicationScope } from '@herald/database';
import { Get, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation } from '@nestjs/swagger';
import { OwnedApplication } from '../common/access/application-access.guard';
import { ApplicationController } from '../common/access/application-controller.decorator';
import { StatisticsService } from './statistics.service';

/** GET /application/{id}/stats (PRODUCT.md §16): for the application's account keys, admin keys and its portal links. */
@ApplicationController('stats', { tag: 'statistics', errors: ['INVALID_PARAMETER'] })
export class StatisticsController {
  constructor(private readonly statistics: StatisticsService) {}

  @Get()
  @ApiOperation({
    summary: "Read the application's delivery statistics",
    description:
      'Webhook deliveries per UTC hour or day (default: the last 24 hours by hour; at most 90 days and 2,160 buckets), every bucket ' +
      'that overlaps [since, until) whole and oldest first, zeros included. Counts are exact: `events` counts deliveries whose first ' +
      'attempt was made in the bucket; `succeeded` and `failed` count each delivery once, in the bucket where it ended (a manual retry ' +
      'or recover of an ended delivery adds attempts, not another outcome); `attempts`, `failed_attempts` and `errors` count every ' +
      "attempt. `latency_ms` holds percentiles of the successful attempts' durations, within ±5%. Kept for 400 days. " +
      'A bad since, until or granularity answers 400-03 naming it.',
  })
  @ApiOkResponse({ type: StatisticsResponse })
  async read(@OwnedApplication() scope: ApplicationScope, @Query() query: StatisticsQuery): Promise<StatisticsResponse> {
    return ok(await this.statistics.read(scope, query));
  }
}
