import http from 'node:http';

/** A span as an OTLP/HTTP request carried it, whatever its encoding. */
export interface ReceivedSpan {
  /** The resource's `service.name`. */
  service: string | undefined;
  resource: Record<string, AttributeValue>;
  /** Lower-case hex. */
  traceId: string;
  spanId: string;
  /** '' for a root span. */
  parentSpanId: string;
  traceState: string;
  name: string;
  /** OTLP's SpanKind: 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  kind: number;
  attributes: Record<string, AttributeValue>;
  /** OTLP's status code: 0 unset, 1 ok, 2 error. */
  statusCode: number;
}

export type AttributeValue = string | number | boolean | AttributeValue[] | null;

export interface ReceivedExport {
  path: string;
  contentType: string;
}

/**
 * An OTLP/HTTP trace receiver on 127.0.0.1, standing in for an OpenTelemetry collector: it
 * answers every POST 200 and decodes both encodings the exporters send, `http/json`
 * (application/json) and `http/protobuf` (application/x-protobuf, decoded by OtlpProtobufReader
 * below from the field numbers of opentelemetry-proto's trace.proto).
 */
export class OtlpReceiver {
  readonly spans: ReceivedSpan[] = [];
  readonly exports: ReceivedExport[] = [];
  port = 0;
  private readonly server: http.Server;
  private waiters: (() => void)[] = [];

  constructor() {
    this.server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const body = Buffer.concat(chunks);
        const contentType = req.headers['content-type'] ?? '';
        this.exports.push({ path: req.url ?? '', contentType });
        try {
          this.spans.push(...(contentType.startsWith('application/json') ? spansFromJson(body) : spansFromProtobuf(body)));
          res.writeHead(200, { 'content-type': contentType }).end(contentType.startsWith('application/json') ? '{}' : '');
        } catch (error) {
          res.writeHead(400).end(String(error));
        }
        this.waiters.splice(0).forEach((wake) => wake());
      });
    });
  }

  get tracesUrl(): string {
    return `http://127.0.0.1:${this.port}/v1/traces`;
  }

  async listen(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as { port: number }).port;
    return this;
  }

  /** Resolves with the spans `found` picks once it picks any; fails after `timeoutMs`, listing what came. */
  async waitFor(found: (spans: ReceivedSpan[]) => ReceivedSpan[], timeoutMs: number): Promise<ReceivedSpan[]> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const picked = found(this.spans);
      if (picked.length > 0) return picked;
      const left = deadline - Date.now();
      if (left <= 0) {
        throw new Error(
          `no such span within ${timeoutMs} ms; received: ${this.spans.map((s) => `${s.service}/${s.name}`).join(', ') || 'none'}`,
        );
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }
}

// ---- http/json: ExportTraceServiceRequest in OTLP's JSON mapping (ids as hex) ----

interface JsonAnyValue {
  stringValue?: string;
  boolValue?: boolean;
  intValue?: number | string;
  doubleValue?: number;
  arrayValue?: { values?: JsonAnyValue[] };
}
interface JsonKeyValue {
  key: string;
  value: JsonAnyValue;
}

function jsonValue(value: JsonAnyValue): AttributeValue {
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.boolValue !== undefined) return value.boolValue;
  if (value.intValue !== undefined) return Number(value.intValue);
  if (value.doubleValue !== undefined) return value.doubleValue;
  if (value.arrayValue !== undefined) return (value.arrayValue.values ?? []).map(jsonValue);
  return null;
}

const jsonAttributes = (list: JsonKeyValue[] | undefined) => Object.fromEntries((list ?? []).map((kv) => [kv.key, jsonValue(kv.value)]));

function spansFromJson(body: Buffer): ReceivedSpan[] {
  const request = JSON.parse(body.toString('utf8')) as {
    resourceSpans?: {
      resource?: { attributes?: JsonKeyValue[] };
      scopeSpans?: {
        spans?: {
          traceId: string;
          spanId: string;
          parentSpanId?: string;
          traceState?: string;
          name: string;
          kind: number;
          attributes?: JsonKeyValue[];
          status?: { code?: number };
        }[];
      }[];
    }[];
  };
  return (request.resourceSpans ?? []).flatMap((resourceSpans) => {
    const resource = jsonAttributes(resourceSpans.resource?.attributes);
    return (resourceSpans.scopeSpans ?? []).flatMap((scope) =>
      (scope.spans ?? []).map((span) => ({
        service: resource['service.name'] as string | undefined,
        resource,
        traceId: span.traceId,
        spanId: span.spanId,
        parentSpanId: span.parentSpanId ?? '',
        traceState: span.traceState ?? '',
        name: span.name,
        kind: span.kind,
        attributes: jsonAttributes(span.attributes),
        statusCode: span.status?.code ?? 0,
      })),
    );
  });
}

// ---- http/protobuf: the same message in protobuf's wire format ----

/** Protobuf's wire format, as far as OTLP's trace messages need it. */
class OtlpProtobufReader {
  private position = 0;

  constructor(private readonly bytes: Uint8Array) {}

  get done(): boolean {
    return this.position >= this.bytes.length;
  }

