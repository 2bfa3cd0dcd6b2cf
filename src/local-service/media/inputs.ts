import { rename, stat, writeFile } from 'node:fs/promises';
import { extname, join, resolve, sep } from 'node:path';
import { MediaError } from './errors';
import { safeDownload, SafeFetchError } from '../../net';
import type { LookupFn } from '../../net/url-rules';

/** How inputs are read: own output URLs from disk, everything else under the address rules. */
export interface InputSourceOptions {
  allowPrivate: boolean;
  /** The service's public origin; `${ownOrigin}/files/<request_id>/<file_name>` is read from disk. */
  ownOrigin: string;
  ownFilesDir: string;
  maxInputBytes: number;
  fetchTimeoutMs: number;
  lookup?: LookupFn;
  /** Called once per input URL fetched (not own files, not data URIs): the input access log. */
  onFetch?: (entry: InputFetchEntry) => void;
}

/**
 * One line of the input access log: where an input came from and how the fetch ended. The query
 * string is reduced to its parameter names (a signed URL's signature is a credential).
 */
export interface InputFetchEntry {
  at: string;
  field: string;
  origin: string;
  path: string;
  queryParameters: string[];
  /** The URL carried an S3-style signature (X-Amz-Signature or Signature). */
  signed: boolean;
  outcome: 'ok' | 'refused' | 'failed';
  bytes?: number;
  reason?: string;
}

function fetchEntry(uri: string, field: string): Omit<InputFetchEntry, 'outcome'> {
  let url: URL | null = null;
  try {
    url = new URL(uri);
  } catch {
    // logged as given below, without a query
  }
  const queryParameters = url ? [...new Set(url.searchParams.keys())] : [];
  return {
    at: new Date().toISOString(),
    field,
    origin: url?.origin ?? 'invalid',
    path: url?.pathname ?? '',
    queryParameters,
    signed: queryParameters.some((name) => /^(x-amz-signature|signature)$/i.test(name)),
  };
}

const DATA_URI =
  /^data:([a-z0-9!#$&^_.+-]+\/[a-z0-9!#$&^_.+-]+)((?:;[a-z0-9-]+=[^;,]+)*);base64,([A-Za-z0-9+/]*={0,2})$/i;

/** File extensions by media type, so ffmpeg picks the right demuxer; unknown types are probed. */
const EXTENSIONS: Record<string, string> = {
  'image/png': '.png',
  'image/jpeg': '.jpg',
  'image/jpg': '.jpg',
  'image/webp': '.webp',
  'image/gif': '.gif',
  'image/bmp': '.bmp',
  'video/mp4': '.mp4',
  'video/quicktime': '.mov',
  'video/webm': '.webm',
  'video/x-matroska': '.mkv',
  'audio/mpeg': '.mp3',
  'audio/mp3': '.mp3',
  'audio/mp4': '.m4a',
  'audio/x-m4a': '.m4a',
  'audio/aac': '.aac',
  'audio/wav': '.wav',
  'audio/x-wav': '.wav',
  'audio/wave': '.wav',
  'audio/ogg': '.ogg',
  'audio/flac': '.flac',
  'audio/webm': '.webm',
};

function extensionFor(contentType: string | null | undefined, url?: string): string {
  const type = contentType?.split(';')[0]?.trim().toLowerCase();
  if (type && EXTENSIONS[type]) return EXTENSIONS[type];
  if (url) {
    try {
      const ext = extname(new URL(url).pathname).toLowerCase();
      if (/^\.[a-z0-9]{1,5}$/.test(ext)) return ext;
    } catch {
      // not a URL: no extension, ffmpeg probes the content
    }
  }
  return '';
}

/** Maps an own output URL to its file, or returns null when the URL is not one of ours. */
function ownFile(uri: string, options: InputSourceOptions, path: string): string | null {
  const prefix = `${options.ownOrigin.replace(/\/+$/, '')}/files/`;
  if (!uri.startsWith(prefix)) return null;
  const rest = uri.slice(prefix.length).split(/[?#]/)[0] ?? '';
  const segments = rest.split('/');
  let decoded: string[];
  try {
    decoded = segments.map((s) => decodeURIComponent(s));
  } catch {
    throw new MediaError('input_refused', 'is not a valid output URL of this service', path);
  }
  const safe = (s: string): boolean => s !== '' && s !== '.' && s !== '..' && !/[/\\\0]/.test(s);
  if (decoded.length !== 2 || !decoded.every(safe)) {
    throw new MediaError('input_refused', 'is not a valid output URL of this service', path);
  }
  const root = resolve(options.ownFilesDir);
  const file = resolve(root, decoded[0] ?? '', decoded[1] ?? '');
  if (!file.startsWith(root + sep))
    throw new MediaError('input_refused', 'is not a valid output URL of this service', path);
  return file;
}

/**
 * Makes one URI input available as a local file and returns its path: an own output URL maps to
 * its file on disk (never fetched), a data URI is decoded (size-limited), any other URL is
 * downloaded under the address rules. Throws MediaError with `path` set to the input field.
 * @param name Base name of the file written into `workDir`.
 */
export async function materialiseInput(
  uri: string,
  path: string,
  workDir: string,
  name: string,
  options: InputSourceOptions,
  signal: AbortSignal,
): Promise<string> {
  signal.throwIfAborted();
  const own = ownFile(uri, options, path);
  if (own) {
    const info = await stat(own).catch(() => null);
    if (!info?.isFile()) throw new MediaError('input_fetch_failed', 'names an output file that does not exist', path);
    return own;
  }
  if (uri.startsWith('data:')) {
    const match = DATA_URI.exec(uri);
    const data = match?.[3];
    if (!match || data === undefined) throw new MediaError('input_refused', 'is not a base64 data URI', path);
    const bytes = Math.floor((data.length * 3) / 4) - (data.endsWith('==') ? 2 : data.endsWith('=') ? 1 : 0);
    if (bytes > options.maxInputBytes) {
      throw new MediaError('input_refused', `is larger than the ${options.maxInputBytes} bytes allowed`, path);
    }
    const file = join(workDir, `${name}${extensionFor(match[1])}`);
    await writeFile(file, Buffer.from(data, 'base64'));
    return file;
  }
  const file = join(workDir, `${name}${extensionFor(null, uri)}`);
  const entry = options.onFetch ? fetchEntry(uri, path) : null;
  try {
    const meta = await safeDownload(uri, file, {
      allowPrivate: options.allowPrivate,
      // The port rule (443, 8443) is the webhook registration rule; inputs may use any port.
      ports: 'any',
      maxBytes: options.maxInputBytes,
      timeoutMs: options.fetchTimeoutMs,
      signal,
      ...(options.lookup ? { lookup: options.lookup } : {}),
    });
    if (entry) options.onFetch?.({ ...entry, outcome: 'ok', bytes: meta.size });
    const typed = extname(file) ? '' : extensionFor(meta.contentType);
    if (typed) {
      await rename(file, file + typed);
      return file + typed;
    }
  } catch (error) {
    if (!(error instanceof SafeFetchError)) throw error;
    const refused = error.code === 'refused' || error.code === 'too_large';
    if (entry) options.onFetch?.({ ...entry, outcome: refused ? 'refused' : 'failed', reason: error.message });
    throw new MediaError(refused ? 'input_refused' : 'input_fetch_failed', error.message, path);
  }
  return file;
}
