import type { DatabaseSync } from 'node:sqlite';
import { pendingMigrations, VERSION_TABLE, VERSION_TABLE_DDL, versionRow, type RouteStoreMigration } from './migration';

/**
 * Brings an open SQLite route store to the newest of `migrations`, in one write transaction
 * (BEGIN IMMEDIATE: a second process opening the same file waits for the lock, then finds nothing
 * to do). Returns the versions it applied. Throws RouteStoreSchemaError, changing nothing, when
 * the file's schema is newer than `migrations`.
 */
export function migrateSqlite(
  db: DatabaseSync,
  where: string,
  migrations: readonly RouteStoreMigration[],
  now: number = Date.now(),
): number[] {
  db.exec('BEGIN IMMEDIATE');
  try {
    db.exec(VERSION_TABLE_DDL);
    const recorded = Number(
      (db.prepare(`SELECT COALESCE(MAX(version), 0) AS v FROM ${VERSION_TABLE}`).get() as { v: number }).v,
    );
    const pending = pendingMigrations(where, recorded, migrations);
    const record = db.prepare(`INSERT INTO ${VERSION_TABLE} (version, name, applied_at) VALUES (?, ?, ?)`);
    for (const migration of pending) {
      for (const statement of migration.sqlite) db.exec(statement);
      record.run(...versionRow(migration, now));
    }
    db.exec('COMMIT');
    return pending.map((m) => m.version);
  } catch (error) {
    if (db.isTransaction) db.exec('ROLLBACK');
    throw error;
  }
}
