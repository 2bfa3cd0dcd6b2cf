import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { downloadBatchOutputs, type BatchOutputsProgress } from '../../../../src/cli/lib/batch-outputs';
import { CliError } from '../../../../src/cli/lib/errors';
import { putMediaBytes, createFileStore, type MediaStore } from '../../../../src/media/store';
import type { BatchItemResult } from '../../../../src/workflows/batch-types';

let dir: string;
let store: MediaStore;
beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reelflow-batch-outputs-'));
  store = createFileStore(path.join(dir, 'media'));
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** A completed item whose final output was archived with `content`. */
async function archivedItem(name: string, content: string): Promise<BatchItemResult> {
  const ref = await putMediaBytes(store, Buffer.from(content), 'video/mp4', `pipeline/${name}`);
  const url = `https://service.example/files/${name}/out.mp4`;
  return {
    name,
    workflowId: `pipeline/${name}`,
    status: 'completed',
    finalOutputUrl: url,
    finalOutput: { ...ref, url, file_name: 'out.mp4' },
  };
}

describe('downloading a batch’s final outputs', () => {
  it('copies each archived output with bounded parallelism, then skips files whose SHA-256 matches', async () => {
    const items = await Promise.all(['a', 'b', 'c', 'd', 'e'].map((n) => archivedItem(`item-${n}`, `video ${n}`)));
    const failed: BatchItemResult = { name: 'item-x', workflowId: 'pipeline/item-x', status: 'failed', error: 'no' };
    const to = path.join(dir, 'out');
    const seen: BatchOutputsProgress[] = [];
    const first = await downloadBatchOutputs([...items, failed], to, {
      store,
      parallel: 2,
      onProgress: (p) => seen.push(p),
    });
    expect(first.map((f) => [path.basename(f.file), f.from])).toEqual(
      ['a', 'b', 'c', 'd', 'e'].map((n) => [`item-${n}.mp4`, 'archive']),
    );
    expect(fs.readFileSync(path.join(to, 'item-c.mp4'), 'utf8')).toBe('video c');
    expect(seen.map((p) => p.done)).toEqual([1, 2, 3, 4, 5]);
    expect(seen.at(-1)).toMatchObject({ total: 5, skipped: 0 });
    expect(fs.readdirSync(to).filter((f) => f.endsWith('.part'))).toEqual([]);

    // Resumed: one file damaged, one gone; the others are skipped by their digest.
    fs.writeFileSync(path.join(to, 'item-b.mp4'), 'half');
    fs.rmSync(path.join(to, 'item-d.mp4'));
    const again = await downloadBatchOutputs(items, to, { store, parallel: 3 });
    expect(Object.fromEntries(again.map((f) => [f.name, f.from]))).toEqual({
      'item-a': 'skipped',
      'item-b': 'archive',
      'item-c': 'skipped',
      'item-d': 'archive',
      'item-e': 'skipped',
    });
    expect(fs.readFileSync(path.join(to, 'item-b.mp4'), 'utf8')).toBe('video b');
  });

  it('refuses a service URL the address rules do not allow when the archive has no copy', async () => {
    const item: BatchItemResult = {
      name: 'unarchived',
      workflowId: 'pipeline/unarchived',
      status: 'completed',
      finalOutputUrl: 'http://127.0.0.1:1/files/x.mp4',
    };
    await expect(downloadBatchOutputs([item], path.join(dir, 'out2'), { store, parallel: 1 })).rejects.toThrow(
      CliError,
    );
  });
});
