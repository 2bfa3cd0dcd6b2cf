import { RouteStoreSchemaError } from '../errors';

/**
 * One step of the route store's schema (docs/operations.md, "Route-store schema"): the statements
 * that take a store from `version - 1` to `version`, in each dialect. Applied once, in order, in the
 * same transaction as the row that records it; never edited once released.
 */
export interface RouteStoreMigration {
  /** 1, 2, 3, … without gaps; the list's order. */
  readonly version: number;
  /** What it adds, for the version table and the logs. */
  readonly name: string;
  readonly sqlite: readonly string[];
  readonly postgres: readonly string[];
}

/** The table that records applied migrations, one row each; the store's version is its highest. */
export const VERSION_TABLE = 'reelflow_schema_version';

/** DDL of the version table (the same in both dialects). */
export const VERSION_TABLE_DDL = `CREATE TABLE IF NOT EXISTS ${VERSION_TABLE} (
  version INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  applied_at BIGINT NOT NULL
)`;

/**
 * The migrations to apply to a store whose version table's highest row is `recorded` (0: none), in
 * order; an empty list when it is up to date. A store made before the version table (0.3.0 and
 * earlier) records none and has version 1's tables: version 1's DDL is all `IF NOT EXISTS`, so
 * applying it there changes nothing and records the store as version 1, and later ones follow.
 * Throws RouteStoreSchemaError when the store is newer than `migrations` know (a later reelflow
 * wrote it) or the list itself is out of order.
 */
export function pendingMigrations(
  where: string,
  recorded: number,
  migrations: readonly RouteStoreMigration[],
): RouteStoreMigration[] {
  checkOrder(migrations);
  const known = migrations.length;
  if (recorded > known)
    throw new RouteStoreSchemaError(
      `route store schema ${recorded} is newer than this reelflow (knows ${known}): upgrade reelflow or ` +
        `restore a backup taken before the upgrade (${where})`,
      { found: recorded, known },
    );
  return migrations.slice(recorded);
}

/** Versions must be 1, 2, 3, … in the list's order: a gap or a swap would skip or repeat DDL. */
function checkOrder(migrations: readonly RouteStoreMigration[]): void {
  migrations.forEach((migration, index) => {
    if (migration.version !== index + 1)
      throw new RouteStoreSchemaError(
        `route store migration "${migration.name}" has version ${migration.version} at position ${index + 1} of the list`,
        { found: migration.version, known: index + 1 },
      );
  });
}

/** The row that records `migration` as applied. */
export function versionRow(migration: RouteStoreMigration, now: number): [number, string, number] {
  return [migration.version, migration.name, now];
}
