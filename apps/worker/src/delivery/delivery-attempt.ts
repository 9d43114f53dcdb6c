import { Clock, CLOCK, ID_GENERATOR, IdGenerator, nextStep } from '@herald/core';
import { AttemptContextRecord, ClaimedDelivery, DeliveryQueueRepository } from '@herald/database/queue';
import { HeraldTracing, TRACING } from '@herald/runtime';
import { Inject, Injectable } from '@nestjs/common';
import { WorkerMetrics } from '../metrics/worker-metrics';
import { AttemptOutcome } from './attempt-outcome';
import { DELIVERY_TRANSPORTS, DeliveryTransports } from './transports/delivery-transport';

/**
 * One attempt of one claimed delivery, with the configuration stored at this moment: cancelled
 * if the webhook or (for a subscribed event) the active subscription is gone; otherwise handed
 * to the transport of its destination's kind, and recorded with what follows (PRODUCT.md §5.2,
 * `nextStep`). Nothing here knows how a destination is reached.
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

  async run(claimed: ClaimedDelivery, context: AttemptContextRecord, token: string, shutdown: AbortSignal): Promise<AttemptOutcome> {
    const { webhook, subscription } = context;
    if (!webhook || (!claimed.ignoresSubscription && !subscription?.active)) {
      return (await this.queue.cancelClaimed(claimed, token, this.clock.now())) ? 'cancelled' : 'lease_lost';
    }
    if (!context.webhookActive) {
      // Disabled while this delivery waited (or as it was published): kept for when it is enabled.
      return (await this.queue.pauseClaimed(claimed.id, token, this.clock.now())) ? 'paused' : 'lease_lost';
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
      return (await this.queue.release(claimed.id, token, this.clock.now())) ? 'released' : 'lease_lost';
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
    const recorded = await this.queue.finish(
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
        requestHeaders,
      },
      // A customer's delivery that fails for good on its schedule tells the operator (a manual
      // retry or a recover failing again does not tell again).
      step.status === 'failed' && context.destination === 'webhook' && !claimed.manualAttempt
        ? { eventId: this.ids.next('evt'), deliveryId: this.ids.next('dlv') }
        : null,
    );
    if (!recorded) return 'lease_lost';
    return step.status === 'pending' ? 'retry_scheduled' : step.status;
  }
}
