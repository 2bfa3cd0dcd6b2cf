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
    store = openSqliteRouteStore(testRouteStoreFile(key));
    stores.set(key, store);
  }
  return store;
}

/** The file of `testRouteStore(key)` (to look at its rows from a second connection). */
export function testRouteStoreFile(key: string): string {
  dir ??= mkdtempSync(join(tmpdir(), 'reelflow-routes-'));
  return join(dir, `${key.replace(/[^\w.-]/g, '_')}.sqlite`);
}
