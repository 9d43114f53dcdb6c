import { AppError, StatisticsBucketDto, StatisticsDto, StatisticsQuery } from '@herald/contracts';
import { Clock, CLOCK, latencyPercentile, statisticsWindow } from '@herald/core';
import { ApplicationScope, StatisticsBucketRecord, StatisticsRepository } from '@herald/database';
import { Inject, Injectable } from '@nestjs/common';

/**
 * Reading delivery statistics (PRODUCT.md §16). The worker's finish statement writes them per
 * UTC hour; this resolves the window (core's statisticsWindow), sums hours into buckets in
 * PostgreSQL and turns each bucket's latency histogram into percentiles.
 */
@Injectable()
export class StatisticsService {
  constructor(
    private readonly statistics: StatisticsRepository,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  async read(scope: ApplicationScope, query: StatisticsQuery): Promise<StatisticsDto> {
    const resolved = statisticsWindow(
      { since: dateOf(query, 'since'), until: dateOf(query, 'until'), granularity: query.granularity },
      this.clock.now(),
    );
    if (!resolved.ok) {
      throw new AppError('INVALID_PARAMETER', resolved.message, { details: [{ field: resolved.parameter, message: resolved.message }] });
    }
    const { window } = resolved;
    const found = await this.statistics.read(scope, { from: window.from, to: window.to, granularity: window.granularity });
    const byStart = new Map(found.buckets.map((bucket) => [bucket.start.getTime(), bucket]));
    return {
      buckets: window.bucketStarts.map((start) => toBucketDto(start, byStart.get(start.getTime()))),
      by_event: found.byEvent,
    };
  }
}

/** A validated ISO-8601 parameter as a date; one JavaScript cannot represent (past year 275760) is a 400-03 too. */
function dateOf(query: StatisticsQuery, parameter: 'since' | 'until'): Date | undefined {
  const value = query[parameter];
  if (value === undefined) return undefined;
  const date = new Date(value);
  if (Number.isNaN(date.getTime())) {
    const message = `${parameter} must be an ISO-8601 date or date-time JavaScript can represent`;
    throw new AppError('INVALID_PARAMETER', `${message}.`, { details: [{ field: parameter, message }] });
  }
  return date;
}

function toBucketDto(start: Date, bucket: StatisticsBucketRecord | undefined): StatisticsBucketDto {
  return {
    start: start.toISOString(),
    events: bucket?.events ?? 0,
    succeeded: bucket?.succeeded ?? 0,
    failed: bucket?.failed ?? 0,
    attempts: bucket?.attempts ?? 0,
    failed_attempts: bucket?.failedAttempts ?? 0,
    latency_ms: bucket
      ? { p50: latencyPercentile(bucket.latency, 0.5), p95: latencyPercentile(bucket.latency, 0.95) }
      : { p50: null, p95: null },
    errors: bucket?.errors ?? {},
  };
}
