import {
  guardConnections,
  listenerTimeouts,
  resolveConnectionLimits,
  type ConnectionGuard,
  type ConnectionLimits,
} from '../../net/connection-guard';
import type { Server } from 'node:http';

/**
 * The local service's defaults (REELFLOW_SERVICE_REQUEST_TIMEOUT_MS, REELFLOW_SERVICE_IDLE_TIMEOUT_MS):
 * a request has 30 s to arrive whole (bodies reach 50 MiB of inline data), and a connection that
 * sends nothing for 5 s before or during its request is closed, so a stalled body holds no slot long.
 */
export const DEFAULT_SERVICE_CONNECTION_LIMITS = {
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  idleTimeoutMs: 5_000,
} as const satisfies ConnectionLimits;

/** The Fastify options and the guard of the service's listener, from the options given (defaults filled). */
export function serviceListenerLimits(given: Partial<ConnectionLimits> = {}): {
  fastify: ReturnType<typeof listenerTimeouts>;
  guard: (server: Server) => ConnectionGuard;
} {
  const defined = Object.fromEntries(Object.entries(given).filter(([, value]) => value !== undefined));
  const limits = resolveConnectionLimits({ ...DEFAULT_SERVICE_CONNECTION_LIMITS, ...defined });
  return { fastify: listenerTimeouts(limits), guard: (server) => guardConnections(server, limits) };
}
