import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { copyMediaStore } from '../../../src/media/store-copy';
import { createFileStore, MediaStoreError, putMediaBytes } from '../../../src/media/store';

/** A media backup between real filesystem stores: objects, types and referrers; again copies only what is new. */

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reelflow-media-copy-'));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

const objectsOf = async (store: ReturnType<typeof createFileStore>) => {
  const found: { sha256: string; type: string; bytes: number }[] = [];
  for await (const o of store.list()) found.push({ sha256: o.sha256, type: o.type, bytes: o.bytes });
  return found.sort((a, b) => a.sha256.localeCompare(b.sha256));
};

describe('copyMediaStore', () => {
  it('copies every object with its type and referrers, and a second run only what is new', async () => {
    const source = createFileStore(path.join(dir, 'source'));
    const backup = createFileStore(path.join(dir, 'backup'));
    const png = await putMediaBytes(source, Buffer.from('png bytes'), 'image/png', 'pipeline-a');
    await source.addReferrer(png.$media.slice('sha256:'.length), 'pipeline-b');
    await putMediaBytes(source, Buffer.from('wav bytes'), 'audio/wav', 'pipeline-c');

    expect(await copyMediaStore(source, backup)).toEqual({ examined: 2, copied: 2, bytesCopied: 18, referrers: 3 });
    expect(await objectsOf(backup)).toEqual(await objectsOf(source));
    const sha = png.$media.slice('sha256:'.length);
    expect((await backup.referrers(sha)).map((r) => r.pipeline).sort()).toEqual(['pipeline-a', 'pipeline-b']);
    const chunks: Buffer[] = [];
    for await (const chunk of await backup.read(sha)) chunks.push(chunk as Buffer);
    expect(Buffer.concat(chunks).toString()).toBe('png bytes');

    await putMediaBytes(source, Buffer.from('later'), 'video/mp4', 'pipeline-d');
    expect(await copyMediaStore(source, backup)).toMatchObject({ examined: 3, copied: 1, bytesCopied: 5 });
  });

  it('refuses an object whose bytes do not match its name, and copies nothing under it', async () => {
    const sourceDir = path.join(dir, 'source');
    const source = createFileStore(sourceDir);
    const ref = await putMediaBytes(source, Buffer.from('original'), 'image/png');
    const sha = ref.$media.slice('sha256:'.length);
    fs.writeFileSync(path.join(sourceDir, 'objects', sha.slice(0, 2), sha), 'tampered');
    const backup = createFileStore(path.join(dir, 'backup'));
    await expect(copyMediaStore(source, backup)).rejects.toThrow(MediaStoreError);
    expect(await backup.stat(sha)).toBeNull();
  });
});
