import { readVariables, type Env } from './read';

/** The variables of tracing: OpenTelemetry's own names, which its SDKs and collectors document. */
export const TRACING_VARIABLE_NAMES = [
  'OTEL_EXPORTER_OTLP_ENDPOINT',
  'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT',
  'OTEL_EXPORTER_OTLP_HEADERS',
  'OTEL_SERVICE_NAME',
] as const;

/** Each process's service name when OTEL_SERVICE_NAME is unset. */
export const DEFAULT_SERVICE_NAMES = {
  worker: 'reelflow-worker',
  bridge: 'reelflow-bridge',
  cli: 'reelflow-cli',
} as const;

/** Where and as what a process exports its spans (OTLP over HTTP, JSON). */
export interface TracingSettings {
  /** The traces URL spans are POSTed to (OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, else `<OTEL_EXPORTER_OTLP_ENDPOINT>/v1/traces`). */
  url: string;
  /** Headers sent with each export (OTEL_EXPORTER_OTLP_HEADERS): may hold a token, never logged. */
  headers: Record<string, string>;
  /** The `service.name` resource attribute (OTEL_SERVICE_NAME, else the process's default). */
  serviceName: string;
}

/**
 * Reads the tracing variables: tracing is on when OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or
 * OTEL_EXPORTER_OTLP_ENDPOINT is set (undefined otherwise). Throws a ConfigError naming a bad variable.
 */
export function loadTracingSettings(
  role: keyof typeof DEFAULT_SERVICE_NAMES,
  env: Env = process.env,
): TracingSettings | undefined {
  const e = readVariables(TRACING_VARIABLE_NAMES, env);
  const url =
    e.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ??
    (e.OTEL_EXPORTER_OTLP_ENDPOINT !== undefined ? `${e.OTEL_EXPORTER_OTLP_ENDPOINT}/v1/traces` : undefined);
  if (url === undefined) return undefined;
  return {
    url,
    headers: e.OTEL_EXPORTER_OTLP_HEADERS ?? {},
    serviceName: e.OTEL_SERVICE_NAME ?? DEFAULT_SERVICE_NAMES[role],
  };
}

/**
 * Where spans go, for logs and `reelflow doctor`: the URL without credentials or query (an endpoint may
 * carry either), the service name, and the names of the export headers (never their values).
 */
export function describeTracing(settings: TracingSettings | undefined): string {
  if (!settings) return 'off (set OTEL_EXPORTER_OTLP_ENDPOINT to export traces)';
  const url = new URL(settings.url);
  const where = `${url.protocol}//${url.host}${url.pathname}`;
  const headers = Object.keys(settings.headers);
  return (
    `OTLP/HTTP to ${where} as ${settings.serviceName}` + (headers.length > 0 ? ` (headers: ${headers.join(', ')})` : '')
  );
}
