import type { WebhookEvent } from '../contract';
import type { HeaderBag, VerifyFailureReason } from '../contract/signature';
import { checkDelivery } from '../bridge/delivery';

/** Why a delivery was refused. The signature reasons are the bridge's; the last two are about the body. */
export type WebhookFailureReason =
  | VerifyFailureReason
  /** The body is well signed but is not JSON, or not an event of the contract (see `errors`). */
  | 'malformed_event'
  /** `rawBody` was not the request's bytes (a string or bytes): e.g. a body a JSON parser had already turned into an object. */
  | 'raw_body_required'
  /** `headers` or `secrets` are not what the types say (e.g. a secret that is not a string). */
  | 'invalid_input';

/** The answer of `verifyWebhook`: the typed event, or why the delivery must be refused. */
export type WebhookVerification =
  | { ok: true; event: WebhookEvent }
  | { ok: false; reason: WebhookFailureReason; errors?: { path: string; message: string }[] };

/** What `verifyWebhook` checks. */
export interface VerifyWebhookInput {
  /** The request's headers: a plain object (node:http, Express, Fastify) or a fetch `Headers`. Names are case-insensitive. */
  headers: HeaderBag;
  /** The request body exactly as received, before any parser touched it. */
  rawBody: Uint8Array | string;
  /** The signing secret, or several during a rotation (any one may match). */
  secrets: string | readonly string[];
  /** The receiver's clock: a Date or unix seconds. Default: now. */
  now?: Date | number;
  /** How far the signed timestamp may be from `now`, in seconds. Default: the contract's 300. */
  toleranceSeconds?: number;
}

function unixSeconds(now: Date | number): number {
  return now instanceof Date ? Math.floor(now.getTime() / 1000) : now;
}

/**
 * Verifies one signed delivery of the service in any framework (or none): the signature on the raw
 * bytes first, then the event's shape. Never throws: a refused delivery answers `{ ok: false, reason }`,
 * which a receiver should turn into a 401 (signature reasons) or 400 (`malformed_event`) without
 * telling the sender more. The same check the bridge runs (src/bridge/delivery.ts).
 *
 * ```ts
 * const verdict = verifyWebhook({ headers: req.headers, rawBody: req.body, secrets: [process.env.SECRET!] });
 * if (!verdict.ok) return res.status(401).end();
 * await handle(verdict.event);
 * ```
 */
export function verifyWebhook(input: VerifyWebhookInput): WebhookVerification {
  try {
    const { rawBody } = input;
    if (typeof rawBody !== 'string' && !(rawBody instanceof Uint8Array))
      return { ok: false, reason: 'raw_body_required' };
    const body =
      typeof rawBody === 'string'
        ? Buffer.from(rawBody, 'utf8')
        : Buffer.from(rawBody.buffer, rawBody.byteOffset, rawBody.byteLength);
    const secrets = typeof input.secrets === 'string' ? [input.secrets] : [...(input.secrets ?? [])];
    const outcome = checkDelivery({
      headers: input.headers ?? {},
      body,
      secrets,
      ...(input.now !== undefined ? { now: unixSeconds(input.now) } : {}),
      ...(input.toleranceSeconds !== undefined ? { toleranceSeconds: input.toleranceSeconds } : {}),
    });
    if (outcome.kind === 'event') return { ok: true, event: outcome.event };
    if (outcome.kind === 'rejected') return { ok: false, reason: outcome.reason };
    return { ok: false, reason: 'malformed_event', errors: outcome.errors };
  } catch {
    // Inputs outside the types (a headers value that is not a bag, secrets that are not strings): refused, never thrown.
    return { ok: false, reason: 'invalid_input' };
  }
}
