import type { RouteStoreLocation } from '../../config/route-store-location';
import { backupPostgres, restorePostgres } from './postgres';
import { backupSqlite, restoreSqlite } from './sqlite';
import type { RouteStoreBackupSummary } from './summary';

/**
 * Backup and restore of the route store (docs/operations.md, "Backup and restore"), behind
 * `reelflow route-store backup|restore`: SQLite through `VACUUM INTO` and SQLite's backup API,
 * PostgreSQL through pg_dump and pg_restore of reelflow's tables. Both take a consistent snapshot
 * while the bridge writes; a restore needs the store's users stopped.
 */
export type { RouteStoreBackupSummary } from './summary';

/** Options of both commands. */
export interface RouteStoreBackupOptions {
  /** Directory of pg_dump/pg_restore (PostgreSQL only); default: the newest installed, then PATH. */
  pgBin?: string;
}

/** Writes a backup of the route store at `location` into `file`. */
export async function backupRouteStore(
  location: RouteStoreLocation,
  file: string,
  options: RouteStoreBackupOptions = {},
): Promise<RouteStoreBackupSummary> {
  return location.backend === 'sqlite'
    ? backupSqlite(location.path, file)
    : backupPostgres(location.url, file, options);
}

/** Replaces the route store at `location` with the backup in `file`, migrated to this reelflow's schema. */
export async function restoreRouteStore(
  location: RouteStoreLocation,
  file: string,
  options: RouteStoreBackupOptions = {},
): Promise<RouteStoreBackupSummary> {
  return location.backend === 'sqlite'
    ? restoreSqlite(location.path, file)
    : restorePostgres(location.url, file, options);
}
