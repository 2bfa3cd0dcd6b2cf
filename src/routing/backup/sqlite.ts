import { existsSync, renameSync, rmSync } from 'node:fs';
import { backup, DatabaseSync } from 'node:sqlite';
import { ROUTE_STORE_SCHEMA_VERSION } from '../migrations';
import { RouteStoreBackupError, RouteStoreSchemaError } from '../errors';
import { openSqliteRouteStore } from '../sqlite-store';
import { fileSummary, type RouteStoreBackupSummary } from './summary';

/**
 * Copies the SQLite route store at `path` into `file` while bridges and workers keep writing:
 * `VACUUM INTO` reads one snapshot (a WAL reader: writers never wait for it, and it never restarts
 * the way the page-copying backup API does under a busy writer). Written to `<file>.partial` and
 * renamed, so `file` is either a whole backup or absent.
 */
export function backupSqlite(path: string, file: string): RouteStoreBackupSummary {
  if (!existsSync(path)) throw new RouteStoreBackupError(`route store ${path} does not exist`);
  const partial = `${file}.partial`;
  rmSync(partial, { force: true });
  const db = new DatabaseSync(path);
  try {
    db.exec('PRAGMA busy_timeout = 5000');
    db.prepare('VACUUM INTO ?').run(partial);
  } catch (error) {
    rmSync(partial, { force: true });
    throw new RouteStoreBackupError(`backup of ${path} failed: ${(error as Error).message}`, { cause: error });
  } finally {
    db.close();
  }
  renameSync(partial, file);
  return describeSqliteBackup(file);
}

/**
 * Replaces the SQLite route store at `path` with the backup `file` through SQLite's backup API (it
 * writes through SQLite, so a stale WAL beside `path` cannot mix with the restored pages), then opens
 * it once, which migrates a backup of an older schema forward. Stop every bridge and worker using
 * `path` first. Refuses a backup newer than this reelflow, leaving `path` untouched.
 */
export async function restoreSqlite(path: string, file: string): Promise<RouteStoreBackupSummary> {
  const summary = describeSqliteBackup(file);
  if (summary.schemaVersion > ROUTE_STORE_SCHEMA_VERSION)
    throw new RouteStoreSchemaError(
      `route store backup ${file} has schema ${summary.schemaVersion}, newer than this reelflow (knows ${ROUTE_STORE_SCHEMA_VERSION}): restore it with the release that made it`,
      { found: summary.schemaVersion, known: ROUTE_STORE_SCHEMA_VERSION },
    );
  const source = new DatabaseSync(file, { readOnly: true });
  try {
    await backup(source, path);
  } catch (error) {
    throw new RouteStoreBackupError(`restore of ${file} into ${path} failed: ${(error as Error).message}`, {
      cause: error,
    });
  } finally {
    source.close();
  }
  await openSqliteRouteStore(path).close();
  return summary;
}

/** Schema version and row counts of a SQLite route-store file; refuses a file that is not one. */
export function describeSqliteBackup(file: string): RouteStoreBackupSummary {
  if (!existsSync(file)) throw new RouteStoreBackupError(`backup ${file} does not exist`);
  let db: DatabaseSync | undefined;
  try {
    db = new DatabaseSync(file, { readOnly: true });
    const has = (table: string) =>
      db!.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").get(table) !== undefined;
    if (!has('reelflow_routes')) throw new Error('it holds no reelflow_routes table');
    const version = has('reelflow_schema_version')
      ? Number(
          (db.prepare('SELECT MAX(version) AS v FROM reelflow_schema_version').get() as { v: number | null }).v ?? 1,
        )
      : 1;
    const count = (table: string) =>
      Number((db!.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n);
    return {
      ...fileSummary('sqlite', file, version),
      deliveries: count('reelflow_inbox'),
      subscriptions: count('reelflow_routes'),
    };
  } catch (error) {
    throw new RouteStoreBackupError(`${file} is not a route-store backup: ${(error as Error).message}`, {
      cause: error,
    });
  } finally {
    db?.close();
  }
}
