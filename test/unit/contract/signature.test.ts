import { createHash, createHmac } from 'node:crypto';
import {
  readHeader,
  sign,
  signedHeaders,
  verify,
  type HeaderBag,
  type VerifyFailureReason,
} from '../../../src/contract/signature';

/**
 * The webhook signature rule of the spec (Events > Signature rule), one test per failure mode.
 * Expected digests are computed here with node:crypto directly, independent of src.
 */

const SECRET = 'whsec_current_2b7f0c';
const OLD_SECRET = 'whsec_previous_91ad3e';
const ID = 'evt_01HZX3M2B9';
const NOW = 1_767_225_600; // 2026-01-01T00:00:00Z; every test passes `now`, never the real clock.
const BODY = '{"event_id":"evt_01HZX3M2B9","event_type":"generation.completed","data":{"videos":[]},"error":null}';

/** The spec's rule, written out independently: HMAC-SHA-256 over `v1\n<id>\n<ts>\n<sha256hex(body)>`. */
function expectedHex(secret: string, id: string, timestamp: string, body: string | Buffer): string {
  const bodyHash = createHash('sha256').update(body).digest('hex');
  return createHmac('sha256', secret).update(`v1\n${id}\n${timestamp}\n${bodyHash}`).digest('hex');
}

function headers(overrides: Record<string, string | undefined> = {}): Record<string, string> {
  const all: Record<string, string | undefined> = {
    'service-webhook-event-type': 'generation.completed',
    'service-webhook-id': ID,
    'service-webhook-timestamp': String(NOW),
    'service-webhook-signature': `v1=${expectedHex(SECRET, ID, String(NOW), BODY)}`,
    ...overrides,
  };
  return Object.fromEntries(Object.entries(all).filter((entry): entry is [string, string] => entry[1] !== undefined));
}

function check(
  bag: HeaderBag,
  options: { body?: string | Uint8Array; secrets?: string | string[]; now?: number } = {},
) {
  return verify({
    headers: bag,
    body: options.body ?? BODY,
    secrets: options.secrets ?? SECRET,
    now: options.now ?? NOW,
  });
}

function refusedWith(reason: VerifyFailureReason) {
  return { ok: false, reason };
}

describe('sign', () => {
  it('signs exactly `v1\\n<id>\\n<ts>\\n<sha256hex(body)>` with HMAC-SHA-256', () => {
    expect(sign({ id: ID, timestamp: NOW, body: BODY, secret: SECRET })).toBe(
      `v1=${expectedHex(SECRET, ID, String(NOW), BODY)}`,
    );
  });

  it('hashes the raw bytes: a string and its UTF-8 bytes sign the same', () => {
    const body = '{"prompt":"café ☕"}';
    const bytes = new TextEncoder().encode(body);
    expect(sign({ id: ID, timestamp: NOW, body: bytes, secret: SECRET })).toBe(
      sign({ id: ID, timestamp: NOW, body, secret: SECRET }),
    );
    expect(sign({ id: ID, timestamp: NOW, body, secret: SECRET })).toBe(
      `v1=${expectedHex(SECRET, ID, String(NOW), Buffer.from(body, 'utf8'))}`,
    );
  });

  it('hashes only the view of a byte array that shares a larger buffer', () => {
    const framed = Buffer.from(`XXXX${BODY}YYYY`, 'utf8');
    const view = new Uint8Array(framed.buffer, framed.byteOffset + 4, Buffer.byteLength(BODY));
    expect(sign({ id: ID, timestamp: NOW, body: view, secret: SECRET })).toBe(
      `v1=${expectedHex(SECRET, ID, String(NOW), BODY)}`,
    );
  });

  it('builds all four delivery headers, one entry per secret', () => {
    const built = signedHeaders({
      id: ID,
      timestamp: NOW,
      body: BODY,
      secrets: [SECRET, OLD_SECRET],
      eventType: 'generation.completed',
    });
    expect(built).toEqual({
      'service-webhook-event-type': 'generation.completed',
      'service-webhook-id': ID,
      'service-webhook-timestamp': String(NOW),
      'service-webhook-signature': `v1=${expectedHex(SECRET, ID, String(NOW), BODY)} v1=${expectedHex(OLD_SECRET, ID, String(NOW), BODY)}`,
    });
  });
});

