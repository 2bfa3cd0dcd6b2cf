import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import { pipeline } from 'node:stream/promises';
import { digestOf, type ArchivedOutput } from './reference';
import { MediaStoreError, type MediaStore } from './store';

/**
 * Copies an archived output out of the media store into `file`, checking its SHA-256 on the way;
 * returns its size. Throws MediaStoreError: `not_found` when the store no longer holds it (read the
 * service URL instead), `integrity` when the reference is no address or the bytes do not match it.
 * Used by `reelflow outputs` and `reelflow report`.
 */
export async function copyArchivedOutput(store: MediaStore, ref: ArchivedOutput, file: string): Promise<number> {
  const sha = digestOf(ref.$media);
  if (!sha) throw new MediaStoreError('integrity', `${ref.$media} is not a media address`);
  const hash = createHash('sha256');
  let bytes = 0;
  const source = await store.read(sha);
  await pipeline(
    source,
    async function* (chunks: AsyncIterable<Buffer>) {
      for await (const chunk of chunks) {
        hash.update(chunk);
        bytes += chunk.length;
        yield chunk;
      }
    },
    fs.createWriteStream(file),
  );
  if (hash.digest('hex') !== sha)
    throw new MediaStoreError(
      'integrity',
      `the archived copy of ${ref.file_name} does not match ${ref.$media}; the store is damaged`,
    );
  return bytes;
}
