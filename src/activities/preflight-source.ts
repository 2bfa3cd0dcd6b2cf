import { LIMITS } from '../contract';
import { InputHeadError } from './errors';
import { headerValue, pinnedRequest, REDIRECT_STATUSES } from '../net/pinned-request';
import { validateUrl, type AddressRuleOptions } from '../net/url-rules';

/**
 * What preflight learns about one input without downloading it: the first bytes (for the media type
 * and, for a clip, its length), the declared type and the whole size. Reads a URL under the spec's
 * address rules (every redirect validated again, the connection pinned to the validated address).
 */

/** The head of an input. `size` is the whole size when known (Content-Range / Content-Length / data URI). */
export interface InputHead {
  contentType: string | null;
  size: number | null;
  head: Buffer;
  /** Final URL after redirects (URLs only). */
  url?: string;
}

const DATA_URI = /^data:([^;,]+)((?:;[^;,]+)*);base64,(.*)$/is;

/** Decodes a base64 data URI (the contract has checked its shape); null when it is not one. */
export function readDataUri(value: string, maxHeadBytes: number): InputHead | null {
  const match = DATA_URI.exec(value);
  if (!match) return null;
  const bytes = Buffer.from(match[3] ?? '', 'base64');
  return {
    contentType: (match[1] ?? '').toLowerCase(),
    size: bytes.length,
    head: bytes.subarray(0, Math.max(maxHeadBytes, 0)),
  };
}

/** Whole size from `Content-Range: bytes 0-99/1234`, or from Content-Length on a 200. */
function sizeOf(status: number, headers: Record<string, string | string[] | undefined>): number | null {
  if (status === 206) {
    const total = /\/(\d+)\s*$/.exec(headerValue(headers['content-range']) ?? '')?.[1];
    return total !== undefined ? Number(total) : null;
  }
  const length = Number(headerValue(headers['content-length']));
  return Number.isFinite(length) && headerValue(headers['content-length']) !== undefined ? length : null;
}

/**
 * A ranged GET of the first `maxHeadBytes` of `url` (HEAD is not used: a presigned GET URL refuses
 * it). A server that ignores Range answers 200; reading stops after `maxHeadBytes` either way.
 */
export async function readUrlHead(
  url: string,
  rules: AddressRuleOptions,
  options: { maxHeadBytes: number; timeoutMs: number; signal?: AbortSignal },
): Promise<InputHead> {
  const deadline = AbortSignal.timeout(options.timeoutMs);
  const signal = options.signal ? AbortSignal.any([options.signal, deadline]) : deadline;
  const timeouts = {
    connectTimeoutMs: options.timeoutMs,
    headersTimeoutMs: options.timeoutMs,
    bodyTimeoutMs: options.timeoutMs,
  };
  let current: string | URL = url;
  for (let redirects = 0; ; redirects += 1) {
    const check = await validateUrl(current, rules);
    if (!check.ok)
      throw new InputHeadError(redirects ? `redirect ${redirects} refused: ${check.reason}` : check.reason, true);
    let response;
    try {
      response = await pinnedRequest(check.url, check.address, {
        method: 'GET',
        signal,
        timeouts,
        headers: { range: `bytes=0-${options.maxHeadBytes - 1}` },
      });
    } catch (error) {
      if (options.signal?.aborted) throw options.signal.reason;
      const code = (error as { code?: string }).code;
      if (deadline.aborted)
        throw new InputHeadError(`${check.url.host} gave no answer within ${options.timeoutMs} ms`, false);
      throw new InputHeadError(
        `${check.url.host} cannot be reached: ${(error as Error).message}${code ? ` (${code})` : ''}`,
        code === 'ECONNREFUSED',
      );
    }
    try {
      const status = response.statusCode;
      if (REDIRECT_STATUSES.includes(status)) {
        const location = headerValue(response.headers.location);
        if (!location) throw new InputHeadError(`answered ${status} without a Location`, true);
        if (redirects >= LIMITS.webhookMaxRedirects)
          throw new InputHeadError(`more than ${LIMITS.webhookMaxRedirects} redirects`, true);
        current = new URL(location, check.url);
        continue;
      }
      if (status < 200 || status >= 300) {
        // 404/403/410 say the file is not there for the service either; 5xx and 429 may pass later.
        throw new InputHeadError(
          `answered HTTP ${status}`,
          status >= 400 && status < 500 && status !== 408 && status !== 429,
        );
      }
      const chunks: Buffer[] = [];
      let read = 0;
      for await (const chunk of response.body as AsyncIterable<Buffer>) {
        chunks.push(chunk);
        read += chunk.length;
        if (read >= options.maxHeadBytes) break;
      }
      return {
        contentType: headerValue(response.headers['content-type'])?.split(';')[0]?.trim().toLowerCase() || null,
        size: sizeOf(status, response.headers),
        head: Buffer.concat(chunks).subarray(0, options.maxHeadBytes),
        url: check.url.href,
      };
    } catch (error) {
      if (error instanceof InputHeadError) throw error;
      if (options.signal?.aborted) throw options.signal.reason;
      if (deadline.aborted)
        throw new InputHeadError(`${check.url.host} gave no answer within ${options.timeoutMs} ms`, false);
      throw new InputHeadError(`reading ${check.url.host} failed: ${(error as Error).message}`, false);
    } finally {
      await response.close();
    }
  }
}

/** Media type told by the first bytes (magic numbers), for servers that send none or a generic one. */
export function sniffMediaType(head: Buffer): string | null {
  const ascii = (start: number, end: number) => head.subarray(start, end).toString('latin1');
  if (head.length >= 8 && head.readUInt32BE(0) === 0x89504e47) return 'image/png';
  if (head.length >= 3 && head[0] === 0xff && head[1] === 0xd8 && head[2] === 0xff) return 'image/jpeg';
  if (ascii(0, 4) === 'GIF8') return 'image/gif';
  if (ascii(0, 4) === 'RIFF' && ascii(8, 12) === 'WEBP') return 'image/webp';
  if (ascii(0, 4) === 'RIFF' && ascii(8, 12) === 'WAVE') return 'audio/wav';
  if (ascii(0, 4) === 'OggS') return 'audio/ogg';
  if (ascii(0, 4) === 'fLaC') return 'audio/flac';
  if (ascii(0, 3) === 'ID3' || (head.length >= 2 && head[0] === 0xff && ((head[1] ?? 0) & 0xe0) === 0xe0))
    return 'audio/mpeg';
  if (ascii(4, 8) === 'ftyp') {
    const brand = ascii(8, 12);
    if (brand === 'M4A ' || brand === 'M4B ') return 'audio/mp4';
    return brand === 'qt  ' ? 'video/quicktime' : 'video/mp4';
  }
  if (head.length >= 4 && head.readUInt32BE(0) === 0x1a45dfa3) return 'video/webm';
  return null;
}
