import { open, rm } from 'node:fs/promises';
import { LIMITS } from '../contract';
import { headerValue, pinnedRequest, REDIRECT_STATUSES } from './pinned-request';
import { validateUrl, type AddressRuleOptions } from './url-rules';
import { SafeFetchError } from './errors';

/** Options of a fetch under the address rules. */
export interface SafeFetchOptions extends AddressRuleOptions {
  /** Largest body accepted, in bytes (declared or streamed). */
  maxBytes: number;
  /** Deadline of the whole fetch, redirects included. */
  timeoutMs: number;
  signal?: AbortSignal;
  /** Redirects followed, each hop validated again; default 3 (LIMITS.webhookMaxRedirects). */
  maxRedirects?: number;
}

/** What was fetched. `url` is the final URL after redirects. */
export interface SafeFetchMeta {
  url: string;
  status: number;
  contentType: string | null;
  size: number;
  /** The Content-Length the answer declared, or null (chunked); `size` equals it on success. */
  declaredSize: number | null;
}

export interface SafeFetchResult extends SafeFetchMeta {
  body: Buffer;
}

const TIMEOUT_CODES = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);

async function fetchInto(
  url: string | URL,
  options: SafeFetchOptions,
  sink: (chunk: Buffer) => unknown,
): Promise<SafeFetchMeta> {
  options.signal?.throwIfAborted();
  const deadline = new AbortController();
  const timer = setTimeout(() => deadline.abort(), options.timeoutMs);
  const signal = options.signal ? AbortSignal.any([options.signal, deadline.signal]) : deadline.signal;
  const maxRedirects = options.maxRedirects ?? LIMITS.webhookMaxRedirects;
  const timeouts = {
    connectTimeoutMs: options.timeoutMs,
    headersTimeoutMs: options.timeoutMs,
    bodyTimeoutMs: options.timeoutMs,
  };
  let current: string | URL = url;
  try {
    for (let redirects = 0; ; redirects += 1) {
      const check = await validateUrl(current, options);
      if (!check.ok)
        throw new SafeFetchError(
          'refused',
          redirects ? `redirect ${redirects} refused: ${check.reason}` : check.reason,
        );
      signal.throwIfAborted();
      const response = await pinnedRequest(check.url, check.address, { method: 'GET', signal, timeouts });
      try {
        const { statusCode } = response;
        if (REDIRECT_STATUSES.includes(statusCode)) {
          const location = headerValue(response.headers.location);
          if (!location)
            throw new SafeFetchError('http_status', `redirect ${statusCode} without a Location`, statusCode);
          if (redirects >= maxRedirects)
            throw new SafeFetchError('too_many_redirects', `more than ${maxRedirects} redirects`);
          try {
            current = new URL(location, check.url);
          } catch {
            throw new SafeFetchError('refused', `redirect ${redirects + 1} has an invalid Location`);
          }
          continue;
        }
        if (statusCode < 200 || statusCode >= 300) {
          throw new SafeFetchError('http_status', `answered HTTP ${statusCode}`, statusCode);
        }
        const declared = Number(headerValue(response.headers['content-length']));
        if (Number.isFinite(declared) && declared > options.maxBytes) {
          throw new SafeFetchError(
            'too_large',
            `declares ${declared} bytes, more than the ${options.maxBytes} allowed`,
          );
        }
        let size = 0;
        for await (const chunk of response.body as AsyncIterable<Buffer>) {
          size += chunk.length;
          if (size > options.maxBytes)
            throw new SafeFetchError('too_large', `larger than the ${options.maxBytes} bytes allowed`);
          await sink(chunk);
        }
        if (Number.isFinite(declared) && size !== declared) {
          throw new SafeFetchError('network', `the answer ended after ${size} of the ${declared} bytes it declared`);
        }
        return {
          url: check.url.href,
          status: statusCode,
          contentType: headerValue(response.headers['content-type']) ?? null,
          size,
          declaredSize: Number.isFinite(declared) ? declared : null,
        };
      } finally {
        await response.close();
      }
    }
  } catch (error) {
    if (error instanceof SafeFetchError) throw error;
    if (options.signal?.aborted) throw options.signal.reason;
    const code = (error as { code?: string }).code;
    if (deadline.signal.aborted || (code && TIMEOUT_CODES.has(code))) {
      throw new SafeFetchError('timeout', `no complete answer within ${options.timeoutMs} ms`);
    }
    throw new SafeFetchError('network', `fetch failed: ${(error as Error).message}${code ? ` (${code})` : ''}`);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * GETs a URL under the address rules: every hop (at most 3 redirects) is validated again and the
 * connection is pinned to the validated address (no DNS rebinding), the body is capped at
 * `maxBytes`, and the whole fetch at `timeoutMs`. Throws SafeFetchError, or the abort reason.
 */
export async function safeFetch(url: string | URL, options: SafeFetchOptions): Promise<SafeFetchResult> {
  const chunks: Buffer[] = [];
  const meta = await fetchInto(url, options, (chunk) => chunks.push(chunk));
  return { ...meta, body: Buffer.concat(chunks) };
}

/** Like `safeFetch`, but streams the body to `file` (removed again on failure). */
export async function safeDownload(url: string | URL, file: string, options: SafeFetchOptions): Promise<SafeFetchMeta> {
  const handle = await open(file, 'w');
  try {
    const meta = await fetchInto(url, options, (chunk) => handle.write(chunk));
    await handle.close();
    return meta;
  } catch (error) {
    await handle.close().catch(() => undefined);
    await rm(file, { force: true });
    throw error;
  }
}
