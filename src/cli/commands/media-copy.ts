import { resolve } from 'node:path';
import type { Command } from 'commander';
import { copyMediaStore, type MediaCopyReport } from '../../media/store-copy';
import { createFileStore } from '../../media/store';
import { cliEnv, cliMediaStore } from '../lib/context';
import { printJson, say } from '../lib/output';

function report(from: string, to: string, copy: MediaCopyReport, json: boolean): void {
  if (json) printJson({ from, to, ...copy });
  else
    say(
      `${from} → ${to}: ${copy.examined} objects, ${copy.copied} copied (${copy.bytesCopied} bytes), ${copy.referrers} referrers`,
    );
}

/**
 * `reelflow media backup <dir>` and `reelflow media restore <dir>` (docs/operations.md): every object of
 * the media store (REELFLOW_MEDIA_STORE, filesystem or S3) with its type and referrers, into or out of a
 * filesystem store at `<dir>`. Repeating a backup copies only new objects.
 */
export function registerMediaCopyCommands(media: Command): void {
  media
    .command('backup <dir>')
    .description(
      'Copy every object the media store lacks in <dir> (a filesystem store), with its type and referrers, SHA-256 checked; safe while workers run',
    )
    .option('--json', 'print the counts as JSON', false)
    .action(async (dir: string, options: { json: boolean }) => {
      const { store } = cliMediaStore(cliEnv());
      const backup = createFileStore(resolve(dir));
      report(store.location, backup.location, await copyMediaStore(store, backup), options.json);
    });
  media
    .command('restore <dir>')
    .description(
      'Copy every object of the filesystem store at <dir> that the media store lacks, with its type and referrers',
    )
    .option('--json', 'print the counts as JSON', false)
    .action(async (dir: string, options: { json: boolean }) => {
      const { store } = cliMediaStore(cliEnv());
      const backup = createFileStore(resolve(dir));
      report(backup.location, store.location, await copyMediaStore(backup, store), options.json);
    });
}
