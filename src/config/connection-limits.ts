import type { ConnectionLimits } from '../net/connection-guard';
import { ConfigError } from './errors';
import { issueFor, type Flags } from './read';

/**
 * A listener's connection limits from its variables: headers must arrive within the request's time
 * limit, and a per-address cap set above the total cap is refused (naming `perAddressVariable`).
 */
export function connectionLimits(
  values: {
    requestTimeoutMs: number;
    idleTimeoutMs: number;
    maxConnections: number | undefined;
    maxConnectionsPerAddress: number | undefined;
    headersTimeoutMs?: number;
  },
  perAddressVariable: 'REELFLOW_BRIDGE_MAX_CONNECTIONS_PER_ADDRESS' | 'REELFLOW_SERVICE_MAX_CONNECTIONS_PER_ADDRESS',
  flags: Flags = {},
): ConnectionLimits {
  const { maxConnections, maxConnectionsPerAddress } = values;
  if (
    maxConnections !== undefined &&
    maxConnectionsPerAddress !== undefined &&
    maxConnectionsPerAddress > maxConnections
  )
    throw new ConfigError([
      issueFor(perAddressVariable, `must be at most the total cap (${maxConnections} connections)`, flags),
    ]);
  return {
    headersTimeoutMs: Math.min(values.headersTimeoutMs ?? values.requestTimeoutMs, values.requestTimeoutMs),
    requestTimeoutMs: values.requestTimeoutMs,
    idleTimeoutMs: values.idleTimeoutMs,
    ...(maxConnections !== undefined ? { maxConnections } : {}),
    ...(maxConnectionsPerAddress !== undefined ? { maxConnectionsPerAddress } : {}),
  };
}