describe('verify: accepted', () => {
  it('with one entry', () => {
    expect(check(headers())).toEqual({ ok: true, id: ID, timestamp: NOW });
  });

  it('with what sign() produced', () => {
    const signature = sign({ id: ID, timestamp: NOW, body: BODY, secret: SECRET });
    expect(check(headers({ 'service-webhook-signature': signature })).ok).toBe(true);
  });

  it('with several entries, the valid one last', () => {
    const other = `v1=${expectedHex('some-other-secret', ID, String(NOW), BODY)}`;
    const valid = `v1=${expectedHex(SECRET, ID, String(NOW), BODY)}`;
    expect(check(headers({ 'service-webhook-signature': `${other} ${other} ${valid}` })).ok).toBe(true);
  });

  it('with entries separated by any whitespace (tabs, newlines, runs of spaces)', () => {
    const other = `v1=${expectedHex('some-other-secret', ID, String(NOW), BODY)}`;
    const valid = `v1=${expectedHex(SECRET, ID, String(NOW), BODY)}`;
    expect(check(headers({ 'service-webhook-signature': ` ${other}\t \n${valid}  ` })).ok).toBe(true);
  });

  it('with a malformed entry beside a valid one', () => {
    const valid = `v1=${expectedHex(SECRET, ID, String(NOW), BODY)}`;
    expect(check(headers({ 'service-webhook-signature': `v2=abc v1=zz ${valid}` })).ok).toBe(true);
  });

  it('with uppercase hex in the entry', () => {
    const valid = `v1=${expectedHex(SECRET, ID, String(NOW), BODY).toUpperCase()}`;
    expect(check(headers({ 'service-webhook-signature': valid })).ok).toBe(true);
  });

  describe('during a secret rotation (two secrets configured)', () => {
    it('signed with the new secret', () => {
      expect(check(headers(), { secrets: [OLD_SECRET, SECRET] }).ok).toBe(true);
    });

    it('signed with the old secret', () => {
      const signature = `v1=${expectedHex(OLD_SECRET, ID, String(NOW), BODY)}`;
      expect(check(headers({ 'service-webhook-signature': signature }), { secrets: [OLD_SECRET, SECRET] }).ok).toBe(
        true,
      );
    });

    it('signed with both (one entry per secret), receiver knowing only one', () => {
      const both = signedHeaders({
        id: ID,
        timestamp: NOW,
        body: BODY,
        secrets: [OLD_SECRET, SECRET],
        eventType: 'generation.completed',
      });
      expect(check(both, { secrets: SECRET }).ok).toBe(true);
      expect(check(both, { secrets: [OLD_SECRET] }).ok).toBe(true);
    });
  });

  it('with header names in any case (plain object)', () => {
    const h = headers();
    const mixed = {
      'Service-Webhook-Event-Type': h['service-webhook-event-type'],
      'SERVICE-WEBHOOK-ID': h['service-webhook-id'],
      'Service-Webhook-Timestamp': h['service-webhook-timestamp'],
      'sErViCe-WeBhOoK-sIgNaTuRe': h['service-webhook-signature'],
    };
    expect(check(mixed).ok).toBe(true);
  });

  it('with header names in any case (fetch Headers)', () => {
    const bag = new Headers();
    for (const [name, value] of Object.entries(headers())) bag.set(name.toUpperCase(), value);
    expect(check(bag).ok).toBe(true);
  });

  it('with the signature split over two header lines (fetch Headers joins them with ", ")', () => {
    const bag = new Headers(headers({ 'service-webhook-signature': undefined }));
    bag.append('Service-Webhook-Signature', `v1=${expectedHex(SECRET, ID, String(NOW), BODY)}`);
    bag.append('Service-Webhook-Signature', `v1=${expectedHex('some-other-secret', ID, String(NOW), BODY)}`);
    expect(check(bag).ok).toBe(true);
  });

  it('with the signature split over two header lines (node array value)', () => {
    const bag: HeaderBag = {
      ...headers({ 'service-webhook-signature': undefined }),
      'service-webhook-signature': [
        `v1=${expectedHex('some-other-secret', ID, String(NOW), BODY)}`,
        `v1=${expectedHex(SECRET, ID, String(NOW), BODY)}`,
      ],
    };
    expect(check(bag).ok).toBe(true);
  });

  it('with raw bytes as the body', () => {
    expect(check(headers(), { body: Buffer.from(BODY, 'utf8') }).ok).toBe(true);
  });

  it('at exactly 300 s in the past and in the future', () => {
    expect(check(headers(), { now: NOW + 300 }).ok).toBe(true);
    expect(check(headers(), { now: NOW - 300 }).ok).toBe(true);
  });
});

