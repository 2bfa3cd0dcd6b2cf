import { resolve } from 'node:path';
import type { S3StoreSettings } from '../media/store/s3-store';
import { parseDurationSeconds } from './duration';

/**
 * Media-store settings from the environment (read through loadEnv / loadMediaSettings only):
 *
 * - REELFLOW_MEDIA_STORE: `file://<dir>` (absolute, or relative to the working directory) or
 *   `s3://<bucket>/<prefix>`; default `file://<REELFLOW_STATE_DIR or .reelflow>/media`, the local stack's.
 * - REELFLOW_MEDIA_S3_ENDPOINT: custom S3 endpoint (MinIO, R2, ...); path-style addressing then.
 * - REELFLOW_MEDIA_S3_REGION: default AWS_REGION, else us-east-1.
 * - REELFLOW_MEDIA_S3_ACCESS_KEY_ID / REELFLOW_MEDIA_S3_SECRET_ACCESS_KEY: both or neither; neither
 *   = the AWS SDK's default credential chain. Never logged.
 * - REELFLOW_MEDIA_S3_FORCE_PATH_STYLE: true/false; default true with an endpoint.
 * - REELFLOW_MEDIA_URL_LIFETIME: lifetime of a signed URL handed to the service (`3600`, `15m`, `2h`;
 *   default 1 h, at most 7 days, the S3 presigning maximum).
 */

export type MediaStoreSettings = { kind: 'file'; dir: string; urlLifetimeSeconds: number } | ({ kind: 's3'; urlLifetimeSeconds: number } & S3StoreSettings);

/** Variables of the media store, for the README's Configuration table and help texts. */
export const MEDIA_ENV_VARIABLES = {
  REELFLOW_MEDIA_STORE: 'media store: file://<dir> or s3://<bucket>/<prefix> (default file://<state dir>/media)',
  REELFLOW_MEDIA_S3_ENDPOINT: 'S3-compatible endpoint URL (MinIO, R2, ...); absent = AWS',
  REELFLOW_MEDIA_S3_REGION: 'S3 region (default AWS_REGION, else us-east-1)',
  REELFLOW_MEDIA_S3_ACCESS_KEY_ID: 'S3 access key id (with the secret; absent = AWS default credential chain)',
  REELFLOW_MEDIA_S3_SECRET_ACCESS_KEY: 'S3 secret access key',
  REELFLOW_MEDIA_S3_FORCE_PATH_STYLE: 'path-style S3 addressing (default true with an endpoint)',
  REELFLOW_MEDIA_URL_LIFETIME: 'lifetime of signed URLs handed to the service (default 1h, max 7d)',
} as const;

const MAX_PRESIGN_SECONDS = 7 * 86_400;

/** A bad media variable: `variable` names it (never its value). */
export class MediaConfigError extends Error {
  constructor(
    message: string,
    readonly variable: string,
  ) {
    super(message);
    this.name = 'MediaConfigError';
  }
}

function get(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const value = env[name]?.trim();
  return value ? value : undefined;
}

/** Reads the media-store settings; throws MediaConfigError naming the variable. */
export function loadMediaSettings(env: NodeJS.ProcessEnv): MediaStoreSettings {
  const lifetimeText = get(env, 'REELFLOW_MEDIA_URL_LIFETIME');
  let urlLifetimeSeconds = 3600;
  if (lifetimeText !== undefined) {
    const seconds = parseDurationSeconds(lifetimeText);
    if (seconds === null || seconds < 1 || seconds > MAX_PRESIGN_SECONDS) {
      throw new MediaConfigError('REELFLOW_MEDIA_URL_LIFETIME: must be a duration from 1s to 7d, such as 3600, 15m or 2h', 'REELFLOW_MEDIA_URL_LIFETIME');
    }
    urlLifetimeSeconds = seconds;
  }
  const store = get(env, 'REELFLOW_MEDIA_STORE');
  if (store === undefined || store.startsWith('file://')) {
    const dir = store ? store.slice('file://'.length) : resolve(get(env, 'REELFLOW_STATE_DIR') ?? '.reelflow', 'media');
    if (!dir) throw new MediaConfigError('REELFLOW_MEDIA_STORE: file:// needs a directory, e.g. file:///var/lib/reelflow/media', 'REELFLOW_MEDIA_STORE');
    return { kind: 'file', dir: resolve(decodeURIComponent(dir)), urlLifetimeSeconds };
  }
  const s3 = /^s3:\/\/([a-z0-9][a-z0-9.-]{1,61}[a-z0-9])(?:\/(.*))?$/.exec(store);
  if (!s3) {
    throw new MediaConfigError('REELFLOW_MEDIA_STORE: must be file://<dir> or s3://<bucket>/<prefix> (bucket: 3-63 lowercase letters, digits, dots, hyphens)', 'REELFLOW_MEDIA_STORE');
  }
  const endpoint = get(env, 'REELFLOW_MEDIA_S3_ENDPOINT');
  if (endpoint !== undefined && !/^https?:\/\/[^/\s]+\/?$/.test(endpoint)) {
    throw new MediaConfigError('REELFLOW_MEDIA_S3_ENDPOINT: must be an http(s) origin such as https://s3.example.com or http://127.0.0.1:9000', 'REELFLOW_MEDIA_S3_ENDPOINT');
  }
  const accessKeyId = get(env, 'REELFLOW_MEDIA_S3_ACCESS_KEY_ID');
  const secretAccessKey = get(env, 'REELFLOW_MEDIA_S3_SECRET_ACCESS_KEY');
  if ((accessKeyId === undefined) !== (secretAccessKey === undefined)) {
    const missing = accessKeyId === undefined ? 'REELFLOW_MEDIA_S3_ACCESS_KEY_ID' : 'REELFLOW_MEDIA_S3_SECRET_ACCESS_KEY';
    throw new MediaConfigError(`${missing}: must be set together with the other S3 credential variable`, missing);
  }
  const pathStyleText = get(env, 'REELFLOW_MEDIA_S3_FORCE_PATH_STYLE')?.toLowerCase();
  if (pathStyleText !== undefined && !['true', 'false', '1', '0'].includes(pathStyleText)) {
    throw new MediaConfigError('REELFLOW_MEDIA_S3_FORCE_PATH_STYLE: must be true or false', 'REELFLOW_MEDIA_S3_FORCE_PATH_STYLE');
  }
  return {
    kind: 's3',
    bucket: s3[1] as string,
    prefix: (s3[2] ?? '').replace(/^\/+|\/+$/g, ''),
    ...(endpoint ? { endpoint: endpoint.replace(/\/+$/, '') } : {}),
    region: get(env, 'REELFLOW_MEDIA_S3_REGION') ?? get(env, 'AWS_REGION') ?? 'us-east-1',
    ...(accessKeyId && secretAccessKey ? { credentials: { accessKeyId, secretAccessKey } } : {}),
    forcePathStyle: pathStyleText !== undefined ? pathStyleText === 'true' || pathStyleText === '1' : endpoint !== undefined,
    urlLifetimeSeconds,
  };
}
