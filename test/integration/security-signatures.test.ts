import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { EventSink } from '../../src/bridge';
import { createBridgeApp } from '../../src/bridge';
import type { WebhookEvent } from '../../src/contract';
import { WEBHOOK_HEADERS } from '../../src/contract';
import { captureLogs, makeEvent, nowSeconds, post, signFor } from './bridge-fixtures';

/**
 * Security battery, signatures: at least 1,000 random mutations of a correctly signed delivery
 * (headers and body) sent over real HTTP to the real bridge app are never accepted, and never reach
 * the sink. Every mutation changes something the signature covers (or the signature itself), so a
 * single acceptance is a hole. The PRNG is seeded; the seed is printed (SECURITY_SEED replays a run).
 */

const SECRETS = ['whsec_sec_old_0123456789abcdef', 'whsec_sec_new_fedcba9876543210'];
const SEED = Number(process.env.SECURITY_SEED ?? Date.now() % 2 ** 31);
const MUTATIONS = 1200;

/** mulberry32: small, seedable, good enough to pick mutations. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const random = prng(SEED);
const int = (n: number) => Math.floor(random() * n);
const pick = <T>(items: readonly T[]): T => items[int(items.length)]!;
const HEX = '0123456789abcdef';

interface Delivery {
  body: Buffer;
  headers: Record<string, string>;
}

function signed(event: WebhookEvent, timestamp = nowSeconds()): Delivery {
  const body = Buffer.from(JSON.stringify(event));
  return { body, headers: signFor(body, { id: event.event_id, secrets: SECRETS, timestamp }) };
}

function otherHexDigit(c: string): string {
  const options = HEX.replace(c.toLowerCase(), '');
  return options[int(options.length)]!;
}

/** Mutations, each of which changes signed content or the signature. Returns a label and the delivery. */
const MUTATORS: Array<[string, (d: Delivery, event: WebhookEvent) => Delivery]> = [
  [
    'body: flip a byte',
    (d) => {
      const body = Buffer.from(d.body);
      const i = int(body.length);
      body[i] = body[i]! ^ (1 + int(255));
      return { ...d, body };
    },
  ],
  [
    'body: insert a byte',
    (d) => {
      const i = int(d.body.length + 1);
      return { ...d, body: Buffer.concat([d.body.subarray(0, i), Buffer.from([int(256)]), d.body.subarray(i)]) };
    },
  ],
  [
    'body: delete a byte',
    (d) => {
      const i = int(d.body.length);
      return { ...d, body: Buffer.concat([d.body.subarray(0, i), d.body.subarray(i + 1)]) };
    },
  ],
  ['body: truncate', (d) => ({ ...d, body: d.body.subarray(0, int(d.body.length)) })],
  [
    'body: trailing whitespace',
    (d) => ({ ...d, body: Buffer.concat([d.body, Buffer.from(pick([' ', '\n', '\t', '\r\n']))]) }),
  ],
  [
    'body: same event re-serialised with another field value',
    (d, event) => {
      const changed = pick([
        { ...event, request_id: `${event.request_id}x` },
        { ...event, status: 'ERROR' as const },
        { ...event, event_type: 'generation.failed' },
        {
          ...event,
          data: {
            ...event.data,
            videos: [{ url: 'https://attacker.example/evil.mp4', file_name: 'evil.mp4', content_type: 'video/mp4' }],
          },
        },
      ]);
      return { ...d, body: Buffer.from(JSON.stringify(changed)) };
    },
  ],
  [
    'body: pretty-printed (same JSON, other bytes)',
    (d, event) => ({ ...d, body: Buffer.from(JSON.stringify(event, null, 1)) }),
  ],
  [
    'id: change a character',
    (d) => {
      const id = d.headers[WEBHOOK_HEADERS.id]!;
      const i = int(id.length);
      const c = id[i] === 'a' ? 'b' : 'a';
      return { ...d, headers: { ...d.headers, [WEBHOOK_HEADERS.id]: id.slice(0, i) + c + id.slice(i + 1) } };
    },
  ],
  [
    'id: another event id',
    (d) => ({ ...d, headers: { ...d.headers, [WEBHOOK_HEADERS.id]: `evt-${randomBytes(8).toString('hex')}` } }),
  ],
  [
    'timestamp: shifted within tolerance',
    (d) => {
      const ts = Number(d.headers[WEBHOOK_HEADERS.timestamp]);
      return {
        ...d,
        headers: { ...d.headers, [WEBHOOK_HEADERS.timestamp]: String(ts + pick([-1, 1]) * (1 + int(60))) },
      };
    },
  ],
  [
    'timestamp: not a number',
    (d) => ({
      ...d,
      headers: { ...d.headers, [WEBHOOK_HEADERS.timestamp]: pick(['abc', '-5', '1e9', '', '0x10', '12.5']) },
    }),
  ],
  [
    'signature: change one hex digit',
    (d) => {
      const sig = d.headers[WEBHOOK_HEADERS.signature]!;
      // Mutate every entry (both secrets sign), so no untouched valid entry remains.
      const mutated = sig
        .split(' ')
        .map((entry) => {
          const i = 3 + int(entry.length - 3);
          return entry.slice(0, i) + otherHexDigit(entry[i]!) + entry.slice(i + 1);
        })
        .join(' ');
      return { ...d, headers: { ...d.headers, [WEBHOOK_HEADERS.signature]: mutated } };
    },
  ],
  [
    'signature: truncated',
    (d) => {
      const entries = d.headers[WEBHOOK_HEADERS.signature]!.split(' ').map((e) => e.slice(0, 3 + int(e.length - 3)));
      return { ...d, headers: { ...d.headers, [WEBHOOK_HEADERS.signature]: entries.join(' ') } };
    },
  ],
  [
    'signature: other scheme prefix',
    (d) => {
      const prefix = pick(['v0=', 'v2=', 'V1=', '', 'v1:', 'sha256=']);
      const entries = d.headers[WEBHOOK_HEADERS.signature]!.split(' ').map((e) => prefix + e.slice(3));
      return { ...d, headers: { ...d.headers, [WEBHOOK_HEADERS.signature]: entries.join(' ') } };
    },
  ],
  [
    'signature: signed with a wrong secret',
    (d) => {
      const wrong = signFor(d.body, {
        id: d.headers[WEBHOOK_HEADERS.id]!,
        secrets: [`whsec_${randomBytes(12).toString('hex')}`],
        timestamp: Number(d.headers[WEBHOOK_HEADERS.timestamp]),
      });
      return { ...d, headers: { ...d.headers, [WEBHOOK_HEADERS.signature]: wrong[WEBHOOK_HEADERS.signature]! } };
    },
  ],
  [
    'signature: from another delivery',
    (d) => {
      const other = signed(makeEvent());
      return {
        ...d,
        headers: { ...d.headers, [WEBHOOK_HEADERS.signature]: other.headers[WEBHOOK_HEADERS.signature]! },
      };
    },
  ],
  [
    'signature: random hex',
    (d) => ({ ...d, headers: { ...d.headers, [WEBHOOK_HEADERS.signature]: `v1=${randomBytes(32).toString('hex')}` } }),
  ],
  [
    'header removed',
    (d) => {
      const name = pick([WEBHOOK_HEADERS.id, WEBHOOK_HEADERS.timestamp, WEBHOOK_HEADERS.signature]);
      const headers = { ...d.headers };
      delete headers[name];
      return { ...d, headers };
    },
  ],
  [
    'replay: correctly signed but outside the tolerance',
    (_d, event) => signed(event, nowSeconds() + pick([-1, 1]) * (400 + int(100_000))),
  ],
];

