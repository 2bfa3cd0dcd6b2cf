import { ConfigError } from '../../../src/config/errors';
import { loadServiceConfig } from '../../../src/config/local-service';
// The variables' defaults are the ones the service applies in-process (startLocalService without them).
import { DEFAULT_SERVICE_CONNECTION_LIMITS } from '../../../src/local-service/http/connection-limits';

describe('loadServiceConfig', () => {
  it('needs a data directory and defaults the rest', () => {
    const config = loadServiceConfig({ REELFLOW_SERVICE_DATA_DIR: '/var/lib/svc' });
    expect(config).toMatchObject({
      dataDir: '/var/lib/svc',
      allowPrivateWebhooks: false,
      logger: false,
      render: 'ffmpeg',
    });
    expect(config).not.toHaveProperty('apiKeys');
    expect(config).not.toHaveProperty('quoteLimits');
  });

  it("bounds the listener's connections, with the service's own defaults", () => {
    expect(loadServiceConfig({ REELFLOW_SERVICE_DATA_DIR: '/d' }).connections).toEqual({
      ...DEFAULT_SERVICE_CONNECTION_LIMITS,
    });
    expect(
      loadServiceConfig({
        REELFLOW_SERVICE_DATA_DIR: '/d',
        REELFLOW_SERVICE_REQUEST_TIMEOUT_MS: '60000',
        REELFLOW_SERVICE_IDLE_TIMEOUT_MS: '2000',
        REELFLOW_SERVICE_MAX_CONNECTIONS: '64',
        REELFLOW_SERVICE_MAX_CONNECTIONS_PER_ADDRESS: '16',
      }).connections,
    ).toEqual({
      headersTimeoutMs: 10_000,
      requestTimeoutMs: 60_000,
      idleTimeoutMs: 2_000,
      maxConnections: 64,
      maxConnectionsPerAddress: 16,
    });
    expect(() =>
      loadServiceConfig({
        REELFLOW_SERVICE_DATA_DIR: '/d',
        REELFLOW_SERVICE_MAX_CONNECTIONS: '8',
        REELFLOW_SERVICE_MAX_CONNECTIONS_PER_ADDRESS: '9',
      }),
    ).toThrow(/REELFLOW_SERVICE_MAX_CONNECTIONS_PER_ADDRESS/);
  });

  it('refuses to start without a data directory, naming the variable', () => {
    let error: unknown;
    try {
      loadServiceConfig({});
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).variable).toBe('REELFLOW_SERVICE_DATA_DIR');
  });

  it('reads the optional settings, the quote rate as its own burst', () => {
    const config = loadServiceConfig({
      REELFLOW_SERVICE_DATA_DIR: '/d',
      REELFLOW_SERVICE_CREDITS: '500',
      REELFLOW_SERVICE_QUOTES_PER_MINUTE: '30',
      REELFLOW_SERVICE_LOG: 'true',
      REELFLOW_SERVICE_RENDER: 'stub',
      REELFLOW_SERVICE_EMIT_FAILURE_EVENTS: 'false',
    });
    expect(config).toMatchObject({
      credits: 500,
      quoteLimits: { perMinute: 30, burst: 30 },
      logger: { level: 'info' },
      render: 'stub',
      emitFailureEvents: false,
    });
  });

  it('lets a flag win over its variable', () => {
    expect(
      loadServiceConfig(
        { REELFLOW_SERVICE_DATA_DIR: '/env' },
        { REELFLOW_SERVICE_DATA_DIR: { value: '/flag', flag: '--data-dir' } },
      ).dataDir,
    ).toBe('/flag');
  });
});
