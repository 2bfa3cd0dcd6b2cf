import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  ConfigError,
  loadBridgeConfig,
  loadMediaSettings,
  loadTemporalConnection,
  textOf,
  VARIABLES,
  type VariableName,
} from '../../../src/config';
import { SECRET_FILE_VARIABLES } from '../../../src/config/read';

/** Every secret variable also reads `<NAME>_FILE` (Docker and Kubernetes secrets). */

const dir = mkdtempSync(join(tmpdir(), 'reelflow-secret-files-'));
let files = 0;
function secretFile(text: string): string {
  const file = join(dir, `secret-${files++}`);
  writeFileSync(file, text);
  return file;
}

function caught(fn: () => unknown): ConfigError {
  try {
    fn();
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error('expected a ConfigError');
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
];

describe('<NAME>_FILE', () => {
  it('covers the API keys, webhook secrets, S3 keys, the route store URL and the Temporal key', () => {
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
