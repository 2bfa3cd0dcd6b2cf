import { ConfigError } from '../../../src/config/errors';
import { loadServiceConfig } from '../../../src/config/local-service';

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
