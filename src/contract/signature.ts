import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { LIMITS, WEBHOOK_HEADERS } from './limits';

/**
 * The webhook signature rule of the spec, as two pure functions.
 * Not re-exported from the contract index: it needs node:crypto, which workflows cannot load.
 */

export type HeaderBag = Record<string, string | string[] | undefined> | Headers;

export interface SignInput {
  id: string;
  /** Unix seconds. */
  timestamp: number;
  body: Uint8Array | string;
  secret: string;
}

export type VerifyFailureReason =
  | 'missing_id'
  | 'missing_timestamp'
  | 'missing_signature'
  | 'invalid_timestamp'
  | 'timestamp_too_old'
  | 'timestamp_too_new'
  | 'malformed_signature'
  | 'no_secret'
  | 'signature_mismatch';

export type VerifyResult = { ok: true; id: string; timestamp: number } | { ok: false; reason: VerifyFailureReason };

export interface VerifyInput {
  headers: HeaderBag;
  /** Raw request bytes, exactly as received. */
  body: Uint8Array | string;
  /** One secret, or several during a rotation. */
  secrets: string | readonly string[];
  /** Receiver's clock in unix seconds; defaults to now. */
  now?: number;
  toleranceSeconds?: number;
}

function toBytes(body: Uint8Array | string): Buffer {
  return typeof body === 'string'
    ? Buffer.from(body, 'utf8')
    : Buffer.from(body.buffer, body.byteOffset, body.byteLength);
}

function signedDigest(id: string, timestamp: string, body: Uint8Array | string, secret: string): Buffer {
  const bodyHash = createHash('sha256').update(toBytes(body)).digest('hex');
  return createHmac('sha256', secret).update(['v1', id, timestamp, bodyHash].join('\n')).digest();
}

/** Computes the `Service-Webhook-Signature` value (`v1=<hex>`) for one secret. */
export function sign({ id, timestamp, body, secret }: SignInput): string {
  return `v1=${signedDigest(id, String(timestamp), body, secret).toString('hex')}`;
}

/** All four delivery headers for a body, with one `v1=` entry per secret (rotation). */
export function signedHeaders(
  input: Omit<SignInput, 'secret'> & { secrets: readonly string[]; eventType: string },
): Record<string, string> {
  return {
    [WEBHOOK_HEADERS.eventType]: input.eventType,
    [WEBHOOK_HEADERS.id]: input.id,
    [WEBHOOK_HEADERS.timestamp]: String(input.timestamp),
    [WEBHOOK_HEADERS.signature]: input.secrets.map((secret) => sign({ ...input, secret })).join(' '),
  };
}

/** Reads a header by case-insensitive name from a plain object or a fetch `Headers`. */
export function readHeader(headers: HeaderBag, name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
  const wanted = name.toLowerCase();
  for (const [key, value] of Object.entries(headers as Record<string, string | string[] | undefined>)) {
    if (key.toLowerCase() === wanted) return Array.isArray(value) ? value.join(' ') : value;
  }
  return undefined;
}

const HEX_SHA256 = /^[0-9a-f]{64}$/i;

/** Verifies a delivery against the spec's rule. Never throws; says why a delivery is refused. */
export function verify(input: VerifyInput): VerifyResult {
  const id = readHeader(input.headers, WEBHOOK_HEADERS.id);
  const timestampText = readHeader(input.headers, WEBHOOK_HEADERS.timestamp);
  const signature = readHeader(input.headers, WEBHOOK_HEADERS.signature);
  if (!id) return { ok: false, reason: 'missing_id' };
  if (!timestampText) return { ok: false, reason: 'missing_timestamp' };
  if (!signature) return { ok: false, reason: 'missing_signature' };
  if (!/^\d{1,15}$/.test(timestampText.trim())) return { ok: false, reason: 'invalid_timestamp' };
  const timestamp = Number(timestampText.trim());
  const now = input.now ?? Math.floor(Date.now() / 1000);
  const tolerance = input.toleranceSeconds ?? LIMITS.webhookToleranceSeconds;
  if (now - timestamp > tolerance) return { ok: false, reason: 'timestamp_too_old' };
  if (timestamp - now > tolerance) return { ok: false, reason: 'timestamp_too_new' };

  const candidates: Buffer[] = [];
  // Commas too: a fetch `Headers` joins a repeated header line with ", ", which would otherwise
  // glue a comma to the hex of every entry but the last and silently drop those entries.
  for (const entry of signature.split(/[\s,]+/).filter(Boolean)) {
    if (!entry.startsWith('v1=')) continue;
    const hex = entry.slice(3);
    if (HEX_SHA256.test(hex)) candidates.push(Buffer.from(hex, 'hex'));
  }
  if (candidates.length === 0) return { ok: false, reason: 'malformed_signature' };

  const secrets = typeof input.secrets === 'string' ? [input.secrets] : input.secrets;
  if (secrets.length === 0) return { ok: false, reason: 'no_secret' };
  let matched = false;
  for (const secret of secrets) {
    const expected = signedDigest(id, timestampText.trim(), input.body, secret);
    for (const candidate of candidates) {
      // Every pair is compared, so the time taken does not reveal which one matched.
      if (timingSafeEqual(candidate, expected)) matched = true;
    }
  }
  return matched ? { ok: true, id, timestamp } : { ok: false, reason: 'signature_mismatch' };
}
