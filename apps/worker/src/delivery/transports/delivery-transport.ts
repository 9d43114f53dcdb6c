import { AttemptResult, DeliveryDestination } from '@herald/core';
import { AttemptContextRecord, WebhookRecord } from '@herald/database/queue';

/**
 * The kinds of destination Herald delivers to: the application's signed HTTP webhook, and the
 * operator's operational webhook (the same signed POST, to the operator's URL with its secret).
 * Another kind (a queue) is a new DeliveryTransport registered under its kind in DeliveryModule
 * — see CONTRIBUTING.md, "Add a destination kind".
 */
export type DestinationKind = DeliveryDestination;

/**
 * An attempt's context once DeliveryAttempt has checked there is somewhere to deliver to, with
 * the attempt span's W3C trace headers (`traceparent`, `tracestate`; empty while traces are off)
 * for the receiver.
 */
export type DeliverableContext = AttemptContextRecord & { webhook: WebhookRecord; traceHeaders: Readonly<Record<string, string>> };

export interface TransportAttempt {
  /** What happened, classified; a transport never throws. */
  result: AttemptResult;
  /** Where the attempt went, as the delivery log shows it (for a webhook, its URL). */
  target: string;
  /** The request's headers as sent (for a webhook: the customer's, then Standard Webhooks'), shown in the delivery log. */
  requestHeaders: Record<string, string>;
}

/**
 * The one seam between the delivery engine (claim, lease, retry policy, recording) and the
 * way an event reaches a destination: everything that is specific to a kind — the request's
 * shape, signing, the network client and its safety checks — lives behind it.
 */
export interface DeliveryTransport {
  readonly kind: DestinationKind;
  /**
   * Delivers the event once. `shutdown` aborts an attempt in flight when the worker stops; the
   * result then has no status, and DeliveryAttempt hands the delivery back.
   */
  send(context: DeliverableContext, startedAt: Date, shutdown: AbortSignal): Promise<TransportAttempt>;
}

/** The registered transports, by kind (a Map provider in DeliveryModule). */
export const DELIVERY_TRANSPORTS = Symbol('DELIVERY_TRANSPORTS');
export type DeliveryTransports = ReadonlyMap<DestinationKind, DeliveryTransport>;
