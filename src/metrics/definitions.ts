import { Registry, type Counter, type Histogram } from './registry';

/**
 * The metrics reelflow itself exports (the Temporal SDK's own `temporal_*` metrics come from the SDK
 * runtime's Prometheus exporter). One process-wide registry: a process runs a bridge, a worker or both.
 */
export const defaultRegistry = new Registry();

/** Bridge metrics. */
export interface BridgeMetrics {
  /** Deliveries by outcome: accepted, rejected, malformed, unavailable, too_large, bad_request. */
  deliveries: Counter;
  /** Signature verification failures by reason (stale, bad_signature, missing_headers, ...). */
  verificationFailures: Counter;
  /** Seconds from receiving a delivery to Temporal accepting its signal-with-start. */
  signalLatency: Histogram;
}

export function bridgeMetrics(registry: Registry = defaultRegistry): BridgeMetrics {
  return {
    deliveries: registry.counter('reelflow_bridge_deliveries_total', 'Webhook deliveries received by the bridge, by outcome.', ['outcome']),
    verificationFailures: registry.counter('reelflow_bridge_verification_failures_total', 'Webhook deliveries whose signature did not verify, by reason.', ['reason']),
    signalLatency: registry.histogram('reelflow_bridge_signal_latency_seconds', 'Seconds from receiving a verified delivery to Temporal accepting the signal.'),
  };
}

/** Worker (activity) metrics. Job outcomes and credits are counted by the job workflow through the SDK meter. */
export interface WorkerMetrics {
  /** Service calls made by activities, by kind (quote, submit, status, result, cancel) and outcome (ok, error). */
  serviceCalls: Counter;
  /** Status polls made, by the status they returned. */
  polls: Counter;
  /** Jobs submitted, by model. */
  submitted: Counter;
}

export function workerMetrics(registry: Registry = defaultRegistry): WorkerMetrics {
  return {
    serviceCalls: registry.counter('reelflow_service_calls_total', 'Calls to the video-generation service made by activities.', ['kind', 'outcome']),
    polls: registry.counter('reelflow_status_polls_total', 'Status polls made, by the status returned (error when the poll failed).', ['status']),
    submitted: registry.counter('reelflow_jobs_submitted_total', 'Jobs submitted to the service, by model.', ['model']),
  };
}
