import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { batchManifestItems, batchResults } from '../../../../src/cli/lib/batch-store';
import { putJsonLines } from '../../../../src/media/json-lines';
import { createFileStore, type MediaStore } from '../../../../src/media/store';
import type { BatchItemResult, BatchProgress } from '../../../../src/workflows/batch-types';

let dir: string;
let store: MediaStore;
beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reelflow-batch-store-'));
  store = createFileStore(dir);
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const result = (name: string, status: BatchItemResult['status']): BatchItemResult => ({
  name,
  workflowId: `pipeline/${name}`,
  status,
});

describe('a paged batch read back by the CLI', () => {
  it('joins the result pages and the results not yet written, and reads the whole manifest', async () => {
    const pages = [
      (await putJsonLines(store, [result('a', 'completed'), result('b', 'failed')], 'batch/x')).sha256,
      (await putJsonLines(store, [result('c', 'cancelled')], 'batch/x')).sha256,
    ];
    const manifest = await putJsonLines(
      store,
      ['a', 'b', 'c', 'd'].map((name, index) => ({ index, spec: { name, steps: [] } })),
      'batch/x',
      3,
    );
    const progress = {
      results: [result('d', 'completed')],
      resultPages: pages,
      manifest: { sha256: manifest.sha256, records: 4 },
    } as unknown as BatchProgress;
    expect((await batchResults(progress, store)).map((r) => [r.name, r.status])).toEqual([
      ['a', 'completed'],
      ['b', 'failed'],
      ['c', 'cancelled'],
      ['d', 'completed'],
    ]);
    expect((await batchManifestItems(progress, store)).map((i) => i.spec.name)).toEqual(['a', 'b', 'c', 'd']);
    // A legacy batch: every result in the progress, no manifest kept.
    const legacy = { results: [result('z', 'failed')] } as unknown as BatchProgress;
    expect(await batchResults(legacy, store)).toEqual([result('z', 'failed')]);
    expect(await batchManifestItems(legacy, store)).toEqual([]);
  });
});
