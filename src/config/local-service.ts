import type { ConnectionLimits } from '../net/connection-guard';
import { connectionLimits } from './connection-limits';
import { readVariables, type Env, type Flags } from './read';
import { SERVICE_VARIABLES } from './processes';

import type { RenderMode } from './render-modes';

export { RENDER_MODES, type RenderMode } from './render-modes';

/**
 * The local service process's settings (variables REELFLOW_SERVICE_*, SERVICE_VARIABLES in
 * ./processes.ts; `reelflow service` flags stand for them). The shape of the options
 * `startLocalService` takes, which checks them again (for in-process callers).
 */
export interface ServiceProcessSettings {
  host: string;
  port: number;
  dataDir: string;
  apiKeys?: string[];
  adminKey?: string;
  credits?: number;
  allowPrivateWebhooks: boolean;
  publicUrl?: string;
  concurrencyPerModel?: number;
  emitFailureEvents?: boolean;
  /** Per-key quote rate, also its burst. */
  quoteLimits?: { perMinute: number; burst: number };
  logger: false | { level: 'info' };
  render: RenderMode;
  stubHoldMs?: number;
  stubFixturesDir?: string;
  /** Time limits and caps of the listener's connections (REELFLOW_SERVICE_*_TIMEOUT_MS, *_MAX_CONNECTIONS*). */
  connections: ConnectionLimits;
}

/** Headers of a request to the local service arrive within this (or its whole-request limit, if shorter). */
export const SERVICE_HEADERS_TIMEOUT_MS = 10_000;

/** Reads and validates the local service's settings at boot; throws one ConfigError naming every bad variable (or its flag). */
export function loadServiceConfig(env: Env = process.env, flags: Flags = {}): ServiceProcessSettings {
  const e = readVariables(SERVICE_VARIABLES.variables, env, { required: SERVICE_VARIABLES.required, flags });
  const connections = connectionLimits(
    {
      headersTimeoutMs: SERVICE_HEADERS_TIMEOUT_MS,
      requestTimeoutMs: e.REELFLOW_SERVICE_REQUEST_TIMEOUT_MS,
      idleTimeoutMs: e.REELFLOW_SERVICE_IDLE_TIMEOUT_MS,
      maxConnections: e.REELFLOW_SERVICE_MAX_CONNECTIONS,
      maxConnectionsPerAddress: e.REELFLOW_SERVICE_MAX_CONNECTIONS_PER_ADDRESS,
    },
    'REELFLOW_SERVICE_MAX_CONNECTIONS_PER_ADDRESS',
    flags,
  );
  return {
    host: e.REELFLOW_SERVICE_HOST,
    port: e.REELFLOW_SERVICE_PORT,
    dataDir: e.REELFLOW_SERVICE_DATA_DIR,
    ...(e.REELFLOW_SERVICE_API_KEYS?.length ? { apiKeys: e.REELFLOW_SERVICE_API_KEYS } : {}),
    ...(e.REELFLOW_SERVICE_ADMIN_KEY !== undefined ? { adminKey: e.REELFLOW_SERVICE_ADMIN_KEY } : {}),
    ...(e.REELFLOW_SERVICE_CREDITS !== undefined ? { credits: e.REELFLOW_SERVICE_CREDITS } : {}),
    allowPrivateWebhooks: e.REELFLOW_SERVICE_ALLOW_PRIVATE_WEBHOOKS,
    ...(e.REELFLOW_SERVICE_PUBLIC_URL !== undefined ? { publicUrl: e.REELFLOW_SERVICE_PUBLIC_URL } : {}),
    ...(e.REELFLOW_SERVICE_CONCURRENCY !== undefined ? { concurrencyPerModel: e.REELFLOW_SERVICE_CONCURRENCY } : {}),
    ...(e.REELFLOW_SERVICE_EMIT_FAILURE_EVENTS !== undefined
      ? { emitFailureEvents: e.REELFLOW_SERVICE_EMIT_FAILURE_EVENTS }
      : {}),
    ...(e.REELFLOW_SERVICE_QUOTES_PER_MINUTE !== undefined
      ? {
          quoteLimits: { perMinute: e.REELFLOW_SERVICE_QUOTES_PER_MINUTE, burst: e.REELFLOW_SERVICE_QUOTES_PER_MINUTE },
        }
      : {}),
    logger: e.REELFLOW_SERVICE_LOG ? { level: 'info' } : false,
    render: e.REELFLOW_SERVICE_RENDER,
    ...(e.REELFLOW_SERVICE_STUB_HOLD_MS !== undefined ? { stubHoldMs: e.REELFLOW_SERVICE_STUB_HOLD_MS } : {}),
    ...(e.REELFLOW_SERVICE_STUB_FIXTURES !== undefined ? { stubFixturesDir: e.REELFLOW_SERVICE_STUB_FIXTURES } : {}),
    connections,
  };
}
