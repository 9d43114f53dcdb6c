import { AttemptResult } from '@herald/core';
import type { RemovedRows } from '@herald/database/queue';
import { Injectable } from '@nestjs/common';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { ATTEMPT_OUTCOMES, AttemptOutcome } from '../delivery/attempt-outcome';

/**
 * What this worker process did, for Prometheus (PRODUCT.md §7). Counters only grow while the
 * process lives; Prometheus' rate() copes with restarts. The queue's depth is the api's to
 * report (it reads the table), so a scrape of any worker costs no query.
 */
@Injectable()
export class WorkerMetrics {
  readonly registry = new Registry();
  private readonly outcomes = new Counter({
    name: 'herald_delivery_outcomes_total',
    help: 'Claimed deliveries by what became of them: succeeded, failed, retry_scheduled, cancelled, paused, released or lease_lost.',
    labelNames: ['outcome'],
    registers: [this.registry],
  });
  private readonly attempts = new Histogram({
    name: 'herald_delivery_attempt_duration_seconds',
    help: "Time from sending a webhook to the receiver's full answer, by response class (2xx…5xx) or error kind.",
    labelNames: ['response'],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 15, 30],
    registers: [this.registry],
  });

  private readonly slots = new Histogram({
    name: 'herald_worker_slot_seconds',
    help:
      'Time one of the HERALD_WORKER_CONCURRENCY slots was held per claimed delivery: its HTTP exchange (a throttled ' +
      "delivery's wait for its slot included), not the recording of its outcome, which the finisher does apart.",
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [this.registry],
  });

  private readonly claims = new Counter({
    name: 'herald_worker_claims_total',
    help:
      'Claims this worker made: in their own transaction (own), or riding on a finish statement, whose commit ' +
      'they share and whose ended leases they can fill at once (with_finish).',
    labelNames: ['claim'],
    registers: [this.registry],
  });

  private readonly throttled = new Counter({
    name: 'herald_delivery_throttled_total',
    help:
      "Throttled waits (PRODUCT.md §10): due deliveries left waiting for a later slot of their webhook's throttle (waiting), " +
      'and held ones handed back because this worker could not send them in their slot (slot_missed).',
    labelNames: ['reason'],
    registers: [this.registry],
  });

  private readonly retentionRemoved = new Counter({
    name: 'herald_retention_rows_removed_total',
    help: 'Rows removed by retention (HERALD_RETENTION_DAYS), by table: deliveries, delivery_attempts, events.',
    labelNames: ['table'],
    registers: [this.registry],
  });

  constructor() {
    collectDefaultMetrics({ register: this.registry });
    for (const table of ['deliveries', 'delivery_attempts', 'events']) this.retentionRemoved.labels({ table }).inc(0);
    // Every outcome from the start at 0, so rate() and alerts see a series before the first event.
    for (const outcome of ATTEMPT_OUTCOMES) this.outcomes.labels({ outcome }).inc(0);
    for (const reason of ['waiting', 'slot_missed']) this.throttled.labels({ reason }).inc(0);
    for (const claim of ['own', 'with_finish']) this.claims.labels({ claim }).inc(0);
  }

  recordClaim(claim: 'own' | 'with_finish'): void {
    this.claims.inc({ claim });
  }

  /** Claims made so far, of each kind (tests read it). */
  async claimCounts(): Promise<Record<'own' | 'with_finish', number>> {
    const { values } = await this.claims.get();
    const of = (claim: string) => values.find((v) => v.labels.claim === claim)?.value ?? 0;
    return { own: of('own'), with_finish: of('with_finish') };
  }

  recordThrottled(reason: 'waiting' | 'slot_missed', deliveries: number): void {
    if (deliveries > 0) this.throttled.inc({ reason }, deliveries);
  }

  recordAttempt(result: AttemptResult): void {
    const response = result.status !== null ? `${Math.floor(result.status / 100)}xx` : (result.error ?? 'network_error');
    this.attempts.observe({ response }, result.durationMs / 1000);
  }

  recordRetention(removed: RemovedRows): void {
    this.retentionRemoved.inc({ table: 'deliveries' }, removed.deliveries);
    this.retentionRemoved.inc({ table: 'delivery_attempts' }, removed.attempts);
    this.retentionRemoved.inc({ table: 'events' }, removed.events);
    this.retentionRemoved.inc({ table: 'portal_links' }, removed.portalLinks);
    this.retentionRemoved.inc({ table: 'audit_log' }, removed.auditRecords);
    this.retentionRemoved.inc({ table: 'delivery_stats' }, removed.statistics);
  }

  recordSlot(seconds: number): void {
    this.slots.observe(seconds);
  }

  recordOutcome(outcome: AttemptOutcome): void {
    this.outcomes.inc({ outcome });
  }

  /** Reads the attempts in flight and the outcomes being recorded at each scrape, rather than tracking every change. */
  observeInFlight(inFlight: () => number, recording: () => number, waiting: () => number): void {
    new Gauge({
      name: 'herald_worker_deliveries_waiting',
      help: 'Deliveries this worker has claimed and holds until one of their endpoint slots is free.',
      registers: [this.registry],
      collect() {
        this.set(waiting());
      },
    });
    new Gauge({
      name: 'herald_worker_attempts_in_flight',
      help: 'Delivery attempts this worker has in flight right now (slots taken).',
      registers: [this.registry],
      collect() {
        this.set(inFlight());
      },
    });
    new Gauge({
      name: 'herald_worker_outcomes_recording',
      help: "Attempts whose exchange has ended and whose outcome the worker's finisher has not yet committed.",
      registers: [this.registry],
      collect() {
        this.set(recording());
      },
    });
  }
}
