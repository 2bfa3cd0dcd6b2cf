import * as path from 'node:path';
import { ConfigError } from '../../../src/config/errors';
import { loadMediaSettings } from '../../../src/config/media';

function variableOf(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    if (error instanceof ConfigError) return error.variable;
    throw error;
  }
  throw new Error('expected a ConfigError');
}

describe('loadMediaSettings', () => {
  it('defaults to a file store under the state directory, signed URLs for an hour', () => {
    expect(loadMediaSettings({ REELFLOW_STATE_DIR: '/state' })).toEqual({
      kind: 'file',
      dir: path.resolve('/state/media'),
      urlLifetimeSeconds: 3600,
    });
    expect(loadMediaSettings({ REELFLOW_STATE_DIR: '/state' }, { stateDir: '/stack' })).toMatchObject({
      dir: path.resolve('/stack/media'),
    });
  });

  it('reads a file:// store, its path decoded', () => {
    expect(loadMediaSettings({ REELFLOW_MEDIA_STORE: 'file:///srv/media%20store' })).toMatchObject({
      kind: 'file',
      dir: '/srv/media store',
    });
  });

  it('reads an s3:// store: bucket, prefix, region, path style with an endpoint', () => {
    expect(
      loadMediaSettings({
        REELFLOW_MEDIA_STORE: 's3://reelflow-media/prod/outputs/',
        REELFLOW_MEDIA_S3_ENDPOINT: 'http://127.0.0.1:9000/',
        AWS_REGION: 'eu-west-1',
        REELFLOW_MEDIA_URL_LIFETIME: '15m',
      }),
    ).toEqual({
      kind: 's3',
      bucket: 'reelflow-media',
      prefix: 'prod/outputs',
      endpoint: 'http://127.0.0.1:9000',
      region: 'eu-west-1',
      forcePathStyle: true,
      urlLifetimeSeconds: 900,
    });
  });

  it('names the variable at fault', () => {
    expect(variableOf(() => loadMediaSettings({ REELFLOW_MEDIA_STORE: 'gs://bucket' }))).toBe('REELFLOW_MEDIA_STORE');
    expect(variableOf(() => loadMediaSettings({ REELFLOW_MEDIA_STORE: 's3://Bad_Bucket' }))).toBe(
      'REELFLOW_MEDIA_STORE',
    );
    expect(variableOf(() => loadMediaSettings({ REELFLOW_MEDIA_URL_LIFETIME: '8d' }))).toBe(
      'REELFLOW_MEDIA_URL_LIFETIME',
    );
    expect(
      variableOf(() =>
        loadMediaSettings({ REELFLOW_MEDIA_STORE: 's3://b-1/p', REELFLOW_MEDIA_S3_ENDPOINT: 's3.test' }),
      ),
    ).toBe('REELFLOW_MEDIA_S3_ENDPOINT');
  });

  it('needs both S3 credentials or neither, naming the missing one', () => {
    expect(
      variableOf(() =>
        loadMediaSettings({ REELFLOW_MEDIA_STORE: 's3://b-1', REELFLOW_MEDIA_S3_ACCESS_KEY_ID: 'AKIA' }),
      ),
    ).toBe('REELFLOW_MEDIA_S3_SECRET_ACCESS_KEY');
  });
});
