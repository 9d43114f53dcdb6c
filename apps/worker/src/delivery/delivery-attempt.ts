import { Clock, CLOCK, ID_GENERATOR, IdGenerator, loggedRequestHeaders, nextStep } from '@herald/core';
import { AttemptContextRecord, ClaimedDelivery, DeliveryQueueRepository } from '@herald/database/queue';
import { HeraldTracing, TRACING } from '@herald/runtime';
import { Inject, Injectable } from '@nestjs/common';
import { WorkerMetrics } from '../metrics/worker-metrics';
import { AttemptOutcome } from './attempt-outcome';
import { DELIVERY_TRANSPORTS, DeliveryTransports } from './transports/delivery-transport';

/**
 * What an attempt holds its worker's slot for: the exchange with the receiver, no more. Its
 * promise settles when the slot may go to the next delivery; `recorded` settles when the outcome
 * is written (by the queue's finisher, batched with others), so the slot never waits for a
 * commit. Wrapped in an object because a promise resolved with a promise would wait for it.
 */
export interface AttemptExchange {
  recorded: Promise<AttemptOutcome>;
  /** True when the outcome goes to the queue's finisher (a finish statement), not a cancel, pause or release of its own. */
  viaFinisher?: boolean;
}

/**
 * The end of an attempt whose record is the guarded queue write `write` (a finish, a cancel, a
 * release…): `outcome` when it applied, `lease_lost` when another worker owns the delivery now.
 */
export function recordedAs(write: Promise<boolean>, outcome: AttemptOutcome): AttemptExchange {
  return { recorded: write.then((applied) => (applied ? outcome : 'lease_lost')) };
}

/**
 * One attempt of one claimed delivery, with the configuration stored at this moment: cancelled
 * if the webhook or (for a subscribed event) the active subscription is gone; otherwise handed
 * to the transport of its destination's kind, and recorded with what follows (PRODUCT.md §5.2,
 * `nextStep`). Nothing here knows how a destination is reached.
 *
 * Crash safety is the lease's, as before: an exchange whose outcome is not yet recorded when the
 * process dies is sent again once its lease runs out (at-least-once, PRODUCT.md §5).
 */
@Injectable()
export class DeliveryAttempt {
  constructor(
    private readonly queue: DeliveryQueueRepository,
    @Inject(DELIVERY_TRANSPORTS) private readonly transports: DeliveryTransports,
    private readonly metrics: WorkerMetrics,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(ID_GENERATOR) private readonly ids: IdGenerator,
    @Inject(TRACING) private readonly tracing: HeraldTracing,
  ) {}

  async run(claimed: ClaimedDelivery, context: AttemptContextRecord, token: string, shutdown: AbortSignal): Promise<AttemptExchange> {
    const { webhook, subscription } = context;
    if (!webhook || (!claimed.ignoresSubscription && !subscription?.active)) {
      return recordedAs(this.queue.cancelClaimed(claimed, token, this.clock.now()), 'cancelled');
    }
    if (!context.webhookActive) {
      // Disabled while this delivery waited (or as it was published): kept for when it is enabled.
      return recordedAs(this.queue.pauseClaimed(claimed.id, token, this.clock.now()), 'paused');
    }

    const startedAt = this.clock.now();
    const transport = this.transports.get(context.destination);
    if (!transport) throw new Error(`DeliveryModule registers no transport for ${context.destination} destinations`);
    // The attempt's span, in the trace of the publish its event stored (PRODUCT.md §16); its
    // `traceparent` goes to the receiver. A shared no-op while traces are off.
    const span = this.tracing.startAttempt(context.event.traceContext, {
      applicationId: claimed.applicationId,
      eventType: claimed.eventType,
      eventId: claimed.eventId,
      deliveryId: claimed.id,
      number: claimed.attemptCount + 1,
      destination: context.destination,
      url: webhook.url,
    });
    const { result, target, requestHeaders } = await transport.send(
      { ...context, webhook, traceHeaders: span.headers },
      startedAt,
      shutdown,
    );
    span.end(result);
    this.metrics.recordAttempt(result);
    if (shutdown.aborted && result.status === null) {
      // Cut short by shutdown, not by the receiver: hand the delivery back without an attempt.
      return recordedAs(this.queue.release(claimed.id, token, this.clock.now()), 'released');
    }

    const now = this.clock.now();
    const step = nextStep({
      result,
      attemptNumber: claimed.attemptCount + 1,
      retryEnabled: webhook.retryEnabled === 1,
      ensureDelivery: subscription?.ensureDelivery ?? false,
      policy: webhook.retryPolicy,
      manualAttempt: claimed.manualAttempt,
      now,
    });
    const nextAttemptAt = step.status === 'pending' ? step.nextAttemptAt : null;
    const recorded = this.queue.finish(
      claimed,
      token,
      { status: step.status, nextAttemptAt, now },
      {
        startedAt,
        durationMs: result.durationMs,
        url: target,
        responseStatus: result.status,
        responseExcerpt: result.excerpt,
        error: result.error,
        nextAttemptAt,
        // Without what the row says again (the event id, the start, the JSON content type).
        requestHeaders: loggedRequestHeaders(requestHeaders, claimed.eventId, startedAt),
      },
      // A customer's delivery that fails for good on its schedule tells the operator (a manual
      // retry or a recover failing again does not tell again).
      step.status === 'failed' && context.destination === 'webhook' && !claimed.manualAttempt
        ? { eventId: this.ids.next('evt'), deliveryId: this.ids.next('dlv') }
        : null,
    );
    return { ...recordedAs(recorded, step.status === 'pending' ? 'retry_scheduled' : step.status), viaFinisher: true };
  }
}
