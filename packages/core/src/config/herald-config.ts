import { z } from 'zod';
import { isValidCidr } from '../destinations/destination-policy';

/**
 * Herald's whole configuration, read from the environment once at start-up. Every process
 * (api, worker, cli) parses the same variables, so a bad value stops any of them with the same
 * message naming the variable.
 */
export interface HeraldConfig {
  http: { host: string; port: number };
  /** null: no server given, the cli starts the embedded database. */
  database: {
    url: string | null;
    poolSize: number;
    /** Set by `herald start` for PGlite: one backend, no NOTIFY across connections. */
    embedded: boolean;
  };
  auth: { adminKey: string | null };
  delivery: {
    allowedTargetCidrs: string[];
    timeoutSeconds: number;
    connectTimeoutSeconds: number;
    leaseSeconds: number;
    workerConcurrency: number;
    /** Attempts in flight per destination host, per worker process. */
    hostConcurrency: number;
    /**
     * Attempts in flight per endpoint (an application's webhook) across every worker process
     * (PRODUCT.md §17), unless the webhook sets its own `max_in_flight`.
     */
    endpointMaxInFlight: number;
    /**
     * An HTTP CONNECT proxy every attempt goes through (PRODUCT.md §17), or null. Herald still
     * resolves and checks the destination and asks the proxy for the checked address.
     */
    egressProxy: string | null;
    /**
     * Whether finishing an attempt also counts it in the application's statistics (PRODUCT.md §16;
     * HERALD_DELIVERY_STATISTICS, on by default). Off, the finish statement writes none: for an
     * operator who does not want them, and for the bench's same-run measure of their cost.
     */
    statistics: boolean;
  };
  rateLimit: { perSecond: number; burst: number };
  /** The worker's Prometheus endpoint; 0 turns it off (the api serves /metrics on its own port). */
  metrics: { workerPort: number };
  /**
   * How long events, finished deliveries and their attempts are kept (PRODUCT.md §11), and audit
   * records (§16).
   */
  retention: { days: number; auditDays: number };
  /** Auto-disable (PRODUCT.md §10): hours of nothing but failures before a webhook is disabled; 0 never. */
  health: { disableAfterHours: number };
  log: { level: LogLevel };
  embedded: { dataDir: string };
  /**
   * OpenTelemetry traces (PRODUCT.md §16), from the standard OTEL_* variables; null when no OTLP
   * endpoint is set (then nothing of OpenTelemetry is loaded). The exporter and the SDK read the
   * other standard variables themselves (OTEL_EXPORTER_OTLP_HEADERS, _TIMEOUT, _COMPRESSION,
   * OTEL_RESOURCE_ATTRIBUTES, OTEL_TRACES_SAMPLER, OTEL_BSP_*).
   */
  tracing: TracingConfig | null;
}

export const OTLP_PROTOCOLS = ['http/protobuf', 'http/json'] as const;
export type OtlpProtocol = (typeof OTLP_PROTOCOLS)[number];

export interface TracingConfig {
  /** Where spans are POSTed: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as given, or OTEL_EXPORTER_OTLP_ENDPOINT + `/v1/traces`. */
  tracesUrl: string;
  protocol: OtlpProtocol;
  /** OTEL_SERVICE_NAME; null: the process's own name (`herald-api`, `herald-worker`). */
  serviceName: string | null;
}

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** Connecting never takes longer than this, whatever the whole-attempt timeout. */
const MAX_CONNECT_TIMEOUT_SECONDS = 5;

/** A reason a process cannot start that the operator must fix; entry points print its message, not a stack. */
export class StartupError extends Error {
  override name = 'StartupError';
}

export class ConfigError extends StartupError {
  override name = 'ConfigError';

  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
  }
}

const unset = (raw: string | undefined): raw is undefined => raw === undefined || raw.trim() === '';

