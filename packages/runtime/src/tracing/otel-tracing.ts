import { AttemptResult, HERALD_VERSION, isSuccess, TracingConfig } from '@herald/core';
import {
  Attributes,
  Context,
  defaultTextMapGetter,
  defaultTextMapSetter,
  ROOT_CONTEXT,
  Span,
  SpanKind,
  SpanStatusCode,
  trace,
  Tracer,
} from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { defaultResource, detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor, SpanExporter } from '@opentelemetry/sdk-trace-base';
import {
  ATTR_CLIENT_ADDRESS,
  ATTR_ERROR_TYPE,
  ATTR_HTTP_REQUEST_METHOD,
  ATTR_HTTP_REQUEST_METHOD_ORIGINAL,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_HTTP_ROUTE,
  ATTR_NETWORK_PROTOCOL_VERSION,
  ATTR_SERVER_ADDRESS,
  ATTR_SERVER_PORT,
  ATTR_SERVICE_NAME,
  ATTR_SERVICE_VERSION,
  ATTR_URL_FULL,
  ATTR_URL_PATH,
  ATTR_URL_SCHEME,
  ATTR_USER_AGENT_ORIGINAL,
  HTTP_REQUEST_METHOD_VALUE_OTHER,
} from '@opentelemetry/semantic-conventions';
import type { HeraldService } from '../herald-service';
import type {
  AttemptSpan,
  HeraldTracing,
  PublishOutcome,
  PublishSpan,
  RequestSpan,
  TracedAttempt,
  TracedPublish,
  TracedRequest,
} from './tracing';

/** Herald's own span attributes (PRODUCT.md §16). */
export const HERALD_ATTRIBUTES = {
  applicationId: 'herald.application_id',
  eventType: 'herald.event_type',
  eventId: 'herald.event_id',
  eventCount: 'herald.event_count',
  deliveryId: 'herald.delivery_id',
  deliveryCount: 'herald.delivery_count',
  attempt: 'herald.attempt',
  destination: 'herald.destination',
  requestId: 'herald.request_id',
} as const;

/** HTTP semantic conventions: the methods reported as they are; any other is `_OTHER`. */
const KNOWN_METHODS = new Set(['CONNECT', 'DELETE', 'GET', 'HEAD', 'OPTIONS', 'PATCH', 'POST', 'PUT', 'TRACE']);

/**
 * The OpenTelemetry SDK behind HeraldTracing, loaded only by startTracing. No global tracer
 * provider, context manager or propagator is registered, and nothing is instrumented by
 * patching: Herald makes its three kinds of span itself and passes their parents explicitly
 * (a request's span to its publish, the publish's stored context to each attempt), so nothing
 * runs per request or per attempt that is not one of those spans.
 */
export async function createOtelTracing(config: TracingConfig, service: HeraldService): Promise<HeraldTracing> {
  const exporter = await exporterFor(config);
  // OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES (envDetector) override the process's own name.
  const resource = defaultResource()
    .merge(resourceFromAttributes({ [ATTR_SERVICE_NAME]: service, [ATTR_SERVICE_VERSION]: HERALD_VERSION }))
    .merge(detectResources({ detectors: [envDetector] }));
  // The sampler comes from OTEL_TRACES_SAMPLER (parent-based, always on, by default), the batch's
  // sizes and delays from OTEL_BSP_*: the SDK reads both.
  const provider = new BasicTracerProvider({ resource, spanProcessors: [new BatchSpanProcessor(exporter)] });
  return new OtelTracing(provider.getTracer('herald', HERALD_VERSION), () => provider.shutdown());
}

async function exporterFor(config: TracingConfig): Promise<SpanExporter> {
  // Only the protocol's own package is loaded. Headers, timeout and compression come from the
  // standard OTEL_EXPORTER_OTLP_* variables, which the exporter reads itself.
  if (config.protocol === 'http/json') {
    const { OTLPTraceExporter } = await import('@opentelemetry/exporter-trace-otlp-http');
    return new OTLPTraceExporter({ url: config.tracesUrl });
  }
  const { OTLPTraceExporter } = await import('@opentelemetry/exporter-trace-otlp-proto');
  return new OTLPTraceExporter({ url: config.tracesUrl });
}

