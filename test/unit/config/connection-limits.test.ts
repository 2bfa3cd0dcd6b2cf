import { ConfigError } from '../../../src/config/errors';
import { connectionLimits } from '../../../src/config/connection-limits';

/** A listener's connection limits from its variables, checked at boot. */

describe('connectionLimits', () => {
  const base = {
    requestTimeoutMs: 5_000,
    idleTimeoutMs: 2_000,
    maxConnections: undefined,
    maxConnectionsPerAddress: undefined,
  };

  it('bounds the headers by the whole request and leaves unset caps to the listener', () => {
    expect(connectionLimits(base, 'REELFLOW_BRIDGE_MAX_CONNECTIONS_PER_ADDRESS')).toEqual({
      headersTimeoutMs: 5_000,
      requestTimeoutMs: 5_000,
      idleTimeoutMs: 2_000,
    });
    expect(
      connectionLimits(
        {
          ...base,
          headersTimeoutMs: 10_000,
          requestTimeoutMs: 30_000,
          maxConnections: 100,
          maxConnectionsPerAddress: 100,
        },
        'REELFLOW_SERVICE_MAX_CONNECTIONS_PER_ADDRESS',
      ),
    ).toEqual({
      headersTimeoutMs: 10_000,
      requestTimeoutMs: 30_000,
      idleTimeoutMs: 2_000,
      maxConnections: 100,
      maxConnectionsPerAddress: 100,
    });
  });

  it('refuses a per-address cap above the total cap, naming the variable', () => {
    let error: unknown;
    try {
      connectionLimits(
        { ...base, maxConnections: 10, maxConnectionsPerAddress: 11 },
        'REELFLOW_BRIDGE_MAX_CONNECTIONS_PER_ADDRESS',
      );
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).variable).toBe('REELFLOW_BRIDGE_MAX_CONNECTIONS_PER_ADDRESS');
    expect((error as ConfigError).message).toMatch(/at most the total cap \(10 connections\)/);
  });
});
