import { collectDefaultMetrics, Counter, Histogram, Registry } from 'prom-client';

/** Content type of the Prometheus text exposition format that every /metrics of reelflow serves. */
export const PROMETHEUS_CONTENT_TYPE = Registry.PROMETHEUS_CONTENT_TYPE;

/** Default buckets in seconds, 5 ms to 10 s: request and signal latencies. */
export const DEFAULT_SECONDS_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/**
 * A prom-client registry with Node's process metrics (CPU, resident memory, heap, GC, event-loop
 * lag, handles) registered once, so every /metrics of a bridge or worker shows the health of the
 * process beside reelflow's own counters.
 */
export function createRegistry(): Registry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  return registry;
}

/**
 * The metrics reelflow itself exports (the Temporal SDK's own `temporal_*` metrics come from the SDK
 * runtime's Prometheus exporter). One process-wide registry: a process runs a bridge, a worker or both.
 */
export const defaultRegistry = createRegistry();

// A metric may be declared by several bridges or workers in one process (tests, the local stack):
// the first declaration wins and later ones share its series.
function counter(registry: Registry, name: string, help: string, labelNames: string[]): Counter {
  const existing = registry.getSingleMetric(name);
  if (existing instanceof Counter) return existing;
  return new Counter({ name, help, labelNames, registers: [registry] });
}

function histogram(registry: Registry, name: string, help: string): Histogram {
  const existing = registry.getSingleMetric(name);
  if (existing instanceof Histogram) return existing;
  return new Histogram({ name, help, buckets: DEFAULT_SECONDS_BUCKETS, registers: [registry] });
}

/** Bridge metrics (each member documents itself; the type is what this returns). */
export function bridgeMetrics(registry: Registry = defaultRegistry) {
  return {
    /** Deliveries by outcome: accepted, rejected, malformed, unavailable, too_large, bad_request. */
    deliveries: counter(
      registry,
      'reelflow_bridge_deliveries_total',
      'Webhook deliveries received by the bridge, by outcome.',
      ['outcome'],
    ),
    /** Signature verification failures by reason (stale, bad_signature, missing_headers, ...). */
    verificationFailures: counter(
      registry,
      'reelflow_bridge_verification_failures_total',
      'Webhook deliveries whose signature did not verify, by reason.',
      ['reason'],
    ),
    /** Seconds from receiving a delivery to Temporal accepting its signal-with-start. */
    signalLatency: histogram(
      registry,
      'reelflow_bridge_signal_latency_seconds',
      'Seconds from receiving a verified delivery to Temporal accepting the signal.',
    ),
  };
}

/** Worker (activity) metrics. Job outcomes and credits are counted by the workflow through the SDK meter. */
export function workerMetrics(registry: Registry = defaultRegistry) {
  return {
    /** Service calls made by activities, by kind (quote, submit, status, result, cancel) and outcome (ok, error). */
    serviceCalls: counter(
      registry,
      'reelflow_service_calls_total',
      'Calls to the video-generation service made by activities.',
      ['kind', 'outcome'],
    ),
    /** Status polls made, by the status they returned. */
    polls: counter(
      registry,
      'reelflow_status_polls_total',
      'Status polls made, by the status returned (error when the poll failed).',
      ['status'],
    ),
    /** Jobs submitted, by model. */
    submitted: counter(registry, 'reelflow_jobs_submitted_total', 'Jobs submitted to the service, by model.', [
      'model',
    ]),
  };
}
export type WorkerMetrics = ReturnType<typeof workerMetrics>;