class OtelTracing implements HeraldTracing {
  readonly enabled = true;
  private readonly propagator = new W3CTraceContextPropagator();

  constructor(
    private readonly tracer: Tracer,
    private readonly stop: () => Promise<void>,
  ) {}

  startRequest(request: TracedRequest): RequestSpan {
    // The caller's trace, when its `traceparent` is valid; a new one otherwise.
    const parent = this.propagator.extract(ROOT_CONTEXT, request.headers, defaultTextMapGetter);
    const method = KNOWN_METHODS.has(request.method) ? request.method : HTTP_REQUEST_METHOD_VALUE_OTHER;
    const attributes: Attributes = {
      [ATTR_HTTP_REQUEST_METHOD]: method,
      // The query is left out: it holds paging cursors and filters, nothing a trace needs.
      [ATTR_URL_PATH]: request.url.split('?', 1)[0],
      [ATTR_URL_SCHEME]: request.scheme,
      [ATTR_NETWORK_PROTOCOL_VERSION]: request.httpVersion,
      [HERALD_ATTRIBUTES.requestId]: request.requestId,
    };
    if (method !== request.method) attributes[ATTR_HTTP_REQUEST_METHOD_ORIGINAL] = request.method;
    const host = firstHeader(request.headers.host);
    if (host) {
      const { address, port } = splitHost(host);
      attributes[ATTR_SERVER_ADDRESS] = address;
      if (port !== undefined) attributes[ATTR_SERVER_PORT] = port;
    }
    const userAgent = firstHeader(request.headers['user-agent']);
    if (userAgent) attributes[ATTR_USER_AGENT_ORIGINAL] = userAgent;
    if (request.clientAddress) attributes[ATTR_CLIENT_ADDRESS] = request.clientAddress;
    const span = this.tracer.startSpan(method, { kind: SpanKind.SERVER, attributes }, parent);
    return new OtelRequestSpan(span, method);
  }

  startPublish(parent: RequestSpan | null, publish: TracedPublish): PublishSpan {
    const types = [...new Set(publish.eventTypes)];
    const attributes: Attributes = {
      [HERALD_ATTRIBUTES.applicationId]: publish.applicationId,
      [HERALD_ATTRIBUTES.eventCount]: publish.eventTypes.length,
      [HERALD_ATTRIBUTES.eventType]: types.length === 1 ? types[0] : types,
    };
    const span = this.tracer.startSpan(
      types.length === 1 ? `publish ${types[0]}` : 'publish',
      { kind: SpanKind.PRODUCER, attributes },
      parent instanceof OtelRequestSpan ? trace.setSpan(ROOT_CONTEXT, parent.span) : ROOT_CONTEXT,
    );
    return new OtelPublishSpan(span, this.storedContextOf(span));
  }

  startAttempt(storedContext: string | null, attempt: TracedAttempt): AttemptSpan {
    const attributes: Attributes = {
      [HERALD_ATTRIBUTES.applicationId]: attempt.applicationId,
      [HERALD_ATTRIBUTES.eventType]: attempt.eventType,
      [HERALD_ATTRIBUTES.eventId]: attempt.eventId,
      [HERALD_ATTRIBUTES.deliveryId]: attempt.deliveryId,
      [HERALD_ATTRIBUTES.attempt]: attempt.number,
      [HERALD_ATTRIBUTES.destination]: attempt.destination,
      [ATTR_HTTP_REQUEST_METHOD]: 'POST',
      ...targetAttributes(attempt.url),
    };
    const span = this.tracer.startSpan(
      `deliver ${attempt.eventType}`,
      { kind: SpanKind.CLIENT, attributes },
      this.contextOf(storedContext),
    );
    const headers: Record<string, string> = {};
    this.propagator.inject(trace.setSpan(ROOT_CONTEXT, span), headers, defaultTextMapSetter);
    return new OtelAttemptSpan(span, headers);
  }

  shutdown(): Promise<void> {
    return this.stop();
  }