  /** Each field of the message: its number, wire type and (for length-delimited ones) its bytes. */
  *fields(): Generator<{ field: number; wireType: number; reader: OtlpProtobufReader }> {
    while (!this.done) {
      const key = this.varint();
      const field = Math.floor(key / 8);
      const wireType = key % 8;
      yield { field, wireType, reader: this };
    }
  }

  varint(): number {
    let value = 0;
    let scale = 1;
    for (;;) {
      if (this.done) throw new Error('protobuf: truncated varint');
      const byte = this.bytes[this.position++];
      value += (byte & 0x7f) * scale;
      if (byte < 0x80) return value;
      scale *= 128;
    }
  }

  bytesField(): Uint8Array {
    const length = this.varint();
    const slice = this.bytes.subarray(this.position, this.position + length);
    if (slice.length !== length) throw new Error('protobuf: truncated field');
    this.position += length;
    return slice;
  }

  message(): OtlpProtobufReader {
    return new OtlpProtobufReader(this.bytesField());
  }

  string(): string {
    return Buffer.from(this.bytesField()).toString('utf8');
  }

  hex(): string {
    return Buffer.from(this.bytesField()).toString('hex');
  }

  double(): number {
    const value = Buffer.from(this.bytes.subarray(this.position, this.position + 8)).readDoubleLE(0);
    this.position += 8;
    return value;
  }

  skip(wireType: number): void {
    if (wireType === 0) this.varint();
    else if (wireType === 1) this.position += 8;
    else if (wireType === 2) this.bytesField();
    else if (wireType === 5) this.position += 4;
    else throw new Error(`protobuf: wire type ${wireType} is not used by OTLP`);
  }
}

/** AnyValue: 1 string, 2 bool, 3 int, 4 double, 5 array (ArrayValue: 1 values). */
function protobufValue(reader: OtlpProtobufReader): AttributeValue {
  let value: AttributeValue = null;
  for (const { field, wireType } of reader.fields()) {
    if (field === 1) value = reader.string();
    else if (field === 2) value = reader.varint() !== 0;
    else if (field === 3) value = reader.varint();
    else if (field === 4) value = reader.double();
    else if (field === 5) {
      const items: AttributeValue[] = [];
      for (const item of reader.message().fields()) {
        if (item.field === 1) items.push(protobufValue(item.reader.message()));
        else item.reader.skip(item.wireType);
      }
      value = items;
    } else reader.skip(wireType);
  }
  return value;
}

/** KeyValue: 1 key, 2 value. */
function protobufAttribute(reader: OtlpProtobufReader): [string, AttributeValue] {
  let key = '';
  let value: AttributeValue = null;
  for (const { field, wireType } of reader.fields()) {
    if (field === 1) key = reader.string();
    else if (field === 2) value = protobufValue(reader.message());
    else reader.skip(wireType);
  }
  return [key, value];
}

/** Span: 1 trace_id, 2 span_id, 3 trace_state, 4 parent_span_id, 5 name, 6 kind, 9 attributes, 15 status (3 code). */
function protobufSpan(reader: OtlpProtobufReader, resource: Record<string, AttributeValue>): ReceivedSpan {
  const span: ReceivedSpan = {
    service: resource['service.name'] as string | undefined,
    resource,
    traceId: '',
    spanId: '',
    parentSpanId: '',
    traceState: '',
    name: '',
    kind: 0,
    attributes: {},
    statusCode: 0,
  };
  for (const { field, wireType } of reader.fields()) {
    if (field === 1) span.traceId = reader.hex();
    else if (field === 2) span.spanId = reader.hex();
    else if (field === 3) span.traceState = reader.string();
    else if (field === 4) span.parentSpanId = reader.hex();
    else if (field === 5) span.name = reader.string();
    else if (field === 6) span.kind = reader.varint();
    else if (field === 9) {
      const [key, value] = protobufAttribute(reader.message());
      span.attributes[key] = value;
    } else if (field === 15) {
      for (const status of reader.message().fields()) {
        if (status.field === 3) span.statusCode = status.reader.varint();
        else status.reader.skip(status.wireType);
      }
    } else reader.skip(wireType);
  }
  return span;
}

/** ExportTraceServiceRequest: 1 resource_spans (1 resource (1 attributes), 2 scope_spans (2 spans)). */
function spansFromProtobuf(body: Buffer): ReceivedSpan[] {
  const spans: ReceivedSpan[] = [];
  for (const { field, wireType, reader } of new OtlpProtobufReader(body).fields()) {
    if (field !== 1) {
      reader.skip(wireType);
      continue;
    }
    const resourceSpans = reader.message();
    const resource: Record<string, AttributeValue> = {};
    const scopes: OtlpProtobufReader[] = [];
    for (const part of resourceSpans.fields()) {
      if (part.field === 1) {
        for (const attribute of part.reader.message().fields()) {
          if (attribute.field === 1) {
            const [key, value] = protobufAttribute(attribute.reader.message());
            resource[key] = value;
          } else attribute.reader.skip(attribute.wireType);
        }
      } else if (part.field === 2) scopes.push(part.reader.message());
      else part.reader.skip(part.wireType);
    }
    for (const scope of scopes) {
      for (const item of scope.fields()) {
        if (item.field === 2) spans.push(protobufSpan(item.reader.message(), resource));
        else item.reader.skip(item.wireType);
      }
    }
  }
  return spans;
}
