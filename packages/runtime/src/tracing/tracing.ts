import type { AttemptResult, TracingConfig } from '@herald/core';
import type { HeraldService } from '../herald-service';

/**
 * OpenTelemetry traces (PRODUCT.md §16) behind a facade that names Herald's three spans and
 * nothing of OpenTelemetry. Without an OTLP endpoint `startTracing` answers NO_TRACING and no
 * `@opentelemetry` module is ever required (deploy/test/traces.e2e-spec.ts records require.cache
 * to hold that); callers branch on `enabled`, a constant for the process's life, before doing
 * any work for a span.
 */
export interface HeraldTracing {
  readonly enabled: boolean;
  /** The server span of one API request, a child of the caller's `traceparent` when it sent one. */
  startRequest(request: TracedRequest): RequestSpan;
  /** A publish (one event, a batch, a test ping): a child of the request's span. */
  startPublish(parent: RequestSpan | null, publish: TracedPublish): PublishSpan;
  /** One delivery attempt: a child of the publish whose context its event stored (a root span when none was stored). */
  startAttempt(storedContext: string | null, attempt: TracedAttempt): AttemptSpan;
  /** Exports the spans still waiting; the process calls it once, as it shuts down. */
  shutdown(): Promise<void>;
}

/** The injection token of the process's HeraldTracing (HeraldRuntimeModule provides it). */
export const TRACING = Symbol('HERALD_TRACING');

/** What a server span records of a request; never its headers beyond `traceparent`, `tracestate`, `host` and `user-agent`. */
export interface TracedRequest {
  method: string;
  /** The request target as received (path and query). */
  url: string;
  headers: Readonly<Record<string, string | string[] | undefined>>;
  scheme: string;
  httpVersion: string;
  clientAddress: string | undefined;
  requestId: string;
}

export interface RequestSpan {
  /** `route`: the matched route's pattern, undefined for an unknown URL; `status`: null when the client went away first. */
  end(route: string | undefined, status: number | null): void;
}

export interface TracedPublish {
  applicationId: number;
  /** One per event, in order. */
  eventTypes: readonly string[];
}

export interface PublishSpan {
  /**
   * What each published event's row keeps (`events.trace_context`): this span's W3C
   * `traceparent`, then a space and its `tracestate` when there is one. Null when tracing is off.
   */
  readonly storedContext: string | null;
  end(outcome: PublishOutcome): void;
}

/** A publish's end: the events it stored (or found under their idempotency keys) and their deliveries, or why it failed. */
export type PublishOutcome = { eventIds: readonly string[]; deliveryIds: readonly string[] } | { errorType: string };

export interface TracedAttempt {
  applicationId: number;
  eventType: string;
  eventId: string;
  deliveryId: string;
  /** 1 for the first attempt. */
  number: number;
  /** `webhook` or `operational`. */
  destination: string;
  url: string;
}

export interface AttemptSpan {
  /** `traceparent` (and `tracestate`) for the receiver; empty when tracing is off. */
  readonly headers: Readonly<Record<string, string>>;
  end(result: AttemptResult): void;
}

const NO_HEADERS: Readonly<Record<string, string>> = Object.freeze({});
const NO_REQUEST_SPAN: RequestSpan = { end: () => undefined };
const NO_PUBLISH_SPAN: PublishSpan = { storedContext: null, end: () => undefined };
const NO_ATTEMPT_SPAN: AttemptSpan = { headers: NO_HEADERS, end: () => undefined };

/** Tracing off: every span is one shared object that does nothing. */
export const NO_TRACING: HeraldTracing = Object.freeze({
  enabled: false,
  startRequest: () => NO_REQUEST_SPAN,
  startPublish: () => NO_PUBLISH_SPAN,
  startAttempt: () => NO_ATTEMPT_SPAN,
  shutdown: () => Promise.resolve(),
});

/**
 * The process's tracing: NO_TRACING when `config` is null (no OTLP endpoint), else an
 * OpenTelemetry SDK exporting to it. The SDK is loaded here, lazily, and only then.
 */
export async function startTracing(config: TracingConfig | null, service: HeraldService): Promise<HeraldTracing> {
  if (config === null) return NO_TRACING;
  const { createOtelTracing } = await import('./otel-tracing');
  return createOtelTracing(config, service);
}