  /** `traceparent`, and ` tracestate` when the trace carries one (a `traceparent` never holds a space). */
  private storedContextOf(span: Span): string {
    const carrier: Record<string, string> = {};
    this.propagator.inject(trace.setSpan(ROOT_CONTEXT, span), carrier, defaultTextMapSetter);
    return carrier.tracestate ? `${carrier.traceparent} ${carrier.tracestate}` : carrier.traceparent;
  }

  /** The publish's context an event stored, or the root (no publish context: tracing was off, or an operational notice). */
  private contextOf(storedContext: string | null): Context {
    if (!storedContext) return ROOT_CONTEXT;
    const space = storedContext.indexOf(' ');
    const carrier =
      space < 0
        ? { traceparent: storedContext }
        : { traceparent: storedContext.slice(0, space), tracestate: storedContext.slice(space + 1) };
    return this.propagator.extract(ROOT_CONTEXT, carrier, defaultTextMapGetter);
  }
}

class OtelRequestSpan implements RequestSpan {
  constructor(
    readonly span: Span,
    private readonly method: string,
  ) {}

  end(route: string | undefined, status: number | null): void {
    if (route) {
      this.span.updateName(`${this.method} ${route}`);
      this.span.setAttribute(ATTR_HTTP_ROUTE, route);
    }
    if (status === null) {
      this.span.setAttribute(ATTR_ERROR_TYPE, 'request_aborted');
    } else {
      this.span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, status);
      // A server's span is an error only for its own failures (HTTP semantic conventions); a 4xx is the client's.
      if (status >= 500) {
        this.span.setAttribute(ATTR_ERROR_TYPE, String(status));
        this.span.setStatus({ code: SpanStatusCode.ERROR });
      }
    }
    this.span.end();
  }
}

class OtelPublishSpan implements PublishSpan {
  constructor(
    private readonly span: Span,
    readonly storedContext: string,
  ) {}

  end(outcome: PublishOutcome): void {
    if ('errorType' in outcome) {
      this.span.setAttribute(ATTR_ERROR_TYPE, outcome.errorType);
      this.span.setStatus({ code: SpanStatusCode.ERROR });
    } else {
      this.span.setAttribute(HERALD_ATTRIBUTES.deliveryCount, outcome.deliveryIds.length);
      if (outcome.eventIds.length === 1) this.span.setAttribute(HERALD_ATTRIBUTES.eventId, outcome.eventIds[0]);
      if (outcome.deliveryIds.length === 1) this.span.setAttribute(HERALD_ATTRIBUTES.deliveryId, outcome.deliveryIds[0]);
    }
    this.span.end();
  }
}

class OtelAttemptSpan implements AttemptSpan {
  constructor(
    private readonly span: Span,
    readonly headers: Readonly<Record<string, string>>,
  ) {}

  end(result: AttemptResult): void {
    if (result.status !== null) this.span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, result.status);
    if (!isSuccess(result)) {
      // The error kind (`timeout`, `connection_refused`…) when there was no answer; else the
      // status, since Herald counts any answer outside 2xx (a redirect too) as a failure.
      this.span.setAttribute(ATTR_ERROR_TYPE, result.error ?? String(result.status));
      this.span.setStatus({ code: SpanStatusCode.ERROR });
    }
    this.span.end();
  }
}

/**
 * Where an attempt went. The query string is left out of `url.full`: receivers put access
 * tokens there, and a trace goes to a collector the receiver's owner does not control.
 */
function targetAttributes(url: string): Attributes {
  try {
    const target = new URL(url);
    const scheme = target.protocol.slice(0, -1);
    return {
      [ATTR_URL_FULL]: `${target.origin}${target.pathname}`,
      [ATTR_SERVER_ADDRESS]: target.hostname,
      [ATTR_SERVER_PORT]: target.port ? Number(target.port) : scheme === 'https' ? 443 : 80,
    };
  } catch {
    return {};
  }
}

function firstHeader(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/** `host[:port]` or `[v6]:port` from a Host header. */
function splitHost(host: string): { address: string; port: number | undefined } {
  const match = /^(\[[^\]]*\]|[^:]*)(?::(\d+))?$/.exec(host);
  if (!match) return { address: host, port: undefined };
  return { address: match[1].replace(/^\[|\]$/g, ''), port: match[2] === undefined ? undefined : Number(match[2]) };
}