function integer(fallback: number, min: number, max: number) {
  return z
    .string()
    .optional()
    .transform((raw, ctx) => {
      if (unset(raw)) return fallback;
      const value = Number(raw.trim());
      if (!/^-?\d+$/.test(raw.trim()) || value < min || value > max) {
        ctx.addIssue({ code: 'custom', message: `must be an integer from ${min} to ${max}, got "${raw}"` });
        return z.NEVER;
      }
      return value;
    });
}

/** `on` or `off` (also `true`/`false`, `1`/`0`); unset is `fallback`. */
function onOff(fallback: boolean) {
  return z
    .string()
    .optional()
    .transform((raw, ctx) => {
      if (unset(raw)) return fallback;
      const value = raw.trim().toLowerCase();
      if (['on', 'true', '1'].includes(value)) return true;
      if (['off', 'false', '0'].includes(value)) return false;
      ctx.addIssue({ code: 'custom', message: `must be on or off, got "${raw}"` });
      return z.NEVER;
    });
}

function optionalString(check: (value: string) => string | null) {
  return z
    .string()
    .optional()
    .transform((raw, ctx) => {
      if (unset(raw)) return null;
      const problem = check(raw);
      if (problem) {
        ctx.addIssue({ code: 'custom', message: problem });
        return z.NEVER;
      }
      return raw;
    });
}

const environmentSchema = z.object({
  HOST: optionalString((v) => (/^[A-Za-z0-9.:-]+$/.test(v) ? null : `must be a host name or IP address, got "${v}"`)),
  PORT: integer(3000, 1, 65_535),
  DATABASE_URL: optionalString((v) => (/^postgres(ql)?:\/\/.+/.test(v) ? null : 'must be a postgresql:// connection string')),
  HERALD_DB_POOL_SIZE: integer(10, 1, 200),
  HERALD_EMBEDDED_DATABASE: z
    .string()
    .optional()
    .transform((raw, ctx) => {
      if (unset(raw) || raw === '0' || raw === 'false') return false;
      if (raw === '1' || raw === 'true') return true;
      ctx.addIssue({ code: 'custom', message: `must be 1 or 0, got "${raw}"` });
      return z.NEVER;
    }),
  HERALD_ADMIN_KEY: optionalString((v) =>
    /^[\x21-\x7e]{16,256}$/.test(v)
      ? null
      : 'must be 16 to 256 printable characters without spaces (it is sent in the Authorization header)',
  ),
  HERALD_ALLOWED_TARGET_CIDRS: z
    .string()
    .optional()
    .transform((raw, ctx) => {
      if (unset(raw)) return [];
      const ranges = raw
        .split(',')
        .map((part) => part.trim())
        .filter(Boolean);
      const invalid = ranges.filter((range) => !isValidCidr(range));
      if (invalid.length > 0) {
        ctx.addIssue({
          code: 'custom',
          message: `must be comma-separated CIDR ranges such as 127.0.0.0/8; not a range: ${invalid.map((r) => `"${r}"`).join(', ')}`,
        });
        return z.NEVER;
      }
      return ranges;
    }),
  HERALD_EGRESS_PROXY: z
    .string()
    .optional()
    .transform((raw, ctx) => {
      if (unset(raw)) return null;
      let url: URL;
      try {
        url = new URL(raw.trim());
      } catch {
        url = new URL('invalid:');
      }
      if (url.protocol !== 'http:' || url.hostname === '' || (url.pathname !== '/' && url.pathname !== '') || url.search !== '') {
        ctx.addIssue({
          code: 'custom',
          message: 'must be an HTTP CONNECT proxy as http://host:port (credentials allowed: http://user:password@host:port)',
        });
        return z.NEVER;
      }
      return url.toString();
    }),
  HERALD_DELIVERY_TIMEOUT_SECONDS: integer(15, 1, 300),
  HERALD_DELIVERY_LEASE_SECONDS: integer(60, 2, 3_600),
  HERALD_DELIVERY_STATISTICS: onOff(true),
  HERALD_WORKER_CONCURRENCY: integer(64, 1, 1_024),
  HERALD_WORKER_HOST_CONCURRENCY: integer(16, 1, 1_024),
  HERALD_ENDPOINT_MAX_IN_FLIGHT: integer(16, 1, 1_000),
  HERALD_RATE_LIMIT_PER_SECOND: integer(100, 0, 1_000_000),
  HERALD_RATE_LIMIT_BURST: integer(200, 1, 1_000_000),
  HERALD_WORKER_METRICS_PORT: integer(9464, 0, 65_535),
  HERALD_RETENTION_DAYS: integer(30, 1, 36_500),
  HERALD_AUDIT_RETENTION_DAYS: integer(365, 1, 36_500),
  HERALD_DISABLE_AFTER_HOURS: integer(120, 0, 87_600),
  HERALD_LOG_LEVEL: z
    .string()
    .optional()
    .transform((raw, ctx) => {
      if (unset(raw)) return 'info' as LogLevel;
      const level = raw.trim().toLowerCase();
      if (!(LOG_LEVELS as readonly string[]).includes(level)) {
        ctx.addIssue({ code: 'custom', message: `must be one of ${LOG_LEVELS.join(', ')}, got "${raw}"` });
        return z.NEVER;
      }
      return level as LogLevel;
    }),
  HERALD_DATA_DIR: z
    .string()
    .optional()
    .transform((raw) => (unset(raw) ? '.herald' : raw)),
  OTEL_SDK_DISABLED: z
    .string()
    .optional()
    .transform((raw, ctx) => {
      if (unset(raw) || raw.trim().toLowerCase() === 'false') return false;
      if (raw.trim().toLowerCase() === 'true') return true;
      ctx.addIssue({ code: 'custom', message: `must be true or false, got "${raw}"` });
      return z.NEVER;
    }),
  OTEL_TRACES_EXPORTER: z
    .string()
    .optional()
    .transform((raw, ctx) => {
      if (unset(raw)) return 'otlp' as const;
      const exporter = raw.trim().toLowerCase();
      if (exporter === 'otlp' || exporter === 'none') return exporter;
      ctx.addIssue({ code: 'custom', message: `must be otlp or none (Herald exports traces over OTLP/HTTP only), got "${raw}"` });
      return z.NEVER;
    }),
  OTEL_EXPORTER_OTLP_ENDPOINT: otlpEndpoint(),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: otlpEndpoint(),
  OTEL_EXPORTER_OTLP_PROTOCOL: otlpProtocol(),
  OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: otlpProtocol(),
  OTEL_SERVICE_NAME: z
    .string()
    .optional()
    .transform((raw) => (unset(raw) ? null : raw.trim())),
});

