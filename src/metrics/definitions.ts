import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

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

/** What each shared gauge reads at scrape time: one source per bridge in the process. */
const gaugeSources = new WeakMap<Gauge, Set<() => number>>();

// A gauge read at scrape time from every source watching it (the largest value: bridges in one
// process count the same store's backlog).
function watchedGauge(registry: Registry, name: string, help: string): Gauge {
  const existing = registry.getSingleMetric(name);
  if (existing instanceof Gauge) return existing;
  const sources = new Set<() => number>();
  const gauge: Gauge = new Gauge({
    name,
    help,
    registers: [registry],
    collect() {
      gauge.set(sources.size === 0 ? 0 : Math.max(...[...sources].map((read) => read())));
    },
  });
  gaugeSources.set(gauge, sources);
  return gauge;
}

/** Adds `read` to the sources of the watched gauge `name` until the returned function is called. */
function watchSource(registry: Registry, name: string, read: () => number): () => void {
  const sources = gaugeSources.get(registry.getSingleMetric(name) as Gauge);
  sources?.add(read);
  return () => sources?.delete(read);
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
    /** Connections the webhook listener closed by its limits: cap, address_cap, refused, idle. */
    connectionsClosed: counter(
      registry,
      'reelflow_bridge_connections_closed_total',
      'Connections the bridge closed by its connection limits, by reason (cap, address_cap, refused, idle).',
      ['reason'],
    ),
    /** Forwarding failures the forwarder retries: temporal_retry (a signal Temporal did not take), round (store or Temporal error). */
    forwardFailures: counter(
      registry,
      'reelflow_bridge_forward_failures_total',
      'Deliveries or forwarder rounds that failed and will be retried, by kind (temporal_retry, round).',
      ['kind'],
    ),
    /** Undelivered events in the inbox (acknowledged, not yet handed to Temporal), as the bridge counts them. */
    inboxBacklog: watchedGauge(
      registry,
      'reelflow_bridge_inbox_backlog',
      'Undelivered events in the route store inbox (acknowledged, not yet signalled), as the bridge last counted them.',
    ),
    /** Seconds the oldest undelivered event has waited (0 when the inbox is empty). */
    inboxOldestAge: watchedGauge(
      registry,
      'reelflow_bridge_inbox_oldest_age_seconds',
      'Seconds the oldest undelivered event in the route store inbox has waited, as the bridge last counted.',
    ),
    /** Reads `backlog` at every scrape until the returned function is called (a bridge's inbox). */
    watchBacklog(backlog: () => number): () => void {
      return watchSource(registry, 'reelflow_bridge_inbox_backlog', backlog);
    },
    /** Reads `age` (seconds) at every scrape until the returned function is called. */
    watchOldestAge(age: () => number): () => void {
      return watchSource(registry, 'reelflow_bridge_inbox_oldest_age_seconds', age);
    },
  };
}

/**
 * The service's answers by call kind and HTTP status (`network`: none arrived), for the client's
 * `onResponse`: what the 429-share alert reads (deploy/prometheus/alerts.yml).
 */
export function serviceResponseMetrics(
  registry: Registry = defaultRegistry,
): (kind: string, status: number | 'network') => void {
  const requests = counter(
    registry,
    'reelflow_service_requests_total',
    'HTTP calls to the video-generation service, by call kind and answer status (network: no answer).',
    ['kind', 'status'],
  );
  return (kind, status) => requests.inc({ kind, status: String(status) });
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
