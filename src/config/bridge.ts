import { readVariables, type Env, type Flags } from './read';
import { VARIABLES } from './variables';
import { BRIDGE_VARIABLES } from './processes';
import {
  loadTemporalConnection,
  TEMPORAL_CONNECTION_VARIABLE_NAMES,
  type TemporalConnectionSettings,
} from './temporal';

/** The bridge's defaults, for code that builds a BridgeConfig in-process (the local stack). */
export const DEFAULT_BODY_LIMIT_BYTES = VARIABLES.REELFLOW_BRIDGE_BODY_LIMIT.schema.parse(undefined);
export const DEFAULT_WEBHOOK_PATH = VARIABLES.REELFLOW_BRIDGE_PATH.schema.parse(undefined);
/** Well under the service's 10 s handler budget, leaving room for the HTTP round trip. */
export const DEFAULT_SIGNAL_TIMEOUT_MS = VARIABLES.REELFLOW_BRIDGE_SIGNAL_TIMEOUT_MS.schema.parse(undefined);

/** Validated bridge configuration (variables: BRIDGE_VARIABLES in ./processes.ts). */
export interface BridgeConfig {
  secrets: string[];
  /** The Temporal connection (the same loader as the worker's and the CLI's: API key, TLS, mTLS, profiles). */
  temporal: TemporalConnectionSettings;
  host: string;
  port: number;
  path: string;
  bodyLimit: number;
  taskQueue: string;
  signalTimeoutMs: number;
  rendezvous: { ttlMs?: number; graceMs?: number };
  logLevel: string;
}

/**
 * Reads and validates the bridge's settings at boot; `flags` (`reelflow bridge --host/--port/--path`)
 * stand for their variables and win over them. Throws one ConfigError naming every bad variable.
 */
export function loadBridgeConfig(env: Env = process.env, flags: Flags = {}): BridgeConfig {
  const own = BRIDGE_VARIABLES.variables.filter(
    (name): name is Exclude<typeof name, (typeof TEMPORAL_CONNECTION_VARIABLE_NAMES)[number]> =>
      !(TEMPORAL_CONNECTION_VARIABLE_NAMES as readonly string[]).includes(name),
  );
  const e = readVariables(own, env, { required: BRIDGE_VARIABLES.required, flags });
  return {
    secrets: e.REELFLOW_WEBHOOK_SECRETS,
    temporal: loadTemporalConnection(env),
    host: e.REELFLOW_BRIDGE_HOST,
    port: e.REELFLOW_BRIDGE_PORT,
    path: e.REELFLOW_BRIDGE_PATH,
    bodyLimit: e.REELFLOW_BRIDGE_BODY_LIMIT,
    taskQueue: e.REELFLOW_BRIDGE_TASK_QUEUE,
    signalTimeoutMs: e.REELFLOW_BRIDGE_SIGNAL_TIMEOUT_MS,
    rendezvous: {
      ...(e.REELFLOW_RENDEZVOUS_TTL_SECONDS !== undefined ? { ttlMs: e.REELFLOW_RENDEZVOUS_TTL_SECONDS * 1000 } : {}),
      ...(e.REELFLOW_RENDEZVOUS_GRACE_SECONDS !== undefined
        ? { graceMs: e.REELFLOW_RENDEZVOUS_GRACE_SECONDS * 1000 }
        : {}),
    },
    logLevel: e.REELFLOW_LOG_LEVEL,
  };
}