function otlpEndpoint() {
  return optionalString((v) => {
    try {
      const url = new URL(v.trim());
      if (url.protocol === 'http:' || url.protocol === 'https:') return null;
    } catch {
      // not a URL at all: the same message
    }
    return `must be an http:// or https:// URL of an OTLP/HTTP receiver, got "${v}"`;
  });
}

function otlpProtocol() {
  return z
    .string()
    .optional()
    .transform((raw, ctx) => {
      if (unset(raw)) return null;
      const protocol = raw.trim();
      if ((OTLP_PROTOCOLS as readonly string[]).includes(protocol)) return protocol as OtlpProtocol;
      ctx.addIssue({ code: 'custom', message: `must be ${OTLP_PROTOCOLS.join(' or ')} (grpc is not supported), got "${raw}"` });
      return z.NEVER;
    });
}

/**
 * Tracing is on when an OTLP endpoint is set (the signal's own or the general one, as every
 * OpenTelemetry SDK reads them), unless OTEL_SDK_DISABLED or OTEL_TRACES_EXPORTER=none turns it
 * off. The general endpoint is a base URL: traces go to its `/v1/traces`.
 */
function tracingOf(e: z.infer<typeof environmentSchema>): TracingConfig | null {
  if (e.OTEL_SDK_DISABLED || e.OTEL_TRACES_EXPORTER === 'none') return null;
  const base = e.OTEL_EXPORTER_OTLP_ENDPOINT?.trim() ?? null;
  const tracesUrl = e.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim() ?? (base === null ? null : `${base.replace(/\/+$/, '')}/v1/traces`);
  if (tracesUrl === null) return null;
  return {
    tracesUrl,
    protocol: e.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? e.OTEL_EXPORTER_OTLP_PROTOCOL ?? 'http/protobuf',
    serviceName: e.OTEL_SERVICE_NAME,
  };
}

