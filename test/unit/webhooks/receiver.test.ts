import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { API_VERSION, EVENT_TYPES, type WebhookEvent } from '../../../src/contract';
import { signedHeaders } from '../../../src/contract/signature';
import { createWebhookReceiver, WebhookReceiverOptionsError, type ReceiverOutcome } from '../../../src/webhooks';

/** The framework-free receiver, served over real HTTP on loopback by node:http and by Express. */

const SECRET = 'whsec_receiver_1';
const event = {
  event_id: 'evt_r1',
  event_type: EVENT_TYPES.completed,
  api_version: API_VERSION,
  created_at: '2026-01-01T00:00:00.000Z',
  request_id: 'req_r1',
  status: 'OK',
  data: { status: 'COMPLETED', videos: [] },
  error: null,
};
const BODY = JSON.stringify(event);

function signed(body: string, secret = SECRET): Record<string, string> {
  return {
    'content-type': 'application/json',
    ...signedHeaders({
      id: 'evt_r1',
      timestamp: Math.floor(Date.now() / 1000),
      body,
      secrets: [secret],
      eventType: EVENT_TYPES.completed,
    }),
  };
}

async function listen(handler: http.RequestListener): Promise<{ url: string; close: () => Promise<void> }> {
  const server = http.createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/webhooks`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

type Mount = (receiver: ReturnType<typeof createWebhookReceiver>) => http.RequestListener;

const MOUNTS: [string, Mount][] = [
  ['node:http', (receiver) => receiver],
  [
    'Express',
    (receiver) => {
      const app = express();
      app.post('/webhooks', receiver);
      return app;
    },
  ],
  [
    'Express behind express.raw()',
    (receiver) => {
      const app = express();
      app.post('/webhooks', express.raw({ type: '*/*' }), receiver);
      return app;
    },
  ],
];

describe.each(MOUNTS)('createWebhookReceiver served by %s', (_name, mount) => {
  let received: WebhookEvent[];
  let outcomes: ReceiverOutcome[];
  let failNext: boolean;
  let server: { url: string; close: () => Promise<void> };

  beforeAll(async () => {
    const receiver = createWebhookReceiver({
      secrets: ['whsec_old', SECRET],
      bodyLimit: 4096,
      onEvent: async (delivered) => {
        if (failNext) {
          failNext = false;
          throw new Error('Temporal is away');
        }
        received.push(delivered);
      },
      onOutcome: (outcome) => outcomes.push(outcome),
    });
    server = await listen(mount(receiver));
  });
  afterAll(() => server.close());
  beforeEach(() => {
    received = [];
    outcomes = [];
    failNext = false;
  });

  it('answers 202 once the verified event was handed on', async () => {
    const response = await fetch(server.url, { method: 'POST', headers: signed(BODY), body: BODY });
    expect(response.status).toBe(202);
    expect(await response.json()).toEqual({ accepted: true, event_id: 'evt_r1' });
    expect(received).toEqual([event]);
    expect(outcomes).toEqual([{ outcome: 'accepted', event }]);
  });

  it('answers 401 with an empty body to a bad signature, and hands nothing on', async () => {
    const response = await fetch(server.url, { method: 'POST', headers: signed(BODY, 'whsec_forged'), body: BODY });
    expect(response.status).toBe(401);
    expect(await response.text()).toBe('');
    expect(received).toEqual([]);
    expect(outcomes).toEqual([{ outcome: 'rejected', reason: 'signature_mismatch' }]);
  });

  it('answers 400 with the field errors to a well-signed body that is not an event', async () => {
    const body = JSON.stringify({ ...event, request_id: 7 });
    const response = await fetch(server.url, { method: 'POST', headers: signed(body), body });
    expect(response.status).toBe(400);
    expect(response.headers.get('content-type')).toBe('application/problem+json');
    expect(await response.json()).toMatchObject({ code: 'malformed_event', errors: [{ path: 'request_id' }] });
    expect(received).toEqual([]);
  });

  it('answers 413 past the body limit', async () => {
    const body = JSON.stringify({ ...event, padding: 'x'.repeat(5000) });
    const response = await fetch(server.url, { method: 'POST', headers: signed(body), body });
    expect(response.status).toBe(413);
    expect(await response.json()).toMatchObject({ code: 'payload_too_large', limit_bytes: 4096 });
    expect(received).toEqual([]);
  });

  it('answers 503 with retry-after when the event could not be handed on, so the service retries', async () => {
    failNext = true;
    const response = await fetch(server.url, { method: 'POST', headers: signed(BODY), body: BODY });
    expect(response.status).toBe(503);
    expect(response.headers.get('retry-after')).toBe('1');
    expect(outcomes).toEqual([expect.objectContaining({ outcome: 'unavailable', event })]);
  });
});

describe('createWebhookReceiver', () => {
  it('answers 405 to a method other than POST (node:http)', async () => {
    const server = await listen(createWebhookReceiver({ secrets: SECRET, onEvent: () => undefined }));
    try {
      const response = await fetch(server.url);
      expect(response.status).toBe(405);
      expect(response.headers.get('allow')).toBe('POST');
    } finally {
      await server.close();
    }
  });

  it('answers 500 naming the fix when express.json() consumed the signed bytes first', async () => {
    const outcomes: ReceiverOutcome[] = [];
    const app = express();
    app.post(
      '/webhooks',
      express.json(),
      createWebhookReceiver({ secrets: SECRET, onEvent: () => undefined, onOutcome: (o) => outcomes.push(o) }),
    );
    const server = await listen(app);
    try {
      const response = await fetch(server.url, { method: 'POST', headers: signed(BODY), body: BODY });
      expect(response.status).toBe(500);
      expect(await response.json()).toMatchObject({
        code: 'raw_body_unavailable',
        detail: expect.stringContaining('express.raw()'),
      });
      expect(outcomes).toEqual([{ outcome: 'no_raw_body' }]);
    } finally {
      await server.close();
    }
  });

  it('refuses unusable options at construction, naming the option', () => {
    const onEvent = () => undefined;
    expect(() => createWebhookReceiver({ secrets: [], onEvent })).toThrow(WebhookReceiverOptionsError);
    expect(() => createWebhookReceiver({ secrets: [''], onEvent })).toThrow(/^secrets: /);
    expect(() => createWebhookReceiver({ secrets: SECRET, onEvent: undefined as never })).toThrow(/^onEvent: /);
    expect(() => createWebhookReceiver({ secrets: SECRET, onEvent, bodyLimit: 0 })).toThrow(/^bodyLimit: /);
  });
});
