import type * as Pg from 'pg';
import { pendingMigrations, VERSION_TABLE, VERSION_TABLE_DDL, versionRow, type RouteStoreMigration } from './migration';

/**
 * Serialises migrations across processes that open the same database at once (two workers
 * starting together): a transaction-scoped advisory lock, released by COMMIT or ROLLBACK.
 */
const MIGRATION_LOCK_KEY = 7_265_727_001;

/**
 * Brings a PostgreSQL route store to the newest of `migrations` on `client` (one connection, one
 * transaction under the advisory lock: whoever takes it second finds the work done). Returns the
 * versions it applied. Throws RouteStoreSchemaError, changing nothing, when the database's schema
 * is newer than `migrations`.
 */
export async function migratePostgres(
  client: Pick<Pg.ClientBase, 'query'>,
  where: string,
  migrations: readonly RouteStoreMigration[],
  now: number = Date.now(),
): Promise<number[]> {
  await client.query('BEGIN');
  try {
    await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK_KEY]);
    await client.query(VERSION_TABLE_DDL);
    const recorded = Number(
      (await client.query<{ v: number }>(`SELECT COALESCE(MAX(version), 0) AS v FROM ${VERSION_TABLE}`)).rows[0]?.v ??
        0,
    );
    const pending = pendingMigrations(where, recorded, migrations);
    for (const migration of pending) {
      for (const statement of migration.postgres) await client.query(statement);
      await client.query(
        `INSERT INTO ${VERSION_TABLE} (version, name, applied_at) VALUES ($1, $2, $3)`,
        versionRow(migration, now),
      );
    }
    await client.query('COMMIT');
    return pending.map((m) => m.version);
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  }
}
