import * as fs from 'node:fs';
import * as path from 'node:path';
import { copyArchivedOutput } from '../media/archived-copy';
import { probe, runFfmpeg } from '../media/ffmpeg';
import type { ArchivedOutput } from '../media/reference';
import { MediaStoreError, type MediaStore } from '../media/store';
import { safeDownload, SafeFetchError } from '../net';
import type { ReportImage, ReportVideo } from './model';

/** Largest output fetched for a report (far above the longest clips at 1080p). */
const MAX_VIDEO_BYTES = 2 * 1024 * 1024 * 1024;
const DOWNLOAD_TIMEOUT_MS = 10 * 60_000;
/** Poster frames are scaled to this width: enough for a card, small enough to embed. */
const POSTER_WIDTH = 640;

/** Where an output is read from: the archived copy when there is one, else the service URL. */
export interface VideoSource {
  url: string;
  fileName: string;
  contentType: string;
  /** The pipeline's archived copy in the media store, preferred over `url` (which may have expired at the service). */
  archived?: ArchivedOutput;
}

export interface FetchOptions {
  /** Scratch directory for downloads and posters. */
  workDir: string;
  /** Origin allowed to be private/http (the configured service, e.g. a local one on loopback). */
  serviceOrigin: string | null;
  /** The media store archived outputs are read from; without it the service URL is used. */
  store?: MediaStore;
}

/** A fetched, probed output with its poster (the file stays in workDir until embedded or copied). */
export interface FetchedVideo {
  video: Omit<ReportVideo, 'src'>;
  file: string | null;
}

/**
 * Fetches one output (archived copy first), probes it and extracts a poster frame. Never throws for
 * a bad or missing file: the video carries `problem` instead, so one broken output does not lose
 * the whole report.
 */
export async function fetchVideo(source: VideoSource, name: string, options: FetchOptions): Promise<FetchedVideo> {
  const file = path.join(options.workDir, `${name}${extensionOf(source)}`);
  const empty = {
    bytes: 0,
    durationSeconds: 0,
    width: null,
    height: null,
    videoCodec: null,
    poster: null,
    posterAtSeconds: null,
  };
  let base: Pick<ReportVideo, 'url' | 'fileName' | 'contentType' | 'archivedFrom'> = {
    url: source.url,
    fileName: source.fileName,
    contentType: source.contentType,
  };
  try {
    if (await fetchArchived(source, file, options))
      base = { ...base, archivedFrom: (source.archived as ArchivedOutput).$media };
    else await fetchTo(source.url, file, options);
  } catch (error) {
    return {
      video: { ...base, ...empty, problem: `cannot fetch ${source.url}: ${(error as Error).message}` },
      file: null,
    };
  }
  const bytes = fs.statSync(file).size;
  try {
    const probed = await probe(file);
    const stream = probed.streams.find((s) => s.codecType === 'video');
    if (!stream) return { video: { ...base, ...empty, bytes, problem: 'the file has no video stream' }, file };
    const at = posterSecond(probed.duration);
    const posterFile = path.join(options.workDir, `${name}.poster.jpg`);
    await runFfmpeg([
      '-ss',
      at.toFixed(3),
      '-i',
      file,
      '-frames:v',
      '1',
      '-vf',
      `scale='min(${POSTER_WIDTH},iw)':-2`,
      '-q:v',
      '4',
      posterFile,
    ]);
    const poster = `data:image/jpeg;base64,${fs.readFileSync(posterFile).toString('base64')}`;
    return {
      video: {
        ...base,
        bytes,
        durationSeconds: probed.duration,
        width: probed.width,
        height: probed.height,
        videoCodec: stream.codecName,
        poster,
        posterAtSeconds: at,
      },
      file,
    };
  } catch (error) {
    return {
      video: { ...base, ...empty, bytes, problem: `ffprobe/ffmpeg cannot read it: ${(error as Error).message}` },
      file,
    };
  }
}

/** A frame a little into the clip (the first one is often black), never past its middle. */
export function posterSecond(durationSeconds: number): number {
  if (!(durationSeconds > 0)) return 0;
  return Math.min(1, durationSeconds / 2);
}

/**
 * Copies the archived copy out of the media store (SHA-256 checked). False when there is none to
 * read (not archived, no store configured, or no longer in the store): the service URL is read then.
 */
