import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import {
  HISTORY_END,
  HISTORY_START,
  historyEntry,
  historyTable,
  readHistory,
  recordHistory,
  replaceHistory,
  type HistoryEntry,
} from '../../bench/report/history';

/** The history table of docs/benchmarks.md: one row per version, the latest full run at it. */
describe('benchmark history by version', () => {
  let dir: string;
  let file: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-history-'));
    file = path.join(dir, 'history.json');
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  const row = (version: string, commit: string, handoffAloneP50Ms?: number): HistoryEntry => ({
    version,
    commit,
    date: '2026-11-28',
    ...(handoffAloneP50Ms === undefined ? {} : { handoffAloneP50Ms }),
  });

  it('keeps one row per version, the latest recorded, in version order', () => {
    recordHistory(row('0.10.0', 'ccccccc', 5), file);
    recordHistory(row('0.2.0', 'aaaaaaa', 29), file);
    recordHistory(row('0.10.0', 'ddddddd', 4), file);
    expect(readHistory(file).map((r) => `${r.version} ${r.commit}`)).toEqual(['0.2.0 aaaaaaa', '0.10.0 ddddddd']);
  });

  it('takes the headline figures of a run and shows a figure the run did not measure as –', () => {
    const entry = historyEntry('0.3.0', {
      run: { commit: 'c77351fff7', date: '2026-11-28T14:53:00.000Z' },
      handoff: {
        latencyMs: {
          alone: { webhook: { p50: 7 } },
          contended: { webhook: { p50: 18 }, naive: { p50: 267 } },
        },
      } as never,
    });
    expect(entry).toEqual({
      version: '0.3.0',
      commit: 'c77351f',
      date: '2026-11-28',
      handoffAloneP50Ms: 7,
      handoffContendedP50Ms: 18,
      contendedVsNaive: 0.07,
    });
    const table = historyTable([entry]);
    expect(table.split('\n')[2]).toBe('| 0.3.0 | c77351f, 2026-11-28 | 7 ms | 18 ms (0.07) | – | – | – |');
  });

  it('rewrites only the text between its markers, and refuses a document without them', () => {
    const doc = `before\n${HISTORY_START}\nold table\n${HISTORY_END}\nafter\n`;
    const rewritten = replaceHistory(doc, [row('0.1.0', 'bbbbbbb', 77)]);
    expect(rewritten).toContain('| 0.1.0 | bbbbbbb, 2026-11-28 | 77 ms |');
    expect(rewritten).not.toContain('old table');
    expect(rewritten.startsWith('before\n') && rewritten.endsWith(`${HISTORY_END}\nafter\n`)).toBe(true);
    expect(() => replaceHistory('no markers', [])).toThrow(/bench:history:start/);
  });
});
