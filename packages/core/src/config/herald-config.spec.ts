import { parseApiClientConfig, ConfigError, parseHeraldConfig } from './herald-config';

const problemsOf = (env: NodeJS.ProcessEnv): string[] => {
  try {
    parseHeraldConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  throw new Error('expected a ConfigError');
};

describe('parseHeraldConfig (PRODUCT.md §7)', () => {
  it('applies the documented defaults to an empty environment', () => {
    expect(parseHeraldConfig({})).toEqual({
      http: { host: '127.0.0.1', port: 3000 },
      database: { url: null, poolSize: 10, embedded: false },
      auth: { adminKey: null },
      delivery: {
        allowedTargetCidrs: [],
        timeoutSeconds: 15,
        connectTimeoutSeconds: 5,
        leaseSeconds: 60,
        workerConcurrency: 64,
        hostConcurrency: 16,
        endpointMaxInFlight: 16,
        egressProxy: null,
        statistics: true,
      },
      rateLimit: { perSecond: 100, burst: 200 },
      metrics: { workerPort: 9464 },
      retention: { days: 30, auditDays: 365 },
      health: { disableAfterHours: 120 },
      log: { level: 'info' },
      embedded: { dataDir: '.herald' },
      tracing: null,
    });
  });

  it('reads every variable', () => {
    const config = parseHeraldConfig({
      HOST: '0.0.0.0',
      PORT: '8080',
      DATABASE_URL: 'postgresql://u:p@db:5432/herald',
      HERALD_ADMIN_KEY: 'a-long-enough-admin-key',
      HERALD_ALLOWED_TARGET_CIDRS: '127.0.0.0/8, 10.0.0.0/8',
      HERALD_DELIVERY_TIMEOUT_SECONDS: '3',
      HERALD_DELIVERY_LEASE_SECONDS: '30',
      HERALD_WORKER_CONCURRENCY: '8',
      HERALD_WORKER_HOST_CONCURRENCY: '2',
      HERALD_ENDPOINT_MAX_IN_FLIGHT: '40',
      HERALD_EGRESS_PROXY: 'http://egress.internal:3128',
      HERALD_RATE_LIMIT_PER_SECOND: '0',
      HERALD_RATE_LIMIT_BURST: '10',
      HERALD_WORKER_METRICS_PORT: '0',
      HERALD_LOG_LEVEL: 'DEBUG',
      HERALD_DATA_DIR: '/var/lib/herald',
      HERALD_EMBEDDED_DATABASE: '1',
      HERALD_RETENTION_DAYS: '7',
      HERALD_AUDIT_RETENTION_DAYS: '2555',
      HERALD_DELIVERY_STATISTICS: 'off',
    });
    expect(config.http).toEqual({ host: '0.0.0.0', port: 8080 });
    expect(config.database).toEqual({ url: 'postgresql://u:p@db:5432/herald', poolSize: 10, embedded: true });
    expect(config.delivery).toEqual({
      allowedTargetCidrs: ['127.0.0.0/8', '10.0.0.0/8'],
      timeoutSeconds: 3,
      connectTimeoutSeconds: 3,
      leaseSeconds: 30,
      workerConcurrency: 8,
      hostConcurrency: 2,
      endpointMaxInFlight: 40,
      egressProxy: 'http://egress.internal:3128/',
      statistics: false,
    });
    expect(config.rateLimit).toEqual({ perSecond: 0, burst: 10 });
    expect(config.metrics).toEqual({ workerPort: 0 });
    expect(config.retention).toEqual({ days: 7, auditDays: 2555 });
    expect(config.log.level).toBe('debug');
  });

  it.each([
    ['PORT', 'abc', /PORT: must be an integer from 1 to 65535, got "abc"/],
    ['HERALD_EGRESS_PROXY', 'https://proxy:3128', /HERALD_EGRESS_PROXY: must be an HTTP CONNECT proxy as http:\/\/host:port/],
    ['HERALD_EGRESS_PROXY', 'proxy:3128', /HERALD_EGRESS_PROXY: must be an HTTP CONNECT proxy/],
    ['HERALD_EGRESS_PROXY', 'http://proxy:3128/path', /HERALD_EGRESS_PROXY: must be an HTTP CONNECT proxy/],
    ['PORT', '70000', /PORT: must be an integer/],
    ['PORT', '80.5', /PORT: must be an integer/],
    ['DATABASE_URL', 'mysql://x', /DATABASE_URL: must be a postgresql:\/\/ connection string/],
    ['HERALD_ADMIN_KEY', 'short', /HERALD_ADMIN_KEY: must be 16 to 256 printable characters/],
    ['HERALD_ADMIN_KEY', 'has a space inside it', /HERALD_ADMIN_KEY/],
    ['HERALD_ALLOWED_TARGET_CIDRS', '127.0.0.0/8,banana', /HERALD_ALLOWED_TARGET_CIDRS: .*"banana"/],
    ['HERALD_DELIVERY_TIMEOUT_SECONDS', '0', /HERALD_DELIVERY_TIMEOUT_SECONDS: must be an integer from 1 to 300/],
    ['HERALD_WORKER_CONCURRENCY', '-4', /HERALD_WORKER_CONCURRENCY/],
    ['HERALD_RATE_LIMIT_BURST', '0', /HERALD_RATE_LIMIT_BURST/],
    ['HERALD_WORKER_METRICS_PORT', '65536', /HERALD_WORKER_METRICS_PORT/],
    ['HERALD_RETENTION_DAYS', '0', /HERALD_RETENTION_DAYS/],
    ['HERALD_AUDIT_RETENTION_DAYS', '0', /HERALD_AUDIT_RETENTION_DAYS: must be an integer from 1 to 36500/],
    ['HERALD_DISABLE_AFTER_HOURS', '-1', /HERALD_DISABLE_AFTER_HOURS/],
    ['HERALD_LOG_LEVEL', 'loud', /HERALD_LOG_LEVEL: must be one of fatal, error, warn, info, debug, trace, silent/],
    ['HERALD_EMBEDDED_DATABASE', 'maybe', /HERALD_EMBEDDED_DATABASE/],
    ['HERALD_DELIVERY_STATISTICS', 'sometimes', /HERALD_DELIVERY_STATISTICS: must be on or off, got "sometimes"/],
    ['OTEL_EXPORTER_OTLP_ENDPOINT', 'collector:4318', /OTEL_EXPORTER_OTLP_ENDPOINT: must be an http:\/\/ or https:\/\/ URL/],
    ['OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', 'grpc://collector:4317', /OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: must be an http/],
    ['OTEL_EXPORTER_OTLP_PROTOCOL', 'grpc', /OTEL_EXPORTER_OTLP_PROTOCOL: must be http\/protobuf or http\/json \(grpc is not supported\)/],
    ['OTEL_EXPORTER_OTLP_TRACES_PROTOCOL', 'json', /OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: must be http\/protobuf or http\/json/],
    ['OTEL_TRACES_EXPORTER', 'zipkin', /OTEL_TRACES_EXPORTER: must be otlp or none/],
    ['OTEL_SDK_DISABLED', 'yes', /OTEL_SDK_DISABLED: must be true or false/],
  ])('names %s when it is %p', (name, value, message) => {
    const problems = problemsOf({ [name]: value });
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(message);
  });

  describe('traces (PRODUCT.md §16): the standard OTEL_* variables', () => {
    it('are off without an OTLP endpoint, whatever else is set', () => {
      expect(parseHeraldConfig({ OTEL_SERVICE_NAME: 'x', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' }).tracing).toBeNull();
    });

    it('send to the general endpoint plus /v1/traces, over http/protobuf unless told otherwise', () => {
      expect(parseHeraldConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' }).tracing).toEqual({
        tracesUrl: 'http://collector:4318/v1/traces',
        protocol: 'http/protobuf',
        serviceName: null,
      });
      expect(
        parseHeraldConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'https://collector.example/otlp', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' })
          .tracing,
      ).toEqual({ tracesUrl: 'https://collector.example/otlp/v1/traces', protocol: 'http/json', serviceName: null });
    });

    it('prefer the traces-specific endpoint (taken as given) and protocol, and read the service name', () => {
      expect(
        parseHeraldConfig({
          OTEL_EXPORTER_OTLP_ENDPOINT: 'http://general:4318',
          OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://traces:4318/custom/path',
          OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
          OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/json',
          OTEL_SERVICE_NAME: ' herald-api-eu ',
        }).tracing,
      ).toEqual({ tracesUrl: 'http://traces:4318/custom/path', protocol: 'http/json', serviceName: 'herald-api-eu' });
      expect(parseHeraldConfig({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://traces:4318/v1/traces' }).tracing?.tracesUrl).toBe(
        'http://traces:4318/v1/traces',
      );
    });

    it('are off with OTEL_SDK_DISABLED=true or OTEL_TRACES_EXPORTER=none, even with an endpoint', () => {
      const endpoint = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' };
      expect(parseHeraldConfig({ ...endpoint, OTEL_SDK_DISABLED: 'true' }).tracing).toBeNull();
      expect(parseHeraldConfig({ ...endpoint, OTEL_TRACES_EXPORTER: 'none' }).tracing).toBeNull();
      expect(parseHeraldConfig({ ...endpoint, OTEL_SDK_DISABLED: 'false', OTEL_TRACES_EXPORTER: 'otlp' }).tracing).not.toBeNull();
    });
  });

  it('reports every bad variable at once', () => {
    expect(
      problemsOf({ PORT: 'x', HERALD_LOG_LEVEL: 'y' })
        .map((p) => p.split(':')[0])
        .sort(),
    ).toEqual(['HERALD_LOG_LEVEL', 'PORT']);
  });

  it('refuses a lease that is not longer than an attempt', () => {
    expect(problemsOf({ HERALD_DELIVERY_TIMEOUT_SECONDS: '60', HERALD_DELIVERY_LEASE_SECONDS: '60' })[0]).toMatch(
      /HERALD_DELIVERY_LEASE_SECONDS: must be longer than HERALD_DELIVERY_TIMEOUT_SECONDS \(60\)/,
    );
  });

  it('says which variables are wrong in its message', () => {
    expect(() => parseHeraldConfig({ PORT: 'x' })).toThrow(/Invalid configuration:\n {2}- PORT:/);
  });

  describe('parseApiClientConfig', () => {
    it('reads PORT and HERALD_ADMIN_KEY and ignores every other variable, valid or not', () => {
      expect(parseApiClientConfig({ PORT: '4100', HERALD_ADMIN_KEY: 'admin-key-0123456789', HERALD_LOG_LEVEL: 'loud' })).toEqual({
        port: 4100,
        adminKey: 'admin-key-0123456789',
      });
      expect(parseApiClientConfig({})).toEqual({ port: 3000, adminKey: null });
    });

    it('names PORT or HERALD_ADMIN_KEY when it is invalid', () => {
      expect(() => parseApiClientConfig({ PORT: '70000' })).toThrow(/PORT: must be an integer/);
      expect(() => parseApiClientConfig({ HERALD_ADMIN_KEY: 'short' })).toThrow(/HERALD_ADMIN_KEY/);
    });
  });
});
