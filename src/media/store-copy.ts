import { createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { hashFile, MediaStoreError, type MediaStore } from './store';

/** What `copyMediaStore` did. */
export interface MediaCopyReport {
  /** Objects in the source. */
  examined: number;
  /** Objects copied (absent from the target before). */
  copied: number;
  bytesCopied: number;
  /** Referrer records written to the target (every one of every object, copied or not). */
  referrers: number;
}

/**
 * Copies every object of `source` that `target` lacks, with its media type and referrers, checking each
 * object's SHA-256 on the way (`reelflow media backup` / `restore`: docs/operations.md). Objects are
 * never changed once stored, so a copy taken while workers write is consistent object by object, and
 * running it again copies only what is new. Referrers land with the copy's time, so `reelflow media gc`
 * on the target keeps them at least as long as on the source.
 */
export async function copyMediaStore(source: MediaStore, target: MediaStore): Promise<MediaCopyReport> {
  const report: MediaCopyReport = { examined: 0, copied: 0, bytesCopied: 0, referrers: 0 };
  const scratch = await mkdtemp(join(tmpdir(), 'reelflow-media-copy-'));
  try {
    for await (const object of source.list()) {
      report.examined += 1;
      if (!(await target.stat(object.sha256))) {
        await copyObject(source, target, object.sha256, object.type, join(scratch, object.sha256));
        report.copied += 1;
        report.bytesCopied += object.bytes;
      }
      for (const referrer of await source.referrers(object.sha256)) {
        await target.addReferrer(object.sha256, referrer.pipeline);
        report.referrers += 1;
      }
    }
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
  return report;
}

/** One object through a temporary file, refused when its bytes do not hash to its name. */
async function copyObject(source: MediaStore, target: MediaStore, sha256: string, type: string, file: string) {
  await pipeline(await source.read(sha256), createWriteStream(file));
  const actual = await hashFile(file);
  if (actual.sha256 !== sha256)
    throw new MediaStoreError('integrity', `object ${sha256} in ${source.location} hashes to ${actual.sha256}`);
  await target.putFile(file, sha256, type, actual.bytes);
  await rm(file, { force: true });
}
