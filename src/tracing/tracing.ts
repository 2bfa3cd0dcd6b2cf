import type * as Api from '@opentelemetry/api';
import type * as TraceBase from '@opentelemetry/sdk-trace-base';
import type * as Resources from '@opentelemetry/resources';
import type * as OtlpHttp from '@opentelemetry/exporter-trace-otlp-http';
import type * as Conventions from '@opentelemetry/semantic-conventions';
import type * as TemporalOtel from '@temporalio/interceptors-opentelemetry';
import { requireOptional } from '../config/optional-packages';
import { packageVersion } from '../config/package-version';
import type { TracingSettings } from '../config/tracing';
import { AsyncLocalStorageContextManager } from './context-manager';

/**
 * The process's tracing, once started: the loaded OpenTelemetry API, reelflow's tracer, and what
 * Temporal's interceptors need (the span processor and resource their workflow span sink exports through).
 */
export interface Tracing {
  readonly api: typeof Api;
  readonly tracer: Api.Tracer;
  readonly processor: TraceBase.SpanProcessor;
  readonly resource: Resources.Resource;
  /** Temporal's interceptors package, loaded with tracing. */
  readonly temporal: typeof TemporalOtel;
  readonly settings: TracingSettings;
  /** Exports every span ended so far (tests; shutdown does it too). */
  flush(): Promise<void>;
}

let active: Tracing | undefined;
let stop: (() => Promise<void>) | undefined;

/** The process's tracing when started, else undefined (every reelflow span is then skipped). */
export function activeTracing(): Tracing | undefined {
  return active;
}

/** Spans are exported in batches of up to this many, at least every EXPORT_DELAY_MS. */
const MAX_EXPORT_BATCH = 512;
const EXPORT_DELAY_MS = 2_000;

/**
 * Starts the process's tracing (idempotent: a second call returns the first's): loads the OpenTelemetry
 * packages (a MissingPackageError names one that is not installed), exports over OTLP/HTTP (JSON) to
 * `settings.url` through a batch span processor, and registers the tracer provider, W3C trace-context
 * propagation and an AsyncLocalStorage context manager process-wide. Call `stopTracing` at shutdown.
 */
export function startTracing(settings: TracingSettings): Tracing {
  if (active) return active;
  // A dependency of reelflow (prom-client brings it too), loaded only once tracing starts.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const api = require('@opentelemetry/api') as typeof Api;
  const base = requireOptional<typeof TraceBase>('@opentelemetry/sdk-trace-base');
  const { Resource } = requireOptional<typeof Resources>('@opentelemetry/resources');
  const { OTLPTraceExporter } = requireOptional<typeof OtlpHttp>('@opentelemetry/exporter-trace-otlp-http');
  const conventions = requireOptional<typeof Conventions>('@opentelemetry/semantic-conventions');
  const temporal = requireOptional<typeof TemporalOtel>('@temporalio/interceptors-opentelemetry');
  const resource = new Resource({
    [conventions.ATTR_SERVICE_NAME]: settings.serviceName,
    [conventions.ATTR_SERVICE_VERSION]: packageVersion(),
  });
  const exporter = new OTLPTraceExporter({ url: settings.url, headers: { ...settings.headers } });
  const processor = new base.BatchSpanProcessor(exporter, {
    maxExportBatchSize: MAX_EXPORT_BATCH,
    scheduledDelayMillis: EXPORT_DELAY_MS,
  });
  const provider = new base.BasicTracerProvider({ resource, spanProcessors: [processor] });
  provider.register({ contextManager: new AsyncLocalStorageContextManager(api.ROOT_CONTEXT) });
  const tracing: Tracing = {
    api,
    tracer: provider.getTracer('reelflow', packageVersion()),
    processor,
    resource,
    temporal,
    settings,
    flush: () => provider.forceFlush(),
  };
  active = tracing;
  stop = async () => {
    await provider.shutdown();
    api.trace.disable();
    api.context.disable();
    api.propagation.disable();
  };
  return tracing;
}

/** Exports what is left and unregisters the process's tracing (a no-op when it is off). */
export async function stopTracing(): Promise<void> {
  const stopping = stop;
  active = undefined;
  stop = undefined;
  await stopping?.();
}