describe('verify: refused, with a typed reason', () => {
  it.each([
    ['service-webhook-id', 'missing_id'],
    ['service-webhook-timestamp', 'missing_timestamp'],
    ['service-webhook-signature', 'missing_signature'],
  ] as const)('missing %s', (name, reason) => {
    expect(check(headers({ [name]: undefined }))).toEqual(refusedWith(reason));
  });

  it.each([
    ['service-webhook-id', 'missing_id'],
    ['service-webhook-timestamp', 'missing_timestamp'],
    ['service-webhook-signature', 'missing_signature'],
  ] as const)('empty %s', (name, reason) => {
    expect(check(headers({ [name]: '' }))).toEqual(refusedWith(reason));
  });

  it('missing header in a fetch Headers', () => {
    const bag = new Headers(headers({ 'service-webhook-timestamp': undefined }));
    expect(check(bag)).toEqual(refusedWith('missing_timestamp'));
  });

  it('stale timestamp (301 s old)', () => {
    expect(check(headers(), { now: NOW + 301 })).toEqual(refusedWith('timestamp_too_old'));
  });

  it('future timestamp (301 s ahead)', () => {
    expect(check(headers(), { now: NOW - 301 })).toEqual(refusedWith('timestamp_too_new'));
  });

  it.each(['soon', '17672256OO', '1767225600.5', '-1767225600', '0x69558f00', '1e9'])(
    'non-numeric timestamp %p',
    (timestamp) => {
      const signature = `v1=${expectedHex(SECRET, ID, timestamp, BODY)}`;
      expect(
        check(headers({ 'service-webhook-timestamp': timestamp, 'service-webhook-signature': signature })),
      ).toEqual(refusedWith('invalid_timestamp'));
    },
  );

  it('a re-serialised body (same JSON, different spacing)', () => {
    const reserialised = JSON.stringify(JSON.parse(BODY), null, 2);
    expect(JSON.parse(reserialised)).toEqual(JSON.parse(BODY));
    expect(check(headers(), { body: reserialised })).toEqual(refusedWith('signature_mismatch'));
  });

  it('a body that differs by one byte', () => {
    const bytes = Buffer.from(BODY, 'utf8');
    bytes[bytes.length - 2] = (bytes[bytes.length - 2] as number) ^ 0x01;
    expect(check(headers(), { body: bytes })).toEqual(refusedWith('signature_mismatch'));
  });

  it('a body with one byte appended', () => {
    expect(check(headers(), { body: `${BODY}\n` })).toEqual(refusedWith('signature_mismatch'));
  });

  it('a wrong secret', () => {
    expect(check(headers(), { secrets: 'whsec_wrong' })).toEqual(refusedWith('signature_mismatch'));
  });

  it('two secrets configured, neither the signer', () => {
    expect(check(headers(), { secrets: ['whsec_a', 'whsec_b'] })).toEqual(refusedWith('signature_mismatch'));
  });

  it('no secret configured', () => {
    expect(check(headers(), { secrets: [] })).toEqual(refusedWith('no_secret'));
  });

  it('a signature made for another event id', () => {
    expect(check(headers({ 'service-webhook-id': 'evt_other' }))).toEqual(refusedWith('signature_mismatch'));
  });

  it('a signature made for another timestamp (replayed with a fresh one)', () => {
    expect(check(headers({ 'service-webhook-timestamp': String(NOW + 1) }))).toEqual(refusedWith('signature_mismatch'));
  });

  it.each([
    ['v1=', 'v1='],
    ['v1=zz', 'v1=zz'],
    ['v2=<valid hex>', `v2=${expectedHex(SECRET, ID, String(NOW), BODY)}`],
    ['bare hex without a scheme', expectedHex(SECRET, ID, String(NOW), BODY)],
    ['v1=<truncated hex>', `v1=${expectedHex(SECRET, ID, String(NOW), BODY).slice(0, 62)}`],
    ['V1=<valid hex>', `V1=${expectedHex(SECRET, ID, String(NOW), BODY)}`],
  ])('malformed entry %s', (_name, signature) => {
    expect(check(headers({ 'service-webhook-signature': signature }))).toEqual(refusedWith('malformed_signature'));
  });

  it('never throws on odd header values', () => {
    for (const signature of ['v1==', '=', 'v1', ',', 'v1=' + 'ab'.repeat(64)]) {
      expect(() => check(headers({ 'service-webhook-signature': signature }))).not.toThrow();
    }
  });
});

describe('readHeader', () => {
  it('finds a name in any case in a plain object and in fetch Headers', () => {
    expect(readHeader({ 'SERVICE-webhook-ID': 'a' }, 'service-webhook-id')).toBe('a');
    expect(readHeader(new Headers({ 'Service-Webhook-Id': 'b' }), 'SERVICE-WEBHOOK-ID')).toBe('b');
  });

  it('answers undefined for an absent header', () => {
    expect(readHeader({}, 'service-webhook-id')).toBeUndefined();
    expect(readHeader(new Headers(), 'service-webhook-id')).toBeUndefined();
  });
});
