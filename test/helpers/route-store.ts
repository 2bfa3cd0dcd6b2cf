import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSqliteRouteStore, type RouteStore } from '../../src/routing';

const stores = new Map<string, RouteStore>();
let dir: string | undefined;

/**
 * The route store a test's worker and bridge share, one SQLite file per `key` (the task queue) in a
 * temporary folder of this test file's process, as `reelflow dev` shares `<state dir>/routes.sqlite`.
 * Stays open for the process (an open SQLite handle keeps nothing running).
 */
export function testRouteStore(key: string): RouteStore {
  let store = stores.get(key);
  if (!store) {
    dir ??= mkdtempSync(join(tmpdir(), 'reelflow-routes-'));
    store = openSqliteRouteStore(join(dir, `${key.replace(/[^\w.-]/g, '_')}.sqlite`));
    stores.set(key, store);
  }
  return store;
}
