import * as fs from 'node:fs';
import * as path from 'node:path';
import { copyArchivedOutput } from '../../media/archived-copy';
import { digestOf } from '../../media/reference';
import { hashFile, MediaStoreError, type MediaStore } from '../../media/store';
import { safeDownload, SafeFetchError } from '../../net';
import type { BatchItemResult } from '../../workflows/batch-types';
import { CliError } from './errors';
import { EXIT } from './exit';

/** Largest output file downloaded (the longest clips at 720p stay far below). */
export const MAX_OUTPUT_BYTES = 4 * 1024 * 1024 * 1024;
/** How long one output download may take. */
export const DOWNLOAD_TIMEOUT_MS = 15 * 60_000;

/** One item's final output on disk. */
export interface BatchOutputFile {
  name: string;
  file: string;
  bytes: number;
  /** `skipped`: the file was there already with the archived copy's SHA-256. */
  from: 'archive' | 'service' | 'skipped';
}

/** Counts for a progress line. */
export interface BatchOutputsProgress {
  done: number;
  total: number;
  skipped: number;
  bytes: number;
}

/** The file extension of an output: its URL's, else from its media type (`.mp4` when unknown). */
export function extensionOf(url: string, type: string | null | undefined): string {
  const fromPath = path.extname(new URL(url).pathname).toLowerCase();
  if (/^\.[a-z0-9]{2,5}$/.test(fromPath)) return fromPath;
  // A frame taken from a video (an operation's image output).
  if (type?.includes('image/png')) return '.png';
  if (type?.includes('image/jpeg')) return '.jpg';
  if (type?.includes('image/webp')) return '.webp';
  if (type?.includes('webm')) return '.webm';
  if (type?.includes('quicktime')) return '.mov';
  return '.mp4';
}

async function downloadOne(
  result: BatchItemResult & { finalOutputUrl: string },
  dir: string,
  serviceOrigin: string | null,
  store: MediaStore,
): Promise<BatchOutputFile> {
  const url = result.finalOutputUrl;
  const copy = result.finalOutput;
  const file = path.join(dir, `${result.name}${extensionOf(url, copy?.type)}`);
  const sha = copy ? digestOf(copy.$media) : null;
  // Resumable: a file already there with the archived copy's digest is not fetched again.
  if (sha && fs.existsSync(file) && (await hashFile(file)).sha256 === sha)
    return { name: result.name, file, bytes: fs.statSync(file).size, from: 'skipped' };
  const partial = `${file}.part`;
  if (copy) {
    try {
      const bytes = await copyArchivedOutput(store, copy, partial);
      fs.renameSync(partial, file);
      return { name: result.name, file, bytes, from: 'archive' };
    } catch (error) {
      fs.rmSync(partial, { force: true });
      if (error instanceof MediaStoreError && error.code === 'integrity')
        throw new CliError(error.message, EXIT.failed);
      if (!(error instanceof MediaStoreError && error.code === 'not_found')) throw error;
    }
  }
  try {
    const meta = await safeDownload(url, partial, {
      allowPrivate: serviceOrigin !== null && new URL(url).origin === serviceOrigin,
      maxBytes: MAX_OUTPUT_BYTES,
      timeoutMs: DOWNLOAD_TIMEOUT_MS,
    });
    fs.renameSync(partial, file);
    return { name: result.name, file, bytes: meta.size, from: 'service' };
  } catch (error) {
    fs.rmSync(partial, { force: true });
    if (error instanceof SafeFetchError) {
      const exit = error.code === 'network' || error.code === 'timeout' ? EXIT.unavailable : EXIT.failed;
      throw new CliError(`cannot download the output of ${result.name} (${url}): ${error.message}`, exit);
    }
    throw error;
  }
}

/**
 * Downloads the final output of every completed item of a batch into `dir` as `<item name><ext>`,
 * at most `parallel` at once: from the media-store archive where the item's result names a copy,
 * else from the service URL (address rules; the configured service's own origin may be private).
 * Resumable: a file whose SHA-256 is the archived copy's is skipped; files appear whole (written as
 * `.part`, then renamed). `onProgress` is called after each item.
 */
export async function downloadBatchOutputs(
  results: readonly BatchItemResult[],
  dir: string,
  options: {
    serviceUrl?: string;
    store: MediaStore;
    parallel: number;
    onProgress?: (progress: BatchOutputsProgress) => void;
  },
): Promise<BatchOutputFile[]> {
  fs.mkdirSync(dir, { recursive: true });
  const serviceOrigin = options.serviceUrl ? new URL(options.serviceUrl).origin : null;
  const todo = results.filter(
    (r): r is BatchItemResult & { finalOutputUrl: string } => r.status === 'completed' && !!r.finalOutputUrl,
  );
  const files: BatchOutputFile[] = [];
  const progress: BatchOutputsProgress = { done: 0, total: todo.length, skipped: 0, bytes: 0 };
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < todo.length) {
      const result = todo[next] as BatchItemResult & { finalOutputUrl: string };
      next += 1;
      const file = await downloadOne(result, dir, serviceOrigin, options.store);
      files.push(file);
      progress.done += 1;
      if (file.from === 'skipped') progress.skipped += 1;
      else progress.bytes += file.bytes;
      options.onProgress?.({ ...progress });
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(options.parallel, todo.length)) }, worker));
  return files.sort((a, b) => a.name.localeCompare(b.name));
}
