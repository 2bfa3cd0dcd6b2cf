import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { MediaStoreSettings } from '../../config/media';
import { MEDIA_LIMITS } from '../../contract';
import { mediaAddress, type MediaRef } from '../reference';
import { createFileStore } from './file-store';
import { hashFile } from './hash';
import { createS3Store } from './s3-store';
import { MediaStoreError } from './errors';
import type { MediaStore } from './types';

export { createFileStore } from './file-store';
export { createS3Store } from './s3-store';
export { hashFile } from './hash';
export { MediaStoreError } from './errors';
export { type MediaStore, type StoredObject } from './types';

/** A store with the signed-URL lifetime it was configured with. */
export interface ConfiguredStore {
  store: MediaStore;
  urlLifetimeSeconds: number;
}

/** Opens the store the settings name (src/config/media.ts). */
export function openMediaStore(settings: MediaStoreSettings): ConfiguredStore {
  if (settings.kind === 'file')
    return { store: createFileStore(settings.dir), urlLifetimeSeconds: settings.urlLifetimeSeconds };
  const { kind: _kind, urlLifetimeSeconds, ...s3 } = settings;
  return { store: createS3Store(s3), urlLifetimeSeconds };
}

/**
 * Puts a local file into the store (hashed while streamed, copied, never whole in memory), records
 * `pipeline` as a referrer when given, and returns its reference.
 */
export async function putMediaFile(
  store: MediaStore,
  file: string,
  type: string,
  pipeline?: string,
): Promise<MediaRef> {
  const { sha256, bytes } = await hashFile(file);
  if (bytes > MEDIA_LIMITS.maxObjectBytes)
    throw new MediaStoreError(
      'too_large',
      `${file} is ${bytes} bytes, more than the ${MEDIA_LIMITS.maxObjectBytes} a media object may have`,
    );
  await store.putFile(file, sha256, type, bytes);
  if (pipeline) await store.addReferrer(sha256, pipeline);
  return { $media: mediaAddress(sha256), type, bytes };
}

/** Puts bytes held in memory (a decoded data URI) into the store, through a temporary file. */
export async function putMediaBytes(
  store: MediaStore,
  bytes: Buffer,
  type: string,
  pipeline?: string,
): Promise<MediaRef> {
  const dir = await mkdtemp(join(tmpdir(), 'reelflow-media-'));
  try {
    const file = join(dir, randomUUID());
    await writeFile(file, bytes);
    return await putMediaFile(store, file, type, pipeline);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
