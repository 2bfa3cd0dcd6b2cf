import { createWriteStream } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { MEDIA_LIMITS } from '../../contract';
import { probe, type ProbeResult } from '../../media/ffmpeg';
import { FfmpegError } from '../../media/errors';
import { digestOf, isMediaRef, mediaAddress } from '../../media/reference';
import { MediaStoreError, type MediaStore } from '../../media/store';
import { safeDownload, SafeFetchError } from '../../net';
import type { OpMedia } from '../../pipeline-spec/steps/op-types';
import { OpInputInvalidError, OpInputUnavailableError } from './errors';

/**
 * An operation's inputs as local files: a media-store reference is read from the store (an archived
 * output or an earlier operation's output, no download), a data URI decoded, a URL downloaded under
 * the address rules (the configured service's own origin may be private or plain http, as its
 * outputs are on a local stack). Each file is probed, so a wrong input fails naming its field.
 */

/** What an operation reads of its inputs. */
export interface InputSource {
  store: MediaStore;
  /** The configured service's origin: its output URLs may be private or plain http (local use). */
  serviceOrigin?: string;
  signal: AbortSignal;
  /** Deadline of one download. */
  timeoutMs: number;
}

/** One input on disk and what ffprobe says of it. */
export interface LocalInput {
  file: string;
  probe: ProbeResult;
}

const DATA_URI = /^data:[^;,]*(;[^,]*)?;base64,(.*)$/s;

/** Fetches `media` (the input at `field`) into `dir` and probes it. */
export async function localInput(media: OpMedia, field: string, dir: string, from: InputSource): Promise<LocalInput> {
  const file = join(dir, `input-${field.replace(/\W+/g, '-')}`);
  if (isMediaRef(media)) await fromStore(media, field, file, from);
  else if (typeof media === 'string' && media.startsWith('data:')) await fromDataUri(media, field, file);
  else if (typeof media === 'string') await fromUrlOrStore(media, field, file, from);
  else throw new OpInputInvalidError('must be a URL, a data URI or a media reference', field);
  try {
    return { file, probe: await probe(file, { signal: from.signal }) };
  } catch (error) {
    if (error instanceof FfmpegError) throw new OpInputInvalidError('is not a media file ffprobe can read', field);
    throw error;
  }
}

async function fromStore(
  ref: { $media: string; bytes: number; url?: string },
  field: string,
  file: string,
  from: InputSource,
) {
  const sha = digestOf(ref.$media);
  if (!sha) throw new OpInputInvalidError(`${ref.$media} is not a sha256: media address`, field);
  try {
    const object = await from.store.stat(sha);
    if (!object) {
      // An archived output missing from the store is still read from the service while it serves it.
      if (ref.url) return fromUrl(ref.url, field, file, from);
      throw new OpInputInvalidError(`${ref.$media} is not in the media store ${from.store.location}`, field);
    }
    if (object.bytes !== ref.bytes)
      throw new OpInputInvalidError(
        `${ref.$media} has ${object.bytes} bytes in the store, the reference says ${ref.bytes}`,
        field,
      );
    await pipeline(await from.store.read(sha), createWriteStream(file), { signal: from.signal });
  } catch (error) {
    if (error instanceof MediaStoreError)
      throw new OpInputUnavailableError(`cannot read ${ref.$media}: ${error.message}`, field);
    throw error;
  }
}

/** A stored object's path in a URL: `objects/<sha256>` (S3) or `objects/<ab>/<sha256>` (the filesystem). */
const STORED_OBJECT_PATH = /\/objects\/(?:[0-9a-f]{2}\/)?([0-9a-f]{64})$/;

/**
 * An earlier operation's output URL (a signed URL, or the filesystem store's location) names an
 * object of this store: read it from there, with no download. Any other URL is downloaded.
 */
async function fromUrlOrStore(url: string, field: string, file: string, from: InputSource) {
  let sha: string | undefined;
  try {
    sha = STORED_OBJECT_PATH.exec(new URL(url).pathname)?.[1];
  } catch {
    throw new OpInputInvalidError(`${url.slice(0, 80)} is not a URL`, field);
  }
  const stored = sha ? await from.store.stat(sha).catch(() => null) : null;
  if (sha && stored) return fromStore({ $media: mediaAddress(sha), bytes: stored.bytes }, field, file, from);
  return fromUrl(url, field, file, from);
}

async function fromDataUri(uri: string, field: string, file: string) {
  const match = DATA_URI.exec(uri);
  if (!match) throw new OpInputInvalidError('must be a base64 data URI (data:<type>;base64,<data>)', field);
  await writeFile(file, Buffer.from(match[2] ?? '', 'base64'));
}

async function fromUrl(url: string, field: string, file: string, from: InputSource) {
  let own = false;
  try {
    own = from.serviceOrigin !== undefined && new URL(url).origin === new URL(from.serviceOrigin).origin;
  } catch {
    throw new OpInputInvalidError(`${url.slice(0, 80)} is not a URL`, field);
  }
  try {
    await safeDownload(url, file, {
      allowPrivate: own,
      maxBytes: MEDIA_LIMITS.maxObjectBytes,
      timeoutMs: from.timeoutMs,
      signal: from.signal,
    });
  } catch (error) {
    if (!(error instanceof SafeFetchError)) throw error;
    const later =
      error.code === 'network' ||
      error.code === 'timeout' ||
      (error.code === 'http_status' && (error.status ?? 0) >= 500);
    if (later) throw new OpInputUnavailableError(`cannot fetch ${url}: ${error.message}`, field);
    throw new OpInputInvalidError(`cannot fetch ${url}: ${error.message}`, field);
  }
}

/** Throws OpInputInvalid unless the input has a video stream. */
export function requireVideo(input: LocalInput, field: string): void {
  if (!input.probe.streams.some((s) => s.codecType === 'video') || !input.probe.width || !input.probe.height)
    throw new OpInputInvalidError('is not a video (ffprobe finds no video stream)', field);
}

/** Throws OpInputInvalid unless the input has an audio stream. */
export function requireAudio(input: LocalInput, field: string): void {
  if (!hasAudio(input)) throw new OpInputInvalidError('has no audio stream', field);
}

/** True when the input has an audio stream. */
export function hasAudio(input: LocalInput): boolean {
  return input.probe.streams.some((s) => s.codecType === 'audio');
}
