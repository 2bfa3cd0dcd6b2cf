import { API_VERSION, EVENT_TYPES, WEBHOOK_HEADERS } from '../../../src/contract';
import { signedHeaders } from '../../../src/contract/signature';
import { verifyWebhook, type VerifyWebhookInput } from '../../../src/webhooks';

const SECRET = 'whsec_unit_1';
const NOW = 1_767_225_600;
const event = {
  event_id: 'evt_1',
  event_type: EVENT_TYPES.completed,
  api_version: API_VERSION,
  created_at: '2026-01-01T00:00:00.000Z',
  request_id: 'req_1',
  status: 'OK',
  data: { status: 'COMPLETED', videos: [] },
  error: null,
};
const BODY = JSON.stringify(event);

function headersFor(body: string, options: { id?: string; timestamp?: number; secrets?: string[] } = {}) {
  return signedHeaders({
    id: options.id ?? 'evt_1',
    timestamp: options.timestamp ?? NOW,
    body,
    secrets: options.secrets ?? [SECRET],
    eventType: EVENT_TYPES.completed,
  });
}

function without(headers: Record<string, string>, name: string): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).filter(([key]) => key !== name));
}

function check(overrides: Partial<VerifyWebhookInput> = {}) {
  return verifyWebhook({ headers: headersFor(BODY), rawBody: BODY, secrets: [SECRET], now: NOW, ...overrides });
}

describe('verifyWebhook', () => {
  it('returns the typed event of a well-signed delivery, from a string or from bytes', () => {
    expect(check()).toEqual({ ok: true, event });
    expect(check({ rawBody: new TextEncoder().encode(BODY) })).toEqual({ ok: true, event });
  });

  it('reads a fetch Headers, takes one secret as a string, and `now` as a Date', () => {
    const headers = new Headers(headersFor(BODY));
    expect(check({ headers, secrets: SECRET, now: new Date(NOW * 1000) })).toEqual({ ok: true, event });
  });

  it('accepts a delivery signed with any one secret of a rotation', () => {
    expect(check({ secrets: ['whsec_new', SECRET] })).toEqual({ ok: true, event });
  });

  it('missing_id: no webhook id header', () => {
    expect(check({ headers: without(headersFor(BODY), WEBHOOK_HEADERS.id) })).toEqual({
      ok: false,
      reason: 'missing_id',
    });
  });

  it('missing_timestamp: no timestamp header', () => {
    expect(check({ headers: without(headersFor(BODY), WEBHOOK_HEADERS.timestamp) })).toEqual({
      ok: false,
      reason: 'missing_timestamp',
    });
  });

  it('missing_signature: no signature header', () => {
    expect(check({ headers: without(headersFor(BODY), WEBHOOK_HEADERS.signature) })).toEqual({
      ok: false,
      reason: 'missing_signature',
    });
  });

  it('invalid_timestamp: a timestamp that is not unix seconds', () => {
    const headers = { ...headersFor(BODY), [WEBHOOK_HEADERS.timestamp]: '2026-01-01T00:00:00Z' };
    expect(check({ headers })).toEqual({ ok: false, reason: 'invalid_timestamp' });
  });

  it('timestamp_too_old: signed more than the tolerance before now', () => {
    expect(check({ now: NOW + 301 })).toEqual({ ok: false, reason: 'timestamp_too_old' });
    expect(check({ now: NOW + 301, toleranceSeconds: 600 })).toEqual({ ok: true, event });
  });

  it('timestamp_too_new: signed more than the tolerance after now', () => {
    expect(check({ now: NOW - 301 })).toEqual({ ok: false, reason: 'timestamp_too_new' });
  });

  it('malformed_signature: no v1= entry with a SHA-256 hex digest', () => {
    const headers = { ...headersFor(BODY), [WEBHOOK_HEADERS.signature]: 'v0=abc sha256=zz' };
    expect(check({ headers })).toEqual({ ok: false, reason: 'malformed_signature' });
  });

  it('no_secret: an empty list of secrets refuses everything', () => {
    expect(check({ secrets: [] })).toEqual({ ok: false, reason: 'no_secret' });
  });

  it('signature_mismatch: another secret, or a body changed after signing', () => {
    expect(check({ secrets: ['whsec_other'] })).toEqual({ ok: false, reason: 'signature_mismatch' });
    expect(check({ rawBody: BODY.replace('req_1', 'req_2') })).toEqual({ ok: false, reason: 'signature_mismatch' });
  });

  it('malformed_event: a well-signed body that is not JSON, not an event, or names another event id', () => {
    const notJson = 'not json';
    expect(check({ headers: headersFor(notJson), rawBody: notJson })).toMatchObject({
      ok: false,
      reason: 'malformed_event',
      errors: [{ path: '', message: 'body is not valid JSON' }],
    });
    const notEvent = JSON.stringify({ ...event, request_id: 42 });
    expect(check({ headers: headersFor(notEvent), rawBody: notEvent })).toMatchObject({
      ok: false,
      reason: 'malformed_event',
      errors: [expect.objectContaining({ path: 'request_id' })],
    });
    expect(check({ headers: headersFor(BODY, { id: 'evt_2' }) })).toMatchObject({
      ok: false,
      reason: 'malformed_event',
      errors: [{ path: 'event_id', message: `must equal the ${WEBHOOK_HEADERS.id} header` }],
    });
  });

  it('raw_body_required: a body a JSON parser already turned into an object', () => {
    expect(check({ rawBody: event as unknown as string })).toEqual({ ok: false, reason: 'raw_body_required' });
  });

  it('invalid_input: values outside the types are refused, never thrown', () => {
    expect(check({ secrets: [42 as unknown as string] })).toEqual({ ok: false, reason: 'invalid_input' });
    expect(() => check({ headers: null as unknown as Record<string, string> })).not.toThrow();
  });
});
