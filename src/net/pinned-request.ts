import type { LookupFunction } from 'node:net';
import { Agent, request, type Dispatcher } from 'undici';
import type { ResolvedAddress } from './url-rules';

/** Timeouts of a pinned connection, in milliseconds. */
export interface PinnedTimeouts {
  connectTimeoutMs?: number;
  headersTimeoutMs?: number;
  bodyTimeoutMs?: number;
}

/**
 * An undici Agent whose every connection goes to `pinned`, whatever the URL's host name resolves
 * to by then. The host name still travels in the Host header and TLS SNI, so certificates are
 * checked against the name. This closes the DNS-rebinding gap between validating an address and
 * connecting to it.
 */
export function createPinnedAgent(pinned: ResolvedAddress, timeouts: PinnedTimeouts = {}): Agent {
  const lookup: LookupFunction = (_hostname, options, callback) => {
    if (options.all) callback(null, [{ address: pinned.address, family: pinned.family }]);
    else callback(null, pinned.address, pinned.family);
  };
  return new Agent({
    connect: { lookup, timeout: timeouts.connectTimeoutMs ?? 10_000 },
    headersTimeout: timeouts.headersTimeoutMs ?? 10_000,
    bodyTimeout: timeouts.bodyTimeoutMs ?? 10_000,
    connections: 1,
  });
}

/** A response of one hop; `close` discards what is left of the body and the connection (call it in every case). */
export interface PinnedResponse {
  statusCode: number;
  headers: Dispatcher.ResponseData['headers'];
  body: Dispatcher.ResponseData['body'];
  close(): Promise<void>;
}

/**
 * One request that follows no redirect, connected to the validated address only.
 * @param url The URL as validated.
 * @param pinned The address validated for the URL's host.
 */
export async function pinnedRequest(
  url: URL,
  pinned: ResolvedAddress,
  init: {
    method: 'GET' | 'HEAD' | 'POST';
    signal?: AbortSignal;
    timeouts?: PinnedTimeouts;
    headers?: Record<string, string>;
    body?: string;
  },
): Promise<PinnedResponse> {
  const agent = createPinnedAgent(pinned, init.timeouts);
  const close = async (): Promise<void> => {
    await agent.destroy().catch(() => undefined);
  };
  try {
    const response = await request(url, {
      method: init.method,
      dispatcher: agent,
      signal: init.signal,
      headers: { 'user-agent': 'reelflow-local-service', accept: '*/*', ...init.headers },
      ...(init.body !== undefined ? { body: init.body } : {}),
    });
    const { body } = response;
    const closeAll = async (): Promise<void> => {
      // Destroying an unread body emits an abort error; nobody is listening for it by then.
      body.on('error', () => undefined);
      body.destroy();
      await close();
    };
    return { statusCode: response.statusCode, headers: response.headers, body, close: closeAll };
  } catch (error) {
    await close();
    throw error;
  }
}

/** First value of a response header. */
export function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

export const REDIRECT_STATUSES: readonly number[] = [301, 302, 303, 307, 308];
