import { ConfigError, loadBridgeConfig, loadWorkerConfig } from '../../../src/config';
import { describeTracing, loadTracingSettings } from '../../../src/config/tracing';

/** Tracing's variables: OpenTelemetry's own names, read and checked at boot (src/config/tracing.ts). */

const caught = (work: () => unknown): ConfigError => {
  try {
    work();
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error('no ConfigError');
};

describe('loadTracingSettings', () => {
  it('is off without an endpoint', () => {
    expect(loadTracingSettings('worker', {})).toBeUndefined();
    expect(
      loadTracingSettings('worker', { OTEL_SERVICE_NAME: 'x', OTEL_EXPORTER_OTLP_ENDPOINT: '  ' }),
    ).toBeUndefined();
  });

  it('exports to <endpoint>/v1/traces as the process, or to the traces endpoint itself', () => {
    expect(loadTracingSettings('bridge', { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318/' })).toEqual({
      url: 'http://127.0.0.1:4318/v1/traces',
      headers: {},
      serviceName: 'reelflow-bridge',
    });
    expect(
      loadTracingSettings('cli', {
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318',
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://collector.example/otlp/traces',
        OTEL_SERVICE_NAME: 'studio-cli',
      }),
    ).toEqual({ url: 'https://collector.example/otlp/traces', headers: {}, serviceName: 'studio-cli' });
    expect(
      loadTracingSettings('worker', { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://c:4318/v1/traces' })?.serviceName,
    ).toBe('reelflow-worker');
  });

  it('reads the export headers, values percent-decoded', () => {
    const settings = loadTracingSettings('worker', {
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318',
      OTEL_EXPORTER_OTLP_HEADERS: 'Authorization=Bearer%20tok-123, x-tenant=7',
    });
    expect(settings?.headers).toEqual({ authorization: 'Bearer tok-123', 'x-tenant': '7' });
  });

  it('refuses a bad endpoint or header pair, naming the variable and never the header text', () => {
    expect(caught(() => loadTracingSettings('worker', { OTEL_EXPORTER_OTLP_ENDPOINT: 'grpc://c:4317' })).variable).toBe(
      'OTEL_EXPORTER_OTLP_ENDPOINT',
    );
    const error = caught(() =>
      loadTracingSettings('worker', {
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318',
        OTEL_EXPORTER_OTLP_HEADERS: 'authorization=Bearer%20ok,secret-token-without-a-key',
      }),
    );
    expect(error.variable).toBe('OTEL_EXPORTER_OTLP_HEADERS');
    expect(error.message).toContain('pair 2');
    expect(error.message).not.toMatch(/secret-token|Bearer/);
  });

  it('is part of the worker and bridge configuration, checked at boot', () => {
    const service = { REELFLOW_SERVICE_URL: 'http://127.0.0.1:8710', REELFLOW_API_KEY: 'rfk_test' };
    expect(loadWorkerConfig(service).tracing).toBeUndefined();
    expect(loadWorkerConfig({ ...service, OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' }).tracing?.url).toBe(
      'http://c:4318/v1/traces',
    );
    const bridge = { REELFLOW_WEBHOOK_SECRETS: 'whsec_test' };
    expect(loadBridgeConfig({ ...bridge, OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' }).tracing?.serviceName).toBe(
      'reelflow-bridge',
    );
    expect(() => loadBridgeConfig({ ...bridge, OTEL_EXPORTER_OTLP_HEADERS: 'no pair' })).toThrow(ConfigError);
  });
});

describe('describeTracing', () => {
  it('says where spans go without credentials, query or header values', () => {
    expect(describeTracing(undefined)).toMatch(/^off/);
    const text = describeTracing({
      url: 'https://user:pa55@collector.example:4318/v1/traces?token=abc',
      headers: { authorization: 'Bearer tok-123' },
      serviceName: 'reelflow-worker',
    });
    expect(text).toBe(
      'OTLP/HTTP to https://collector.example:4318/v1/traces as reelflow-worker (headers: authorization)',
    );
  });
});
