import { randomUUID } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { copyFile, mkdir, readdir, readFile, rename, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { Readable } from 'node:stream';
import { hashFile } from './hash';
import { MediaStoreError } from './errors';
import { assertDigest, referrerKey, type MediaStore, type Referrer, type StoredObject } from './types';

/**
 * The filesystem backend: `<root>/objects/<ab>/<sha256>` with a `<sha256>.json` beside it (type,
 * bytes, createdAt), and `<root>/referrers/<sha256>/<pipeline>` marker files whose mtime is the
 * last reference. Writes go to a temporary name and are renamed, so a reader never sees half a file.
 * It cannot serve URLs: references become data URIs inside the activities.
 */
export function createFileStore(rootDir: string): MediaStore {
  const root = resolve(rootDir);
  const objectPath = (sha: string) => join(root, 'objects', sha.slice(0, 2), sha);
  const metaPath = (sha: string) => `${objectPath(sha)}.json`;
  const referrerDir = (sha: string) => join(root, 'referrers', sha);

  async function stat_(sha256: string): Promise<StoredObject | null> {
    assertDigest(sha256);
    try {
      const meta = JSON.parse(await readFile(metaPath(sha256), 'utf8')) as {
        type: string;
        bytes: number;
        createdAt: string;
      };
      return { sha256, type: meta.type, bytes: meta.bytes, createdAt: new Date(meta.createdAt) };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw error;
    }
  }

  return {
    location: `file://${root}`,
    async putFile(file, sha256, type, bytes) {
      assertDigest(sha256);
      if (await stat_(sha256)) return;
      const target = objectPath(sha256);
      await mkdir(join(target, '..'), { recursive: true });
      const temp = `${target}.${randomUUID()}.tmp`;
      try {
        await copyFile(file, temp);
        // The copy is what is kept: check it, not the source, against the address.
        const copied = await hashFile(temp);
        if (copied.sha256 !== sha256 || copied.bytes !== bytes) {
          throw new MediaStoreError(
            'integrity',
            `${file} does not hash to sha256:${sha256} (${bytes} bytes); it changed while being stored`,
          );
        }
        await rename(temp, target);
        // A temporary name of its own: two writers of the same content (identical outputs archived
        // at once) must not rename each other's file away.
        const metaTemp = `${metaPath(sha256)}.${randomUUID()}.tmp`;
        await writeFile(metaTemp, JSON.stringify({ type, bytes, createdAt: new Date().toISOString() }));
        await rename(metaTemp, metaPath(sha256));
      } finally {
        await rm(temp, { force: true });
      }
    },
    stat: stat_,
    async read(sha256, range) {
      if (!(await stat_(sha256)))
        throw new MediaStoreError('not_found', `sha256:${sha256} is not in the media store ${root}`);
      return createReadStream(objectPath(sha256), range ? { start: range.start, end: range.end } : {}) as Readable;
    },
    async signedUrl() {
      return null;
    },
    async addReferrer(sha256, pipeline) {
      assertDigest(sha256);
      const dir = referrerDir(sha256);
      await mkdir(dir, { recursive: true });
      const marker = join(dir, referrerKey(pipeline));
      const now = new Date();
      await writeFile(marker, '');
      await utimes(marker, now, now);
    },
    async referrers(sha256) {
      assertDigest(sha256);
      const dir = referrerDir(sha256);
      const names = await readdir(dir).catch(() => [] as string[]);
      const found: Referrer[] = [];
      for (const name of names) {
        const info = await stat(join(dir, name)).catch(() => null);
        if (info) found.push({ pipeline: decodeURIComponent(name), at: info.mtime });
      }
      return found;
    },
    async *list() {
      const top = await readdir(join(root, 'objects')).catch(() => [] as string[]);
      for (const prefix of top) {
        for (const name of await readdir(join(root, 'objects', prefix)).catch(() => [] as string[])) {
          if (!/^[0-9a-f]{64}$/.test(name)) continue;
          const object = await stat_(name);
          if (object) yield object;
        }
      }
    },
    async delete(sha256) {
      assertDigest(sha256);
      // Metadata first: an object without it is invisible, so a crash in between leaves no half object.
      await rm(metaPath(sha256), { force: true });
      await rm(objectPath(sha256), { force: true });
      await rm(referrerDir(sha256), { recursive: true, force: true });
    },
  };
}
