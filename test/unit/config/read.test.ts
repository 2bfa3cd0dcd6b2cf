import { ConfigError, loadBridgeConfig, loadServiceConfig, loadStackSettings, textOf } from '../../../src/config';
import * as path from 'node:path';

/** The one empty-value rule, flags standing for variables, and one ConfigError for every process. */

function caught(fn: () => unknown): ConfigError {
  try {
    fn();
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error('expected a ConfigError');
}

describe('the empty-value rule', () => {
  it.each([[undefined], [''], ['   '], ['\t\n']])('%j counts as unset', (value) => {
    expect(textOf({ REELFLOW_BRIDGE_HOST: value }, 'REELFLOW_BRIDGE_HOST')).toBeUndefined();
  });

  it('trims a set value before parsing it', () => {
    expect(textOf({ REELFLOW_BRIDGE_HOST: ' 0.0.0.0 ' }, 'REELFLOW_BRIDGE_HOST')).toBe('0.0.0.0');
    expect(loadBridgeConfig({ REELFLOW_WEBHOOK_SECRETS: 'a', REELFLOW_BRIDGE_PORT: ' 9000 ' }).port).toBe(9000);
  });

  it('an empty value takes the default in every process, and a required one is refused as unset', () => {
    expect(
      loadBridgeConfig({ REELFLOW_WEBHOOK_SECRETS: 'a', REELFLOW_BRIDGE_PORT: '', TEMPORAL_NAMESPACE: ' ' }),
    ).toMatchObject({ port: 8787, temporal: { namespace: 'default' } });
    expect(
      loadServiceConfig({ REELFLOW_SERVICE_DATA_DIR: '/d', REELFLOW_SERVICE_PORT: '', REELFLOW_SERVICE_LOG: '' }),
    ).toMatchObject({ port: 0, logger: false });
    expect(caught(() => loadServiceConfig({ REELFLOW_SERVICE_DATA_DIR: '  ' })).message).toMatch(
      /^REELFLOW_SERVICE_DATA_DIR: must be set/,
    );
  });
});

describe('ConfigError', () => {
  it('has a stable code, names every bad variable once, and never echoes a value', () => {
    const error = caught(() =>
      loadBridgeConfig({
        REELFLOW_WEBHOOK_SECRETS: 'whsec_topsecret',
        REELFLOW_BRIDGE_PORT: 'whsec_other',
        REELFLOW_BRIDGE_PATH: 'nope',
      }),
    );
    expect(error.code).toBe('config_invalid');
    expect(error.variable).toBe('REELFLOW_BRIDGE_PORT');
    expect(error.variables).toEqual(['REELFLOW_BRIDGE_PORT', 'REELFLOW_BRIDGE_PATH']);
    expect(error.message).toBe(
      'REELFLOW_BRIDGE_PORT: must be a port number 0-65535 (0 picks a free one); REELFLOW_BRIDGE_PATH: must be an absolute path like /webhooks',
    );
    expect(error.message).not.toMatch(/whsec|nope/);
  });
});

describe('flags stand for variables', () => {
  it('a flag wins over its variable and is named in the error', () => {
    expect(
      loadBridgeConfig(
        { REELFLOW_WEBHOOK_SECRETS: 'a', REELFLOW_BRIDGE_PORT: '9000' },
        { REELFLOW_BRIDGE_PORT: { flag: '--port', value: '0' } },
      ).port,
    ).toBe(0);
    const error = caught(() =>
      loadServiceConfig(
        {},
        {
          REELFLOW_SERVICE_DATA_DIR: { flag: '--data-dir', value: '/d' },
          REELFLOW_SERVICE_CONCURRENCY: { flag: '--concurrency', value: '0' },
        },
      ),
    );
    expect(error.variable).toBe('REELFLOW_SERVICE_CONCURRENCY');
    expect(error.message).toBe('REELFLOW_SERVICE_CONCURRENCY: (--concurrency) must be at least 1');
  });

  it('the local stack: --state-dir and --auto-ports stand for REELFLOW_STATE_DIR and REELFLOW_DEV_PORTS=auto', () => {
    expect(loadStackSettings({})).toEqual({ stateDir: path.resolve('.reelflow'), autoPorts: false });
    expect(loadStackSettings({ REELFLOW_STATE_DIR: '/srv/a', REELFLOW_DEV_PORTS: 'auto' })).toEqual({
      stateDir: '/srv/a',
      autoPorts: true,
    });
    expect(
      loadStackSettings(
        { REELFLOW_STATE_DIR: '/srv/a' },
        { REELFLOW_STATE_DIR: { flag: '--state-dir', value: '/srv/b' } },
      ).stateDir,
    ).toBe('/srv/b');
    expect(caught(() => loadStackSettings({ REELFLOW_DEV_PORTS: 'yes' })).message).toBe(
      'REELFLOW_DEV_PORTS: must be auto (or unset)',
    );
  });
});
