import { Clock, CLOCK } from '@herald/core';
import { DeliveryQueueRepository } from '@herald/database';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';

/**
 * What the api process serves at /metrics (PRODUCT.md §7): its own requests and process
 * figures, and the delivery queue as the database holds it — the one view of the backlog that
 * does not depend on which worker is asked. Each worker serves its attempts on its own port.
 */
@Injectable()
export class ApiMetrics {
  private readonly logger = new Logger(ApiMetrics.name);
  readonly registry = new Registry();
  private readonly requests = new Histogram({
    name: 'herald_http_request_duration_seconds',
    help: 'API requests by route pattern, method and status, with the time to answer them.',
    labelNames: ['method', 'route', 'status'],
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [this.registry],
  });
  private readonly queue: Gauge<'state'>;
  private readonly webhooks: Gauge<'state'>;
  private readonly lag: Gauge;
  private readonly databaseUp: Gauge;

  constructor(
    private readonly deliveries: DeliveryQueueRepository,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {
    collectDefaultMetrics({ register: this.registry });
    this.queue = new Gauge({
      name: 'herald_deliveries_queued',
      help: 'Deliveries not finished, by state: due (waiting for a worker), scheduled (a later retry), sending, or paused (their webhook is disabled).',
      labelNames: ['state'],
      registers: [this.registry],
    });
    this.webhooks = new Gauge({
      name: 'herald_webhooks',
      help: 'Webhooks by state: active, or disabled (by hand or after failing for HERALD_DISABLE_AFTER_HOURS).',
      labelNames: ['state'],
      registers: [this.registry],
    });
    this.lag = new Gauge({
      name: 'herald_delivery_lag_seconds',
      help: 'How long the oldest due delivery has waited for a worker; 0 when none is waiting.',
      registers: [this.registry],
    });
    this.databaseUp = new Gauge({
      name: 'herald_database_up',
      help: '1 when the last scrape could read the delivery queue from the database, 0 when it could not.',
      registers: [this.registry],
    });
  }

  /**
   * Called once per answered request. Unknown routes share one label, so a scan of random URLs
   * cannot grow the series without bound.
   */
  observeRequest(method: string, routePattern: string | undefined, status: number, elapsedMs: number): void {
    const route = routePattern ?? 'unmatched';
    this.requests.observe({ method: routePattern ? method : 'other', route, status: String(status) }, elapsedMs / 1000);
  }

  /** The exposition text; the queue is read from the database at each scrape. */
  async render(): Promise<string> {
    await this.readQueue();
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  private async readQueue(): Promise<void> {
    try {
      const backlog = await this.deliveries.backlog(this.clock.now());
      this.queue.set({ state: 'due' }, backlog.due);
      this.queue.set({ state: 'scheduled' }, backlog.scheduled);
      this.queue.set({ state: 'sending' }, backlog.sending);
      this.queue.set({ state: 'paused' }, backlog.paused);
      this.webhooks.set({ state: 'active' }, backlog.webhooks.active);
      this.webhooks.set({ state: 'disabled' }, backlog.webhooks.disabled);
      this.lag.set(backlog.oldestDueSeconds);
      this.databaseUp.set(1);
    } catch (error) {
      // Stale figures would mislead: drop the queue's series, make the lag unknown, say why, serve the rest.
      this.queue.reset();
      this.webhooks.reset();
      this.lag.set(Number.NaN);
      this.databaseUp.set(0);
      this.logger.warn(`the delivery queue could not be read for /metrics: ${(error as Error).message}`);
    }
  }
}
