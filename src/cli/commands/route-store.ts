import type { Command } from 'commander';
import { describeRouteStoreLocation, loadRouteStoreSettings, loadStackSettings } from '../../config';
import type { RouteStoreLocation } from '../../config/route-store-location';
import { RouteStoreBackupError, RouteStoreSchemaError } from '../../routing/errors';
import { backupRouteStore, restoreRouteStore, type RouteStoreBackupSummary } from '../../routing/backup';
import { CliError } from '../lib/errors';
import { EXIT } from '../lib/exit';
import { printJson, say } from '../lib/output';

interface Options {
  pgBin?: string;
  json: boolean;
}

/** REELFLOW_ROUTE_STORE as the worker and the bridge of this environment read it. */
function location(): RouteStoreLocation {
  return loadRouteStoreSettings(undefined, { stateDir: loadStackSettings().stateDir }).location;
}

function report(verb: string, where: string, summary: RouteStoreBackupSummary, json: boolean): void {
  if (json) {
    printJson({ routeStore: where, ...summary });
    return;
  }
  const rows =
    summary.deliveries === undefined
      ? ''
      : `, ${summary.deliveries} deliveries, ${summary.subscriptions} subscriptions`;
  say(
    `${verb} ${where} ${verb === 'backed up' ? 'into' : 'from'} ${summary.file}: schema ${summary.schemaVersion}${rows}, ${summary.bytes} bytes`,
  );
}

/** Runs `work`, turning the store's own errors into one-line CLI errors (exit 1). */
async function run(work: () => Promise<void>): Promise<void> {
  try {
    await work();
  } catch (error) {
    if (error instanceof RouteStoreBackupError || error instanceof RouteStoreSchemaError)
      throw new CliError(error.message, EXIT.failed);
    throw error;
  }
}

/**
 * `reelflow route-store backup <file>` and `reelflow route-store restore <file>` (docs/operations.md,
 * "Backup and restore"): the route store of REELFLOW_ROUTE_STORE, SQLite or PostgreSQL.
 */
export function registerRouteStoreCommand(program: Command): void {
  const command = program
    .command('route-store')
    .description('The route store (REELFLOW_ROUTE_STORE): subscriptions, the bridge inbox, prepared submits');
  command
    .command('backup <file>')
    .description(
      'Write a consistent backup while bridges and workers run (SQLite: VACUUM INTO; PostgreSQL: pg_dump of the reelflow_* tables, custom format)',
    )
    .option(
      '--pg-bin <dir>',
      "directory of pg_dump (default: the newest /usr/lib/postgresql/<version>/bin, else PATH's)",
    )
    .option('--json', 'print the summary as JSON', false)
    .action((file: string, options: Options) =>
      run(async () => {
        const at = location();
        const summary = await backupRouteStore(at, file, options.pgBin ? { pgBin: options.pgBin } : {});
        report('backed up', describeRouteStoreLocation(at), summary, options.json);
      }),
    );
  command
    .command('restore <file>')
    .description(
      'Replace the route store with a backup, then migrate it to this release. Stop every bridge and worker using the store first',
    )
    .option(
      '--pg-bin <dir>',
      "directory of pg_restore (default: the newest /usr/lib/postgresql/<version>/bin, else PATH's)",
    )
    .option('--json', 'print the summary as JSON', false)
    .action((file: string, options: Options) =>
      run(async () => {
        const at = location();
        const summary = await restoreRouteStore(at, file, options.pgBin ? { pgBin: options.pgBin } : {});
        report('restored', describeRouteStoreLocation(at), summary, options.json);
      }),
    );
}
