import { checkDelivery } from '../../../src/bridge/delivery';
import { signedHeaders } from '../../../src/contract/signature';
import { API_VERSION, EVENT_TYPES, WEBHOOK_HEADERS } from '../../../src/contract';
import { terminalStateOf } from '../../../src/contract/events';

/** The verify-then-parse step of the bridge, without HTTP. */

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

function signed(body: string, id = 'evt_1') {
  return {
    headers: signedHeaders({ id, timestamp: NOW, body, secrets: [SECRET], eventType: EVENT_TYPES.completed }),
    body: Buffer.from(body),
  };
}

describe('checkDelivery', () => {
  it('returns the parsed event for a well-signed valid body', () => {
    const outcome = checkDelivery({ ...signed(JSON.stringify(event)), secrets: [SECRET], now: NOW });
    expect(outcome).toEqual({ kind: 'event', event });
  });

  it('verifies before parsing: a forged body is rejected even when it is not JSON', () => {
    const { headers } = signed(JSON.stringify(event));
    expect(checkDelivery({ headers, body: Buffer.from('nope'), secrets: [SECRET], now: NOW })).toEqual({
      kind: 'rejected',
      reason: 'signature_mismatch',
    });
  });

  it('reports field paths of a well-signed malformed event', () => {
    const outcome = checkDelivery({
      ...signed(JSON.stringify({ ...event, request_id: '' })),
      secrets: [SECRET],
      now: NOW,
    });
    expect(outcome).toMatchObject({ kind: 'malformed', eventId: 'evt_1', errors: [{ path: 'request_id' }] });
  });

  it('refuses an event whose event_id differs from the signed id header', () => {
    const outcome = checkDelivery({ ...signed(JSON.stringify(event), 'evt_2'), secrets: [SECRET], now: NOW });
    expect(outcome).toMatchObject({
      kind: 'malformed',
      errors: [{ path: 'event_id', message: expect.stringContaining(WEBHOOK_HEADERS.id) }],
    });
  });
});

describe('terminalStateOf: whether an event ends its request', () => {
  it.each([
    [EVENT_TYPES.completed, null, true],
    [EVENT_TYPES.failed, null, true],
    [EVENT_TYPES.cancelled, null, true],
    ['generation.progress', { status: 'IN_PROGRESS' as const }, false],
    ['generation.other', { status: 'FAILED' as const }, true],
  ])('%s with data %j → %s', (eventType, data, terminal) => {
    expect(terminalStateOf({ ...event, event_type: eventType, data }) !== null).toBe(terminal);
  });
});