/** What a client of a running Herald needs (the cli's api commands): where it listens, and the bootstrap admin key. */
export interface ApiClientConfig {
  port: number;
  adminKey: string | null;
}

/**
 * Only PORT and HERALD_ADMIN_KEY, validated as parseHeraldConfig validates them: a command that
 * calls the running api is not stopped by a bad value it never uses (say HERALD_LOG_LEVEL).
 */
export function parseApiClientConfig(env: NodeJS.ProcessEnv): ApiClientConfig {
  const parsed = environmentSchema.pick({ PORT: true, HERALD_ADMIN_KEY: true }).safeParse(env);
  if (!parsed.success) {
    throw new ConfigError(parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`));
  }
  return { port: parsed.data.PORT, adminKey: parsed.data.HERALD_ADMIN_KEY };
}

export function parseHeraldConfig(env: NodeJS.ProcessEnv): HeraldConfig {
  const parsed = environmentSchema.safeParse(env);
  if (!parsed.success) {
    throw new ConfigError(parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`));
  }
  const e = parsed.data;
  const problems: string[] = [];
  // A lease shorter than an attempt would let a second worker claim a delivery still in flight.
  if (e.HERALD_DELIVERY_LEASE_SECONDS <= e.HERALD_DELIVERY_TIMEOUT_SECONDS) {
    problems.push(
      `HERALD_DELIVERY_LEASE_SECONDS: must be longer than HERALD_DELIVERY_TIMEOUT_SECONDS (${e.HERALD_DELIVERY_TIMEOUT_SECONDS}), got ${e.HERALD_DELIVERY_LEASE_SECONDS}`,
    );
  }
  if (problems.length > 0) throw new ConfigError(problems);

  return {
    http: { host: e.HOST ?? '127.0.0.1', port: e.PORT },
    database: { url: e.DATABASE_URL, poolSize: e.HERALD_DB_POOL_SIZE, embedded: e.HERALD_EMBEDDED_DATABASE },
    auth: { adminKey: e.HERALD_ADMIN_KEY },
    delivery: {
      allowedTargetCidrs: e.HERALD_ALLOWED_TARGET_CIDRS,
      timeoutSeconds: e.HERALD_DELIVERY_TIMEOUT_SECONDS,
      connectTimeoutSeconds: Math.min(MAX_CONNECT_TIMEOUT_SECONDS, e.HERALD_DELIVERY_TIMEOUT_SECONDS),
      leaseSeconds: e.HERALD_DELIVERY_LEASE_SECONDS,
      workerConcurrency: e.HERALD_WORKER_CONCURRENCY,
      hostConcurrency: e.HERALD_WORKER_HOST_CONCURRENCY,
      endpointMaxInFlight: e.HERALD_ENDPOINT_MAX_IN_FLIGHT,
      egressProxy: e.HERALD_EGRESS_PROXY,
      statistics: e.HERALD_DELIVERY_STATISTICS,
    },
    rateLimit: { perSecond: e.HERALD_RATE_LIMIT_PER_SECOND, burst: e.HERALD_RATE_LIMIT_BURST },
    metrics: { workerPort: e.HERALD_WORKER_METRICS_PORT },
    retention: { days: e.HERALD_RETENTION_DAYS, auditDays: e.HERALD_AUDIT_RETENTION_DAYS },
    health: { disableAfterHours: e.HERALD_DISABLE_AFTER_HOURS },
    log: { level: e.HERALD_LOG_LEVEL },
    embedded: { dataDir: e.HERALD_DATA_DIR },
    tracing: tracingOf(e),
  };
}
