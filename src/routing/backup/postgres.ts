import { renameSync, rmSync } from 'node:fs';
import { ROUTE_STORE_SCHEMA_VERSION } from '../migrations';
import { RouteStoreBackupError, RouteStoreSchemaError } from '../errors';
import { openPostgresRouteStore } from '../postgres-store';
import { connectionOf, postgresBinDir, runPostgresTool } from './postgres-tools';
import { fileSummary, type RouteStoreBackupSummary } from './summary';

/** The route store's tables (and their sequences): all of reelflow's, none of a shared database's others. */
const TABLES = 'reelflow_*';

/**
 * Dumps the route store's tables of the database at `url` into `file` (pg_dump's custom format):
 * one snapshot (pg_dump reads in one repeatable-read transaction) while bridges and workers keep
 * writing. Written to `<file>.partial` and renamed.
 */
export function backupPostgres(url: string, file: string, options: { pgBin?: string } = {}): RouteStoreBackupSummary {
  const { dbname, env } = connectionOf(url);
  const binDir = postgresBinDir(options.pgBin);
  const partial = `${file}.partial`;
  rmSync(partial, { force: true });
  try {
    runPostgresTool(
      'pg_dump',
      ['--format=custom', '--no-owner', '--no-privileges', `--table=${TABLES}`, `--file=${partial}`, dbname],
      { binDir, env, what: 'route-store backup' },
    );
  } catch (error) {
    rmSync(partial, { force: true });
    throw error;
  }
  renameSync(partial, file);
  return describePostgresBackup(file, binDir);
}

/**
 * Restores `file` into the database at `url` in one transaction (`pg_restore --clean
 * --single-transaction`: the route store's tables are replaced whole or not at all), then opens the
 * store once, which migrates a backup of an older schema forward. Stop every bridge and worker using
 * it first. Refuses a backup newer than this reelflow, leaving the database untouched.
 */
export async function restorePostgres(
  url: string,
  file: string,
  options: { pgBin?: string } = {},
): Promise<RouteStoreBackupSummary> {
  const binDir = postgresBinDir(options.pgBin);
  const summary = describePostgresBackup(file, binDir);
  if (summary.schemaVersion > ROUTE_STORE_SCHEMA_VERSION)
    throw new RouteStoreSchemaError(
      `route store backup ${file} has schema ${summary.schemaVersion}, newer than this reelflow (knows ${ROUTE_STORE_SCHEMA_VERSION}): restore it with the release that made it`,
      { found: summary.schemaVersion, known: ROUTE_STORE_SCHEMA_VERSION },
    );
  const { dbname, env } = connectionOf(url);
  runPostgresTool(
    'pg_restore',
    ['--clean', '--if-exists', '--no-owner', '--no-privileges', '--single-transaction', `--dbname=${dbname}`, file],
    { binDir, env, what: 'route-store restore' },
  );
  const store = openPostgresRouteStore(url);
  try {
    if (!(await store.ping())) throw new RouteStoreBackupError(`the restored route store at ${dbname} does not answer`);
  } finally {
    await store.close();
  }
  return summary;
}

/** The schema version a pg_dump archive of the route store records, read from the archive itself. */
function describePostgresBackup(file: string, binDir: string | null): RouteStoreBackupSummary {
  const listing = runPostgresTool('pg_restore', ['--list', file], { binDir, what: `reading ${file}` });
  if (!/ TABLE \S+ reelflow_routes /.test(listing))
    throw new RouteStoreBackupError(`${file} is not a route-store backup: it holds no reelflow_routes table`);
  if (!/ TABLE \S+ reelflow_schema_version /.test(listing)) return fileSummary('postgres', file, 1);
  // The version table's rows as COPY text: one line per migration, the version first.
  const copy = runPostgresTool('pg_restore', ['--data-only', '--table=reelflow_schema_version', '--file=-', file], {
    binDir,
    what: `reading ${file}`,
  });
  const body = copy.split(/^COPY [^\n]*\n/m)[1]?.split(/^\\\.$/m)[0] ?? '';
  const versions = body
    .split('\n')
    .filter(Boolean)
    .map((line) => Number(line.split('\t')[0]));
  return fileSummary('postgres', file, versions.length > 0 ? Math.max(...versions) : 1);
}
