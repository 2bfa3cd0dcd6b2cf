import { resolve } from 'node:path';
import type { S3StoreSettings } from '../media/store/s3-store';
import { parseDurationSeconds } from './duration';
import { ConfigError } from './errors';
import { readVariables, type Env } from './read';

/**
 * Media-store settings (variables REELFLOW_MEDIA_*, REELFLOW_STATE_DIR and AWS_REGION; the table in
 * docs/configuration.md): a `file://<dir>` store (default `<state dir>/media`, the local stack's) or
 * an `s3://<bucket>/<prefix>` one, and the lifetime of the signed URLs handed to the service.
 */

export type MediaStoreSettings =
  | { kind: 'file'; dir: string; urlLifetimeSeconds: number }
  | ({ kind: 's3'; urlLifetimeSeconds: number } & S3StoreSettings);

const MAX_PRESIGN_SECONDS = 7 * 86_400;

/** The variables of the media store. */
export const MEDIA_VARIABLE_NAMES = [
  'REELFLOW_STATE_DIR',
  'REELFLOW_MEDIA_STORE',
  'REELFLOW_MEDIA_S3_ENDPOINT',
  'REELFLOW_MEDIA_S3_REGION',
  'AWS_REGION',
  'REELFLOW_MEDIA_S3_ACCESS_KEY_ID',
  'REELFLOW_MEDIA_S3_SECRET_ACCESS_KEY',
  'REELFLOW_MEDIA_S3_FORCE_PATH_STYLE',
  'REELFLOW_MEDIA_URL_LIFETIME',
] as const;

/**
 * Reads the media-store settings; throws ConfigError naming the variable. `stateDir` stands for
 * REELFLOW_STATE_DIR (the local stack passes its own).
 */
export function loadMediaSettings(env: Env = process.env, options: { stateDir?: string } = {}): MediaStoreSettings {
  const e = readVariables(MEDIA_VARIABLE_NAMES, env);
  const lifetimeText = e.REELFLOW_MEDIA_URL_LIFETIME;
  let urlLifetimeSeconds = 3600;
  if (lifetimeText !== undefined) {
    const seconds = parseDurationSeconds(lifetimeText);
    if (seconds === null || seconds < 1 || seconds > MAX_PRESIGN_SECONDS) {
      throw ConfigError.of('REELFLOW_MEDIA_URL_LIFETIME', 'must be a duration from 1s to 7d, such as 3600, 15m or 2h');
    }
    urlLifetimeSeconds = seconds;
  }
  const store = e.REELFLOW_MEDIA_STORE;
  if (store === undefined || store.startsWith('file://')) {
    const dir = store
      ? store.slice('file://'.length)
      : resolve(options.stateDir ?? e.REELFLOW_STATE_DIR ?? '.reelflow', 'media');
    if (!dir)
      throw ConfigError.of('REELFLOW_MEDIA_STORE', 'file:// needs a directory, e.g. file:///var/lib/reelflow/media');
    return { kind: 'file', dir: resolve(decodeURIComponent(dir)), urlLifetimeSeconds };
  }
  const s3 = /^s3:\/\/([a-z0-9][a-z0-9.-]{1,61}[a-z0-9])(?:\/(.*))?$/.exec(store);
  if (!s3) {
    throw ConfigError.of(
      'REELFLOW_MEDIA_STORE',
      'must be file://<dir> or s3://<bucket>/<prefix> (bucket: 3-63 lowercase letters, digits, dots, hyphens)',
    );
  }
  const endpoint = e.REELFLOW_MEDIA_S3_ENDPOINT;
  if (endpoint !== undefined && !/^https?:\/\/[^/\s]+\/?$/.test(endpoint)) {
    throw ConfigError.of(
      'REELFLOW_MEDIA_S3_ENDPOINT',
      'must be an http(s) origin such as https://s3.example.com or http://127.0.0.1:9000',
    );
  }
  const accessKeyId = e.REELFLOW_MEDIA_S3_ACCESS_KEY_ID;
  const secretAccessKey = e.REELFLOW_MEDIA_S3_SECRET_ACCESS_KEY;
  if ((accessKeyId === undefined) !== (secretAccessKey === undefined)) {
    const missing =
      accessKeyId === undefined ? 'REELFLOW_MEDIA_S3_ACCESS_KEY_ID' : 'REELFLOW_MEDIA_S3_SECRET_ACCESS_KEY';
    throw ConfigError.of(missing, 'must be set together with the other S3 credential variable');
  }
  return {
    kind: 's3',
    bucket: s3[1] as string,
    prefix: (s3[2] ?? '').replace(/^\/+|\/+$/g, ''),
    ...(endpoint ? { endpoint: endpoint.replace(/\/+$/, '') } : {}),
    region: e.REELFLOW_MEDIA_S3_REGION ?? e.AWS_REGION ?? 'us-east-1',
    ...(accessKeyId && secretAccessKey ? { credentials: { accessKeyId, secretAccessKey } } : {}),
    forcePathStyle: e.REELFLOW_MEDIA_S3_FORCE_PATH_STYLE ?? endpoint !== undefined,
    urlLifetimeSeconds,
  };
}
