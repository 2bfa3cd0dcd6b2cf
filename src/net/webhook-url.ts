import { LIMITS } from '../contract';
import { headerValue, pinnedRequest, REDIRECT_STATUSES, type PinnedResponse } from './pinned-request';
import { validateUrl, type AddressRuleOptions } from './url-rules';

/** Options of a webhook endpoint check. */
export interface WebhookUrlOptions extends AddressRuleOptions {
  /** Probe the endpoint and validate each redirect hop (default true). */
  fetchRedirects?: boolean;
  /** Deadline of the whole probe; default 5000 ms. */
  probeTimeoutMs?: number;
}

export type WebhookUrlCheck = { ok: true } | { ok: false; reason: string };

async function probeOnce(
  url: URL,
  address: Parameters<typeof pinnedRequest>[1],
  signal: AbortSignal,
): Promise<PinnedResponse> {
  const timeouts = { connectTimeoutMs: 5_000, headersTimeoutMs: 5_000, bodyTimeoutMs: 5_000 };
  const head = await pinnedRequest(url, address, { method: 'HEAD', signal, timeouts });
  // Receivers that only know POST often refuse HEAD; a GET shows their redirects as well.
  if (head.statusCode !== 405 && head.statusCode !== 501) return head;
  await head.close();
  return pinnedRequest(url, address, { method: 'GET', signal, timeouts });
}

/**
 * Checks a webhook endpoint URL against the registration rules of the spec: https only, ports 443
 * and 8443, no credentials, a host that resolves only to public addresses; then (unless
 * `fetchRedirects` is false) probes it without following redirects and validates every Location
 * hop the same way, refusing more than 3 redirects (LIMITS.webhookMaxRedirects).
 *
 * An endpoint that cannot be reached during the probe is accepted: its address has passed the
 * rules, the receiver may simply not be up yet, and deliveries validate the address again.
 */
export async function checkWebhookUrl(url: string, options: WebhookUrlOptions): Promise<WebhookUrlCheck> {
  const first = await validateUrl(url, options);
  if (!first.ok) return { ok: false, reason: first.reason };
  if (options.fetchRedirects === false) return { ok: true };
  const deadline = new AbortController();
  const timer = setTimeout(() => deadline.abort(), options.probeTimeoutMs ?? 5_000);
  let hop = first;
  try {
    for (let redirects = 0; ;) {
      let response: PinnedResponse;
      try {
        response = await probeOnce(hop.url, hop.address, deadline.signal);
      } catch {
        return { ok: true };
      }
      const location = headerValue(response.headers.location);
      const isRedirect = REDIRECT_STATUSES.includes(response.statusCode) && location !== undefined;
      await response.close();
      if (!isRedirect) return { ok: true };
      redirects += 1;
      if (redirects > LIMITS.webhookMaxRedirects) {
        return { ok: false, reason: `more than ${LIMITS.webhookMaxRedirects} redirects` };
      }
      let target: URL;
      try {
        target = new URL(location, hop.url);
      } catch {
        return { ok: false, reason: `redirect ${redirects} has an invalid Location` };
      }
      const next = await validateUrl(target, options);
      if (!next.ok) return { ok: false, reason: `redirect ${redirects} to ${target.href} refused: ${next.reason}` };
      hop = next;
    }
  } finally {
    clearTimeout(timer);
  }
}