let app: FastifyInstance;
let url: string;
const received: WebhookEvent[] = [];
const logs = captureLogs();

beforeAll(async () => {
  const sink: EventSink = {
    deliver: async (event) => void received.push(event),
    ready: async () => true,
  };
  app = await createBridgeApp({ secrets: SECRETS, sink, logger: logs.logger, metrics: false });
  const address = await app.listen({ host: '127.0.0.1', port: 0 });
  url = `${address}/webhooks`;
  process.stdout.write(`[security] signature mutation seed: ${SEED} (replay with SECURITY_SEED=${SEED})\n`);
});

afterAll(async () => {
  await app?.close();
});

describe(`signature mutations (seed ${SEED})`, () => {
  it(`never accepts any of ${MUTATIONS} random mutations, while the unmutated deliveries are accepted`, async () => {
    const accepted: string[] = [];
    const byKind: Record<string, number> = {};
    let controls = 0;
    for (let i = 0; i < MUTATIONS; i += 1) {
      const event = makeEvent();
      const original = signed(event);
      const [label, mutate] = pick(MUTATORS);
      const mutated = mutate(original, event);
      byKind[label] = (byKind[label] ?? 0) + 1;
      const answer = await post(url, mutated.body, mutated.headers);
      if (answer.status >= 200 && answer.status < 300) accepted.push(`${label} → ${answer.status}`);
      if (received.some((e) => e.event_id === event.event_id)) accepted.push(`${label} reached the sink`);
      // A control every 50 mutations: the same bridge does accept a correct delivery.
      if (i % 50 === 0) {
        const control = signed(makeEvent());
        const ok = await post(url, control.body, control.headers);
        expect(ok.status).toBe(202);
        controls += 1;
      }
    }
    process.stdout.write(`[security] mutations by kind ${JSON.stringify(byKind)}; controls accepted: ${controls}\n`);
    expect(accepted).toEqual([]);
    expect(received).toHaveLength(controls);
    expect(Object.keys(byKind).length).toBe(MUTATORS.length);
  });

  it('never logs a signing secret or a signature', () => {
    expect(logs.lines.length).toBeGreaterThan(0);
    const text = logs.lines.join('\n');
    for (const secret of SECRETS) expect(text).not.toContain(secret);
    expect(text).not.toMatch(/v1=[0-9a-f]{64}/);
  });
});