async function fetchArchived(source: VideoSource, file: string, options: FetchOptions): Promise<boolean> {
  if (!source.archived || !options.store) return false;
  try {
    await copyArchivedOutput(options.store, source.archived, file);
    return true;
  } catch (error) {
    fs.rmSync(file, { force: true });
    if (error instanceof MediaStoreError && error.code === 'not_found') return false;
    throw error;
  }
}

async function fetchTo(url: string, file: string, options: FetchOptions): Promise<void> {
  const own = options.serviceOrigin !== null && new URL(url).origin === options.serviceOrigin;
  try {
    await safeDownload(url, file, { allowPrivate: own, maxBytes: MAX_VIDEO_BYTES, timeoutMs: DOWNLOAD_TIMEOUT_MS });
  } catch (error) {
    if (error instanceof SafeFetchError) throw new Error(`${error.code}: ${error.message}`);
    throw error;
  }
}

function extensionOf(source: VideoSource): string {
  const fromName = path.extname(source.fileName).toLowerCase();
  if (/^\.[a-z0-9]{2,5}$/.test(fromName)) return fromName;
  if (source.contentType.includes('webm')) return '.webm';
  if (source.contentType.includes('quicktime')) return '.mov';
  return '.mp4';
}

/** How the players get their media: inside the page, or as files beside it. */
export type MediaPlacement = { mode: 'embed' } | { mode: 'beside'; dir: string; relativeTo: string };

/** Turns a fetched video into the report's video: its `src` a data URI or a copied file's relative path. */
export function placeVideo(fetched: FetchedVideo, placement: MediaPlacement): ReportVideo {
  if (!fetched.file || fetched.video.problem) return { ...fetched.video, src: '' };
  if (placement.mode === 'embed') {
    const { contentType } = fetched.video;
    const type = /^(video|image)\//.test(contentType) ? contentType : 'video/mp4';
    return { ...fetched.video, src: `data:${type};base64,${fs.readFileSync(fetched.file).toString('base64')}` };
  }
  fs.mkdirSync(placement.dir, { recursive: true });
  const target = path.join(placement.dir, path.basename(fetched.file));
  fs.copyFileSync(fetched.file, target);
  const relative = path.relative(placement.relativeTo, target).split(path.sep).map(encodeURIComponent).join('/');
  return { ...fetched.video, src: relative };
}

/** Largest image embedded in a report (a frame at 4K is a few MiB). */
const MAX_IMAGE_BYTES = 32 * 1024 * 1024;

/**
 * Fetches one output image (archived copy first) and reads its size with ffprobe; it is always
 * embedded (the page's Content-Security-Policy allows images from data URIs only). Never throws:
 * the image carries `problem` instead, so one broken image does not lose the report.
 */
export async function fetchImage(source: VideoSource, name: string, options: FetchOptions): Promise<ReportImage> {
  const file = path.join(options.workDir, `${name}${imageExtensionOf(source)}`);
  const base: Omit<ReportImage, 'src' | 'bytes' | 'width' | 'height'> = {
    url: source.url,
    fileName: source.fileName,
    contentType: source.contentType,
  };
  const none = { bytes: 0, width: null, height: null, src: '' };
  try {
    if (await fetchArchived(source, file, options)) base.archivedFrom = (source.archived as ArchivedOutput).$media;
    else await fetchTo(source.url, file, options);
  } catch (error) {
    return { ...base, ...none, problem: `cannot fetch ${source.url}: ${(error as Error).message}` };
  }
  const bytes = fs.statSync(file).size;
  if (bytes > MAX_IMAGE_BYTES) return { ...base, ...none, bytes, problem: `larger than ${MAX_IMAGE_BYTES} bytes` };
  try {
    const probed = await probe(file);
    if (!probed.width || !probed.height) return { ...base, ...none, bytes, problem: 'the file is not an image' };
    const type = source.contentType.startsWith('image/') ? source.contentType : 'image/png';
    const src = `data:${type};base64,${fs.readFileSync(file).toString('base64')}`;
    return { ...base, bytes, width: probed.width, height: probed.height, src };
  } catch (error) {
    return { ...base, ...none, bytes, problem: `ffprobe cannot read it: ${(error as Error).message}` };
  }
}

function imageExtensionOf(source: VideoSource): string {
  const fromName = path.extname(source.fileName).toLowerCase();
  if (/^\.[a-z0-9]{2,5}$/.test(fromName)) return fromName;
  return source.contentType.includes('jpeg') ? '.jpg' : '.png';
}
