import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createBatchActivities } from '../../../src/activities/batch';
import { putJsonLines, readJsonLines } from '../../../src/media/json-lines';
import { createFileStore, type MediaStore } from '../../../src/media/store';
import type { BatchItemResult } from '../../../src/workflows/batch-types';

let dir: string;
let store: MediaStore;
beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reelflow-batch-activities-'));
  store = createFileStore(dir);
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('batch activities', () => {
  it('read a stored manifest one page at a time and write result pages the batch refers to', async () => {
    const activities = createBatchActivities({ store, urlLifetimeSeconds: 60 });
    const items = Array.from({ length: 5 }, (_, index) => ({
      index,
      spec: { name: `p${index}`, steps: [] },
    }));
    const manifest = await putJsonLines(store, items, 'batch/b', 2);
    expect(await activities.readBatchPage(manifest, 1)).toEqual(items.slice(2, 4));
    expect(await activities.readBatchPage(manifest, 2)).toEqual(items.slice(4));
    const results: BatchItemResult[] = [{ name: 'p0', workflowId: 'pipeline/p0', status: 'failed', error: 'x' }];
    const sha256 = await activities.writeBatchResults('batch/b', results);
    expect(await readJsonLines(store, sha256)).toEqual(results);
    expect((await store.referrers(sha256)).map((r) => r.pipeline)).toEqual(['batch/b']);
  });

  it('fail for good, naming the media store, on a worker without one', async () => {
    const activities = createBatchActivities(undefined);
    await expect(activities.writeBatchResults('batch/b', [])).rejects.toThrow(/media store/);
  });
});
