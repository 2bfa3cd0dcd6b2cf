import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type OutputVideo, MEDIA_LIMITS } from '../contract';
import { safeDownload, SafeFetchError } from '../net';
import { ArchiveError } from './errors';
import type { ArchivedOutput } from './reference';
import { putMediaFile, type MediaStore } from './store';

export type { ArchivedOutput } from './reference';

export interface ArchiveOptions {
  store: MediaStore;
  /** The pipeline recorded as the copy's referrer. */
  pipeline: string;
  /** Origin of the configured service: its output URLs may be private or plain http (local use). */
  serviceOrigin?: string;
  timeoutMs?: number;
  signal?: AbortSignal;
}

function baseType(type: string | null | undefined): string {
  return (type ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
}

/**
 * Copies one output into the store: streamed to a temporary file under the address rules, checked
 * (every byte the answer declared arrived, the media type is the one the service reported), hashed,
 * stored under its SHA-256 and referenced by the pipeline.
 */
export async function archiveOutput(video: OutputVideo, options: ArchiveOptions): Promise<ArchivedOutput> {
  const dir = await mkdtemp(join(tmpdir(), 'reelflow-archive-'));
  try {
    let own = false;
    try {
      own = options.serviceOrigin !== undefined && new URL(video.url).origin === new URL(options.serviceOrigin).origin;
    } catch {
      throw new ArchiveError(`output ${video.file_name}: ${video.url} is not a URL`, false);
    }
    const file = join(dir, 'output');
    let meta;
    try {
      meta = await safeDownload(video.url, file, {
        allowPrivate: own,
        maxBytes: MEDIA_LIMITS.maxObjectBytes,
        timeoutMs: options.timeoutMs ?? 15 * 60_000,
        ...(options.signal ? { signal: options.signal } : {}),
      });
    } catch (error) {
      if (!(error instanceof SafeFetchError)) throw error;
      const retryable =
        error.code === 'network' ||
        error.code === 'timeout' ||
        (error.code === 'http_status' && (error.status ?? 0) >= 500);
      throw new ArchiveError(`output ${video.file_name}: cannot copy ${video.url}: ${error.message}`, retryable);
    }
    const reported = baseType(video.content_type);
    const served = baseType(meta.contentType);
    if (served && reported && served !== reported) {
      throw new ArchiveError(`output ${video.file_name}: the service reported ${reported} but serves ${served}`, false);
    }
    if (meta.size === 0) throw new ArchiveError(`output ${video.file_name}: ${video.url} is empty`, false);
    const ref = await putMediaFile(
      options.store,
      file,
      reported || served || 'application/octet-stream',
      options.pipeline,
    );
    return { ...ref, url: video.url, file_name: video.file_name };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
