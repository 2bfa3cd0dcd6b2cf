import type { ConnectionLimits } from '../net/connection-guard';
import { connectionLimits } from './connection-limits';
import { readVariables, type Env, type Flags } from './read';
import { VARIABLES } from './variables';
import { loadRouteStoreSettings, type RouteStoreSettings } from './route-store';
import { BRIDGE_VARIABLES } from './processes';
import { loadServiceSettings, SERVICE_CLIENT_VARIABLE_NAMES, type ServiceSettings } from './service-client';
import {
  loadTemporalConnection,
  TEMPORAL_CONNECTION_VARIABLE_NAMES,
  type TemporalConnectionSettings,
} from './temporal';
import { loadTracingSettings, type TracingSettings } from './tracing';
import { slotCapsOf, type SlotCapSettings } from './worker';

/** The bridge's defaults, for code that builds a BridgeConfig in-process (the local stack). */
export const DEFAULT_BODY_LIMIT_BYTES = VARIABLES.REELFLOW_BRIDGE_BODY_LIMIT.schema.parse(undefined);
export const DEFAULT_WEBHOOK_PATH = VARIABLES.REELFLOW_BRIDGE_PATH.schema.parse(undefined);
/** Well under the service's 10 s handler budget, leaving room for the HTTP round trip. */
/** Undelivered events the inbox holds before deliveries get 503. */
export const DEFAULT_BACKLOG_LIMIT = VARIABLES.REELFLOW_BRIDGE_BACKLOG_LIMIT.schema.parse(undefined);
export const DEFAULT_SIGNAL_TIMEOUT_MS = VARIABLES.REELFLOW_BRIDGE_SIGNAL_TIMEOUT_MS.schema.parse(undefined);
/** The webhook listener's time limits by default; its caps follow the open-files limit. */
export const DEFAULT_BRIDGE_CONNECTION_LIMITS: ConnectionLimits = {
  headersTimeoutMs: VARIABLES.REELFLOW_BRIDGE_REQUEST_TIMEOUT_MS.schema.parse(undefined),
  requestTimeoutMs: VARIABLES.REELFLOW_BRIDGE_REQUEST_TIMEOUT_MS.schema.parse(undefined),
  idleTimeoutMs: VARIABLES.REELFLOW_BRIDGE_IDLE_TIMEOUT_MS.schema.parse(undefined),
};

/** Validated bridge configuration (variables: BRIDGE_VARIABLES in ./processes.ts). */
export interface BridgeConfig {
  secrets: string[];
  /** The Temporal connection (the same loader as the worker's and the CLI's: API key, TLS, mTLS, profiles). */
  temporal: TemporalConnectionSettings;
  host: string;
  port: number;
  path: string;
  bodyLimit: number;
  signalTimeoutMs: number;
  /** Undelivered events held before deliveries are answered 503 (REELFLOW_BRIDGE_BACKLOG_LIMIT). */
  backlogLimit: number;
  /**
   * Time limits and caps of the webhook listener's connections (REELFLOW_BRIDGE_*_TIMEOUT_MS,
   * *_MAX_CONNECTIONS*); DEFAULT_BRIDGE_CONNECTION_LIMITS when absent.
   */
  connections?: ConnectionLimits;
  /** The bridge's own /metrics listener (REELFLOW_BRIDGE_METRICS_PORT); absent: no metrics served. */
  metrics?: { host: string; port: number };
  /** The route store (shared with the workers) and its retention. */
  routeStore: RouteStoreSettings;
  /**
   * The service, when REELFLOW_SERVICE_URL and REELFLOW_API_KEY are set: the bridge then submits the
   * next step a pipeline prepared as soon as a completion is committed (docs/webhook-routing.md).
   */
  service?: ServiceSettings;
  /**
   * The account's caps (REELFLOW_ACCOUNT_CONCURRENCY, REELFLOW_MODEL_CONCURRENCY), the workers' own: the
   * bridge then frees the slot of a job whose terminal webhook it committed and hands it on. Absent: none set.
   */
  slotCaps?: SlotCapSettings;
  logLevel: string;
  /** Tracing (OTEL_EXPORTER_OTLP_*): absent when no endpoint is set. */
  tracing?: TracingSettings;
}

/**
 * Reads and validates the bridge's settings at boot; `flags` (`reelflow bridge --host/--port/--path`)
 * stand for their variables and win over them. Throws one ConfigError naming every bad variable.
 */
export function loadBridgeConfig(env: Env = process.env, flags: Flags = {}): BridgeConfig {
  const own = BRIDGE_VARIABLES.variables.filter(
    (name): name is Exclude<typeof name, (typeof TEMPORAL_CONNECTION_VARIABLE_NAMES)[number]> =>
      !(TEMPORAL_CONNECTION_VARIABLE_NAMES as readonly string[]).includes(name) &&
      !(SERVICE_CLIENT_VARIABLE_NAMES as readonly string[]).includes(name),
  );
  const service = loadServiceSettings(env, false);
  const tracing = loadTracingSettings('bridge', env);
  const e = readVariables(own, env, { required: BRIDGE_VARIABLES.required, flags });
  const connections = connectionLimits(
    {
      requestTimeoutMs: e.REELFLOW_BRIDGE_REQUEST_TIMEOUT_MS,
      idleTimeoutMs: e.REELFLOW_BRIDGE_IDLE_TIMEOUT_MS,
      maxConnections: e.REELFLOW_BRIDGE_MAX_CONNECTIONS,
      maxConnectionsPerAddress: e.REELFLOW_BRIDGE_MAX_CONNECTIONS_PER_ADDRESS,
    },
    'REELFLOW_BRIDGE_MAX_CONNECTIONS_PER_ADDRESS',
    flags,
  );
  return {
    secrets: e.REELFLOW_WEBHOOK_SECRETS,
    temporal: loadTemporalConnection(env),
    host: e.REELFLOW_BRIDGE_HOST,
    port: e.REELFLOW_BRIDGE_PORT,
    path: e.REELFLOW_BRIDGE_PATH,
    bodyLimit: e.REELFLOW_BRIDGE_BODY_LIMIT,
    signalTimeoutMs: e.REELFLOW_BRIDGE_SIGNAL_TIMEOUT_MS,
    backlogLimit: e.REELFLOW_BRIDGE_BACKLOG_LIMIT,
    connections,
    ...(e.REELFLOW_BRIDGE_METRICS_PORT !== undefined
      ? { metrics: { host: e.REELFLOW_BRIDGE_METRICS_HOST, port: e.REELFLOW_BRIDGE_METRICS_PORT } }
      : {}),
    routeStore: loadRouteStoreSettings(env),
    ...(service ? { service } : {}),
    ...withSlotCaps(
      slotCapsOf({ concurrency: e.REELFLOW_ACCOUNT_CONCURRENCY, models: e.REELFLOW_MODEL_CONCURRENCY ?? {} }),
    ),
    logLevel: e.REELFLOW_LOG_LEVEL,
    ...(tracing ? { tracing } : {}),
  };
}

/** `{ slotCaps }` when a cap is set, else nothing. */
const withSlotCaps = (slotCaps: SlotCapSettings | undefined) => (slotCaps ? { slotCaps } : {});
