import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  ConfigError,
  loadBridgeConfig,
  loadMediaSettings,
  loadServiceConfig,
  loadStackSettings,
  loadTemporalConnection,
  textOf,
  VARIABLES,
  type VariableName,
} from '../../../src/config';
import { SECRET_FILE_VARIABLES } from '../../../src/config/read';
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

/** Every secret variable also reads `<NAME>_FILE` (Docker and Kubernetes secrets). */

const dir = mkdtempSync(join(tmpdir(), 'reelflow-secret-files-'));
let files = 0;
function secretFile(text: string): string {
  const file = join(dir, `secret-${files++}`);
  writeFileSync(file, text);
  return file;
}

const EXPECTED_SECRETS: VariableName[] = [
  'TEMPORAL_API_KEY',
  'TEMPORAL_TLS_CLIENT_KEY_DATA',
  'REELFLOW_API_KEY',
  'REELFLOW_MEDIA_S3_ACCESS_KEY_ID',
  'REELFLOW_MEDIA_S3_SECRET_ACCESS_KEY',
  'REELFLOW_WEBHOOK_SECRETS',
  'REELFLOW_ROUTE_STORE',
  'REELFLOW_SERVICE_API_KEYS',
  'REELFLOW_SERVICE_ADMIN_KEY',
  'OTEL_EXPORTER_OTLP_HEADERS',
];

describe('<NAME>_FILE', () => {
  it('covers the API keys, webhook secrets, S3 keys, the route store URL, the Temporal key and the OTLP headers', () => {
    expect([...SECRET_FILE_VARIABLES].sort()).toEqual([...EXPECTED_SECRETS].sort());
  });

  it.each(EXPECTED_SECRETS)('%s is read from the file %s_FILE names, trimmed', (name) => {
    const file = secretFile('  the-value-of-a-secret\n');
    expect(textOf({ [`${name}_FILE`]: file }, name)).toBe('the-value-of-a-secret');
  });

  it('is refused together with the variable itself, naming both and neither value', () => {
    const file = secretFile('from-file');
    const error = caught(() =>
      textOf({ REELFLOW_API_KEY: 'from-env', REELFLOW_API_KEY_FILE: file }, 'REELFLOW_API_KEY'),
    );
    expect(error.variable).toBe('REELFLOW_API_KEY');
    expect(error.message).toContain('REELFLOW_API_KEY_FILE');
    expect(error.message).not.toMatch(/from-file|from-env/);
  });

  it('a file that cannot be read is a ConfigError naming <NAME>_FILE and the path', () => {
    const missing = join(dir, 'no-such-file');
    const error = caught(() => textOf({ REELFLOW_API_KEY_FILE: missing }, 'REELFLOW_API_KEY'));
    expect(error.variable).toBe('REELFLOW_API_KEY_FILE');
    expect(error.message).toContain(missing);
    expect(error.message).toContain('ENOENT');
  });

  it('an empty file counts as unset, like an empty variable', () => {
    expect(textOf({ REELFLOW_API_KEY_FILE: secretFile('\n') }, 'REELFLOW_API_KEY')).toBeUndefined();
  });

  it('is not read for a variable that is not a secret', () => {
    expect(VARIABLES.REELFLOW_BRIDGE_HOST).not.toHaveProperty('secret');
    expect(textOf({ REELFLOW_BRIDGE_HOST_FILE: secretFile('0.0.0.0') }, 'REELFLOW_BRIDGE_HOST')).toBeUndefined();
  });

  it("reaches the loaders: the bridge's secrets, the media store's keys, the Temporal API key", () => {
    expect(loadBridgeConfig({ REELFLOW_WEBHOOK_SECRETS_FILE: secretFile('whsec_one,whsec_two\n') }).secrets).toEqual([
      'whsec_one',
      'whsec_two',
    ]);
    const media = loadMediaSettings({
      REELFLOW_MEDIA_STORE: 's3://bucket/prefix',
      REELFLOW_MEDIA_S3_ACCESS_KEY_ID_FILE: secretFile('AKIAEXAMPLE\n'),
      REELFLOW_MEDIA_S3_SECRET_ACCESS_KEY_FILE: secretFile('s3-secret\n'),
    });
    expect(JSON.stringify(media)).toContain('AKIAEXAMPLE');
    expect(loadTemporalConnection({ TEMPORAL_API_KEY_FILE: secretFile('tmprl-key\n') }).apiKey).toBe('tmprl-key');
  });
});
