import { webhookEventSchema, type WebhookEvent } from '../contract';
import { readHeader, verify, type HeaderBag, type VerifyFailureReason } from '../contract/signature';
import { WEBHOOK_HEADERS } from '../contract';

/**
 * The pure part of handling one delivery: verify the signature on the raw bytes, then parse the event.
 * Kept apart from HTTP so the order (verify before parse) is visible and testable.
 */

export type DeliveryOutcome =
  | { kind: 'rejected'; reason: VerifyFailureReason }
  | { kind: 'malformed'; eventId: string | undefined; errors: { path: string; message: string }[] }
  | { kind: 'event'; event: WebhookEvent };

export interface CheckDeliveryInput {
  headers: HeaderBag;
  body: Buffer;
  secrets: readonly string[];
  toleranceSeconds?: number;
  now?: number;
}

/** Verifies, then parses; a well-signed body that is not a valid event is `malformed` (a permanent 400). */
export function checkDelivery(input: CheckDeliveryInput): DeliveryOutcome {
  const verdict = verify({
    headers: input.headers,
    body: input.body,
    secrets: input.secrets,
    ...(input.now !== undefined ? { now: input.now } : {}),
    ...(input.toleranceSeconds !== undefined ? { toleranceSeconds: input.toleranceSeconds } : {}),
  });
  if (!verdict.ok) return { kind: 'rejected', reason: verdict.reason };

  let json: unknown;
  try {
    json = JSON.parse(input.body.toString('utf8'));
  } catch {
    return { kind: 'malformed', eventId: verdict.id, errors: [{ path: '', message: 'body is not valid JSON' }] };
  }
  const parsed = webhookEventSchema.safeParse(json);
  if (!parsed.success) {
    const errors = parsed.error.issues.map((issue) => ({
      path: issue.path.map(String).join('.'),
      message: issue.message,
    }));
    return { kind: 'malformed', eventId: verdict.id, errors };
  }
  // The id header is signed together with the body; a mismatch is a sender bug, not something to route.
  if (parsed.data.event_id !== verdict.id) {
    return {
      kind: 'malformed',
      eventId: verdict.id,
      errors: [{ path: 'event_id', message: `must equal the ${WEBHOOK_HEADERS.id} header` }],
    };
  }
  return { kind: 'event', event: parsed.data };
}

/** The unverified id header, shortened, for logging a rejected delivery without trusting it. */
export function claimedId(headers: HeaderBag): string | undefined {
  return readHeader(headers, WEBHOOK_HEADERS.id)?.slice(0, 128);
}
