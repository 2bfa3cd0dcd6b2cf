import * as fs from 'node:fs';
import * as path from 'node:path';
import { InvalidArgumentError, type Command } from 'commander';
import { copyArchivedOutput } from '../../media/archived-copy';
import { MediaStoreError, type MediaStore } from '../../media/store';
import { safeDownload, SafeFetchError } from '../../net';
import type { PipelineSummary } from '../../workflows/pipeline-types';
import {
  batchProgress,
  cliEnv,
  cliMediaStore,
  findWorkflow,
  pipelineSummary,
  withTemporal,
  type FoundWorkflow,
} from '../lib/context';
import { DOWNLOAD_TIMEOUT_MS, downloadBatchOutputs, extensionOf, MAX_OUTPUT_BYTES } from '../lib/batch-outputs';
import { batchResults } from '../lib/batch-store';
import { CliError } from '../lib/errors';
import { EXIT } from '../lib/exit';
import { printJson, say } from '../lib/output';

/** A downloaded output file. */
export interface DownloadedOutput {
  step: string;
  url: string;
  file: string;
  bytes: number;
  /** Where the bytes came from: the media-store archive or the service URL. */
  from: 'archive' | 'service';
  media?: string;
}

/**
 * Downloads every output video of the pipeline's steps into `dir` as `<step>-<n><ext>`: from the
 * media-store archive when the output was archived (the service may have deleted its file), else
 * from the service URL. Every URL goes through the address rules (public https only, each redirect
 * checked again), except that the configured service's own origin may be private/http (a local
 * service on loopback).
 */
export async function downloadOutputs(
  summary: PipelineSummary,
  dir: string,
  serviceUrl: string | undefined,
  store?: MediaStore,
): Promise<DownloadedOutput[]> {
  fs.mkdirSync(dir, { recursive: true });
  const serviceOrigin = serviceUrl ? new URL(serviceUrl).origin : null;
  const files: DownloadedOutput[] = [];
  for (const step of summary.steps) {
    const output = summary.outputs[step.id];
    // An approval gate's output names a preview, not media of its own.
    const videos = output && 'videos' in output ? output.videos : [];
    const archived = step.archived ?? [];
    for (const [index, video] of videos.entries()) {
      const copy = archived.find((a) => a.url === video.url);
      if (copy && store) {
        const file = path.join(dir, `${step.id}-${index + 1}${extensionOf(video.url, copy.type)}`);
        try {
          const bytes = await copyArchivedOutput(store, copy, file);
          files.push({ step: step.id, url: video.url, file, bytes, from: 'archive', media: copy.$media });
          continue;
        } catch (error) {
          fs.rmSync(file, { force: true });
          if (error instanceof MediaStoreError && error.code === 'integrity')
            throw new CliError(error.message, EXIT.failed);
          if (!(error instanceof MediaStoreError && error.code === 'not_found')) throw error;
          // Not (any more) in the store: try the service URL below.
        }
      }
      const own = serviceOrigin !== null && new URL(video.url).origin === serviceOrigin;
      const partial = path.join(dir, `${step.id}-${index + 1}.part`);
      try {
        const meta = await safeDownload(video.url, partial, {
          allowPrivate: own,
          maxBytes: MAX_OUTPUT_BYTES,
          timeoutMs: DOWNLOAD_TIMEOUT_MS,
        });
        const file = path.join(dir, `${step.id}-${index + 1}${extensionOf(meta.url, meta.contentType)}`);
        fs.renameSync(partial, file);
        files.push({ step: step.id, url: video.url, file, bytes: meta.size, from: 'service' });
      } catch (error) {
        if (error instanceof SafeFetchError) {
          const exit = error.code === 'network' || error.code === 'timeout' ? EXIT.unavailable : EXIT.failed;
          const hint = copy
            ? ''
            : ' (the output was not archived: set `"archive": "always"` or `"on-expiry-risk"` in the spec to keep copies)';
          throw new CliError(
            `cannot download the output of step ${step.id} (${video.url}): ${error.message}${hint}`,
            exit,
          );
        }
        throw error;
      }
    }
  }
  return files;
}

