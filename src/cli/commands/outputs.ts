import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Command } from 'commander';
import { copyArchivedOutput } from '../../media/archived-copy';
import { MediaStoreError, type MediaStore } from '../../media/store';
import { safeDownload, SafeFetchError } from '../../net';
import type { PipelineSummary } from '../../workflows/pipeline-types';
import { cliEnv, cliMediaStore, findWorkflow, pipelineSummary, withTemporal } from '../lib/context';
import { CliError } from '../lib/errors';
import { EXIT } from '../lib/exit';
import { printJson, say } from '../lib/output';

/** Largest output file downloaded (the longest clips at 720p stay far below). */
const MAX_OUTPUT_BYTES = 4 * 1024 * 1024 * 1024;
const DOWNLOAD_TIMEOUT_MS = 15 * 60_000;

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

function extensionOf(url: string, contentType: string | null): string {
  const fromPath = path.extname(new URL(url).pathname).toLowerCase();
  if (/^\.[a-z0-9]{2,5}$/.test(fromPath)) return fromPath;
  if (contentType?.includes('webm')) return '.webm';
  if (contentType?.includes('quicktime')) return '.mov';
  return '.mp4';
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
    const videos = summary.outputs[step.id]?.videos ?? [];
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

/** `reelflow outputs <id> --to <dir>`: download the output files of a pipeline. */
export function registerOutputsCommand(program: Command): void {
  program
    .command('outputs')
    .description(
      'Download the output videos of a pipeline into a directory, from the media-store archive where archived, else from the service (exit 0 done, 1 pipeline not completed, 4 unknown id)',
    )
    .argument('<id>', 'pipeline workflow id (pipeline/<name>) or its name')
    .requiredOption('--to <dir>', 'directory to write the files into (created if missing)')
    .option('--json', 'print the downloaded files as JSON', false)
    .action(async (id: string, options: { to: string; json: boolean }) => {
      const env = cliEnv();
      await withTemporal(env, async ({ client }) => {
        const found = await findWorkflow(client, id);
        if (found.kind !== 'pipeline')
          throw new CliError(
            `${found.workflowId} is a batch; download each pipeline's outputs by its id (see \`reelflow status ${found.workflowId}\`)`,
            EXIT.usage,
          );
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
