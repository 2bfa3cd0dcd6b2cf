import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { JSON_LINES_TYPE, putJsonLines, readJsonLines, readJsonLinesPage } from '../../../src/media/json-lines';
import { createFileStore, type MediaStore } from '../../../src/media/store';
import { manifestPageOf } from '../../../src/workflows/batch-types';

let dir: string;
let store: MediaStore;
beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reelflow-jsonl-'));
  store = createFileStore(dir);
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('JSON Lines objects in the media store', () => {
  it('writes one object and reads it back page by page through byte ranges (multi-byte text included)', async () => {
    const records = Array.from({ length: 25 }, (_, index) => ({ index, text: index % 3 === 0 ? 'héllo — ✓' : 'x' }));
    const object = await putJsonLines(store, records, 'batch/pages', 10);
    expect(object).toMatchObject({ records: 25, pageSize: 10 });
    expect(object.pageOffsets).toHaveLength(3);
    expect(await store.stat(object.sha256)).toMatchObject({ type: JSON_LINES_TYPE, bytes: object.bytes });
    expect((await store.referrers(object.sha256)).map((r) => r.pipeline)).toEqual(['batch/pages']);
    const pages = await Promise.all([0, 1, 2, 3].map((page) => readJsonLinesPage(store, object, page)));
    expect(pages.map((p) => p.length)).toEqual([10, 10, 5, 0]);
    expect(pages.flat()).toEqual(records);
    expect(await readJsonLines(store, object.sha256)).toEqual(records);
  });

  it('starts a page early when the next record would take it past maxPageBytes; a larger record gets a page alone', async () => {
    const sizes = [10, 10, 10, 300, 10, 10, 10, 10, 10, 10, 10];
    const records = sizes.map((size, index) => ({ index, text: 'x'.repeat(size) }));
    const object = await putJsonLines(store, records, 'batch/bytes', 4, 100);
    expect(object.pageStarts).toEqual([0, 3, 4, 7, 10]);
    const pages = await Promise.all(object.pageStarts.map((_, page) => readJsonLinesPage(store, object, page)));
    expect(pages.map((p) => p.length)).toEqual([3, 1, 3, 3, 1]);
    expect(pages.flat()).toEqual(records);
    for (const [page, items] of pages.entries())
      for (const [offset, item] of items.entries())
        expect(manifestPageOf(object, (item as { index: number }).index)).toEqual({ page, offset });
  });

  it('finds an item of a manifest stored before pages were bounded by bytes by its page size', () => {
    const old = { sha256: 'x', bytes: 1, records: 25, pageSize: 10, pageOffsets: [0, 1, 2] };
    expect(manifestPageOf(old, 0)).toEqual({ page: 0, offset: 0 });
    expect(manifestPageOf(old, 24)).toEqual({ page: 2, offset: 4 });
  });

  it('is content-addressed: the same records twice are one object', async () => {
    const a = await putJsonLines(store, [{ a: 1 }], 'batch/one');
    const b = await putJsonLines(store, [{ a: 1 }], 'batch/two');
    expect(a.sha256).toBe(b.sha256);
    expect((await store.referrers(a.sha256)).map((r) => r.pipeline).sort()).toEqual(['batch/one', 'batch/two']);
  });
});