/** Width of the progress bar of a batch download. */
const BAR_WIDTH = 30;

/**
 * `reelflow outputs batch/<id>`: the final output of every completed item, `--parallel` at once,
 * resumable, with a progress bar on stderr (redrawn in place on a terminal, every tenth otherwise).
 */
async function batchOutputs(
  found: FoundWorkflow,
  options: { to: string; parallel: number; json: boolean },
  serviceUrl: string | undefined,
  store: MediaStore,
): Promise<void> {
  const progress = await batchProgress(found.handle);
  const results = await batchResults(progress, store);
  const tty = process.stderr.isTTY === true;
  let shownTenth = -1;
  const files = await downloadBatchOutputs(results, path.resolve(options.to), {
    ...(serviceUrl ? { serviceUrl } : {}),
    store,
    parallel: options.parallel,
    onProgress: (p) => {
      const filled = Math.round((p.done / Math.max(1, p.total)) * BAR_WIDTH);
      const line = `[${'#'.repeat(filled)}${'.'.repeat(BAR_WIDTH - filled)}] ${p.done}/${p.total} outputs  ${p.skipped} already there  ${(p.bytes / 1048576).toFixed(1)} MiB`;
      const tenth = Math.floor((p.done / Math.max(1, p.total)) * 10);
      if (tty) process.stderr.write(`\r${line}${p.done === p.total ? '\n' : ''}`);
      else if (tenth !== shownTenth || p.done === p.total) {
        shownTenth = tenth;
        process.stderr.write(`${line}\n`);
      }
    },
  });
  const notCompleted = results.filter((r) => r.status !== 'completed').length;
  if (options.json) printJson({ workflowId: found.workflowId, status: progress.status, notCompleted, files });
  else
    say(
      `${found.workflowId}: ${files.length} output(s) in ${path.resolve(options.to)} (${files.filter((f) => f.from === 'skipped').length} already there)` +
        (notCompleted > 0 ? `; ${notCompleted} item(s) did not complete and have none` : ''),
    );
  if (progress.status !== 'completed' || notCompleted > 0) process.exitCode = EXIT.failed;
}

/** `reelflow outputs <id> --to <dir>`: download the output files of a pipeline or a batch. */
export function registerOutputsCommand(program: Command): void {
  program
    .command('outputs')
    .description(
      'Download the output videos of a pipeline, or the final output of every completed item of a batch (resumable: a file whose SHA-256 matches is skipped), into a directory, from the media-store archive where archived, else from the service (exit 0 done, 1 pipeline or any batch item not completed, 4 unknown id)',
    )
    .argument('<id>', 'pipeline/<name>, batch/<name> or a bare name')
    .requiredOption('--to <dir>', 'directory to write the files into (created if missing)')
    .option(
      '--parallel <n>',
      'a batch: downloads at once (default 4)',
      (text: string) => {
        const n = Number(text);
        if (!/^\d+$/.test(text) || n < 1 || n > 64)
          throw new InvalidArgumentError('must be a whole number from 1 to 64');
        return n;
      },
      4,
    )
    .option('--json', 'print the downloaded files as JSON', false)
    .action(async (id: string, options: { to: string; parallel: number; json: boolean }) => {
      const env = cliEnv();
      await withTemporal(env, async ({ client }) => {
        const found = await findWorkflow(client, id);
        if (found.kind === 'batch') {
          await batchOutputs(found, options, env.service?.url, cliMediaStore(env).store);
          return;
        }
        const summary = await pipelineSummary(found.handle);
        if (summary.status !== 'completed') {
          throw new CliError(
            `${found.workflowId} is ${summary.status}, not completed; outputs are downloaded from completed pipelines`,
            EXIT.failed,
          );
        }
        const files = await downloadOutputs(
          summary,
          path.resolve(options.to),
          env.service?.url,
          cliMediaStore(env).store,
        );
        if (options.json) printJson({ workflowId: found.workflowId, files });
        else
          for (const f of files)
            say(
              `${f.step}: ${f.file} (${f.bytes} bytes) from ${f.from === 'archive' ? `the archive (${f.media})` : f.url}`,
            );
      });
    });
}
