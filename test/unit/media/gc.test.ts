import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { collectGarbage, type ReferrerRunState } from '../../../src/media/gc';
import { createFileStore, putMediaBytes } from '../../../src/media/store';
import { parseDurationSeconds } from '../../../src/config';

/** The collection policy over a real filesystem store, with pipeline states given per name. */

const DAY = 86_400;
let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reelflow-gc-'));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

/** Backdates an object's metadata and referrer markers as if stored `days` ago. */
function age(root: string, sha: string, days: number): void {
  const meta = path.join(root, 'objects', sha.slice(0, 2), `${sha}.json`);
  const then = new Date(Date.now() - days * DAY * 1000);
  fs.writeFileSync(
    meta,
    JSON.stringify({ ...JSON.parse(fs.readFileSync(meta, 'utf8')), createdAt: then.toISOString() }),
  );
  const referrers = path.join(root, 'referrers', sha);
  for (const name of fs.existsSync(referrers) ? fs.readdirSync(referrers) : [])
    fs.utimesSync(path.join(referrers, name), then, then);
}

describe('media gc', () => {
  it('removes only objects whose every referrer closed (or vanished) before the window, and only with apply', async () => {
    const root = path.join(dir, 'store');
    const store = createFileStore(root);
    const refs = {
      running: await putMediaBytes(store, Buffer.from('running'), 'image/png', 'still-running'),
      recent: await putMediaBytes(store, Buffer.from('recent'), 'image/png', 'closed-recently'),
      old: await putMediaBytes(store, Buffer.from('old'), 'image/png', 'closed-long-ago'),
      gone: await putMediaBytes(store, Buffer.from('gone'), 'image/png', 'unknown-to-temporal'),
      shared: await putMediaBytes(store, Buffer.from('shared'), 'image/png', 'closed-long-ago'),
      fresh: await putMediaBytes(store, Buffer.from('fresh'), 'image/png', 'unknown-to-temporal'),
    };
    await store.addReferrer(refs.shared.$media.slice(7), 'still-running');
    for (const [name, ref] of Object.entries(refs)) if (name !== 'fresh') age(root, ref.$media.slice(7), 40);
    const states: Record<string, ReferrerRunState> = {
      'still-running': { state: 'running' },
      'closed-recently': { state: 'closed', closedAt: new Date(Date.now() - 2 * DAY * 1000) },
      'closed-long-ago': { state: 'closed', closedAt: new Date(Date.now() - 35 * DAY * 1000) },
    };
    const runStateOf = async (name: string): Promise<ReferrerRunState> => states[name] ?? { state: 'unknown' };
    const olderThanSeconds = parseDurationSeconds('30d') as number;

    const dry = await collectGarbage({ store, olderThanSeconds, runStateOf, apply: false });
    const removedNames = (report: typeof dry) =>
      report.removed.map((o) => Object.entries(refs).find(([, r]) => r.$media === `sha256:${o.sha256}`)?.[0]).sort();
    expect(removedNames(dry)).toEqual(['gone', 'old']);
    expect(dry).toMatchObject({ examined: 6, kept: 4, applied: false, bytesRemoved: 'gone'.length + 'old'.length });
    expect(await store.stat(refs.old.$media.slice(7))).not.toBeNull();

    const applied = await collectGarbage({ store, olderThanSeconds, runStateOf, apply: true });
    expect(removedNames(applied)).toEqual(['gone', 'old']);
    expect(await store.stat(refs.old.$media.slice(7))).toBeNull();
    expect(await store.stat(refs.gone.$media.slice(7))).toBeNull();
    for (const kept of [refs.running, refs.recent, refs.shared, refs.fresh])
      expect(await store.stat(kept.$media.slice(7))).not.toBeNull();
  });
});
