import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { JournalCorruptError, JournalWriteError } from '../../../../src/local-service/store/errors';
import { Journal } from '../../../../src/local-service/store/journal';
import type { JournalEntry } from '../../../../src/local-service/store/records';
import { Store } from '../../../../src/local-service/store/store';

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reelflow-journal-'));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

const key = (n: number): JournalEntry => ({
  t: 'key.created',
  key: { id: `key_${n}`, hash: 'a'.repeat(64), createdAt: n, revokedAt: null },
});
const file = () => path.join(dir, 'journal.jsonl');

function written(count: number): number {
  const { journal } = Journal.open(dir);
  for (let n = 1; n <= count; n++) journal.append(key(n));
  const size = journal.bytes;
  journal.close();
  return size;
}

test('a torn last record is cut off at its offset, reported, and appends go on after it', () => {
  const good = written(3);
  fs.appendFileSync(file(), '{"t":"key.created","key":{"id":"key_4","ha');
  const { journal, entries, torn } = Journal.open(dir);
  expect(entries.map((e) => (e as { key: { id: string } }).key.id)).toEqual(['key_1', 'key_2', 'key_3']);
  expect(torn).toEqual({ offset: good, bytes: 42 });
  expect(fs.statSync(file()).size).toBe(good);
  journal.append(key(5));
  journal.close();
  const again = Journal.open(dir);
  expect(again.torn).toBeNull();
  expect(again.entries).toHaveLength(4);
  again.journal.close();
});

test('an unreadable last line (even with its newline, or zero-filled by the filesystem) is torn, not fatal', () => {
  const good = written(2);
  fs.appendFileSync(file(), Buffer.concat([Buffer.from('{"t":"key.cre\n'), Buffer.alloc(16)]));
  const { journal, entries, torn } = Journal.open(dir);
  expect(entries).toHaveLength(2);
  expect(torn?.offset).toBe(good);
  journal.close();
});

test('a corrupt record in the middle is a clear error naming its line', () => {
  written(2);
  const lines = fs.readFileSync(file(), 'utf8');
  fs.writeFileSync(file(), `${lines}{broken\n${JSON.stringify(key(9))}\n`);
  expect(() => Journal.open(dir)).toThrow(JournalCorruptError);
  expect(() => Journal.open(dir)).toThrow(/line 3 \(byte \d+\)/);
});

test('a closed journal refuses writes with a typed error', () => {
  const { journal } = Journal.open(dir);
  journal.close();
  expect(() => journal.append(key(1))).toThrow(JournalWriteError);
});

test('the store compacts by size while running, and a reopen rebuilds the same state', () => {
  const { store } = Store.open(dir, { compactAtBytes: 4096 });
  let largest = 0;
  for (let n = 1; n <= 300; n++) {
    store.commit(key(n));
    store.commit({ t: 'key.revoked', id: `key_${n}`, at: n });
    largest = Math.max(largest, store.journalBytes);
  }
  // 600 records of ~100 bytes each, but the file never held much more than two snapshots' worth.
  const snapshot = JSON.stringify({ t: 'snapshot', state: store.state.snapshot() }).length;
  expect(largest).toBeLessThanOrEqual(Math.max(4096, 2 * snapshot) + 200);
  store.close();
  const { store: reopened } = Store.open(dir);
  expect(reopened.state.keys.size).toBe(300);
  expect([...reopened.state.keys.values()].every((k) => k.revokedAt !== null)).toBe(true);
  reopened.close();
});
