import { randomUUID } from 'node:crypto';
import Fastify, { type FastifyInstance } from 'fastify';
import { request } from 'undici';
import { Worker, bundleWorkflowCode, type WorkflowBundleWithSourceMap } from '@temporalio/worker';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { startDevServer } from '../helpers/temporal';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { createBridgeApp, mountBridge, type EventSink } from '../../src/bridge';
import {
  Inbox,
  openSqliteRouteStore,
  startForwarder,
  type Forwarder,
  type ForwardOutcome,
  type RouteStore,
} from '../../src/routing';
import { WEBHOOK_HEADERS } from '../../src/contract';
import { sign } from '../../src/contract/signature';
import {
  captureLogs,
  deliver,
  makeEvent,
  nowSeconds,
  post,
  quietBundlerLogger,
  signFor,
  testSubscriberActivities,
} from './bridge-fixtures';
import { stopSignal, subscriberStateQuery, type SubscriberState } from './bridge.workflows';

/**
 * The bridge over real HTTP, with real signed deliveries, its inbox in a real route store (SQLite)
 * and its forwarder signalling a real Temporal dev server, where a stand-in subscriber (the
 * pipeline's role) subscribes in the same store.
 */

const TASK_QUEUE = `bridge-http-${randomUUID()}`;
const OLD_SECRET = 'whsec_old_0123456789abcdef';
const NEW_SECRET = 'whsec_new_fedcba9876543210';
const SECRETS = [OLD_SECRET, NEW_SECRET];
const BODY_LIMIT = 64 * 1024;
/** What the forwarder did with each delivery, in order. */
const routed: ForwardOutcome[] = [];
const STORE_FILE = join(mkdtempSync(join(tmpdir(), 'bridge-http-')), 'routes.sqlite');

let bundle: WorkflowBundleWithSourceMap;
let env: TestWorkflowEnvironment;
let worker: Worker;
let workerRun: Promise<void>;
let bridgeA: FastifyInstance;
let bridgeB: FastifyInstance;
let urlA: string;
let urlB: string;
let logs: string[];
let store: RouteStore;
let forwarder: Forwarder;
let sink: EventSink;
/** A second connection to the store file, to look at its rows. */
let rows: DatabaseSync;

async function listen(app: FastifyInstance, path = '/webhooks'): Promise<string> {
  const address = await app.listen({ host: '127.0.0.1', port: 0 });
  return `${address}${path}`;
}

beforeAll(async () => {
  bundle = await bundleWorkflowCode({
    workflowsPath: require.resolve('./bridge.workflows'),
    logger: quietBundlerLogger(),
  });
  env = await startDevServer();
  store = openSqliteRouteStore(STORE_FILE);
  rows = new DatabaseSync(STORE_FILE);
  worker = await Worker.create({
    connection: env.nativeConnection,
    taskQueue: TASK_QUEUE,
    workflowBundle: bundle,
    activities: testSubscriberActivities(store),
  });
  workerRun = worker.run();
  const inbox = new Inbox({ store, backlogLimit: 10_000 });
  forwarder = startForwarder({
    store,
    client: env.client,
    inbox,
    ttlMs: 60_000,
    onOutcome: (outcome) => {
      if (outcome !== 'unrouted-retry') routed.push(outcome);
    },
  });
  sink = inbox;
  const captured = captureLogs();
  logs = captured.lines;
  bridgeA = await createBridgeApp({ secrets: SECRETS, sink, bodyLimit: BODY_LIMIT, logger: captured.logger });
  bridgeB = await createBridgeApp({ secrets: SECRETS, sink, bodyLimit: BODY_LIMIT, logger: false });
  urlA = await listen(bridgeA);
  urlB = await listen(bridgeB);
});

afterAll(async () => {
  await bridgeA?.close();
  await bridgeB?.close();
  await forwarder?.stop();
  worker?.shutdown();
  await workerRun;
  await store?.close();
  rows?.close();
  await env?.teardown();
});

/** Waits until `subscriber`'s row in the route store names it (the subscription is in place). */
async function subscribed(requestId: string, subscriber: string): Promise<void> {
  for (let i = 0; i < 200; i += 1) {
    const row = rows.prepare('SELECT workflow_id FROM reelflow_routes WHERE request_id = ?').get(requestId);
    if (row?.workflow_id === subscriber) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`${subscriber} never subscribed to ${requestId}`);
}

/** Whether the inbox holds a delivery of `requestId`. */
function stored(requestId: string): boolean {
  return rows.prepare('SELECT 1 FROM reelflow_inbox WHERE request_id = ?').get(requestId) !== undefined;
}

/** Waits until the forwarder has handled `count` more deliveries than `before`. */
async function forwarded(before: number, count: number): Promise<ForwardOutcome[]> {
  for (let i = 0; i < 400 && routed.length < before + count; i += 1)
    await new Promise((resolve) => setTimeout(resolve, 25));
  return routed.slice(before, before + count);
}

function startSubscriber(requestIds: string[], options: { subscribe: boolean; stayOpen?: boolean }) {
  return env.client.workflow.start('testSubscriberWorkflow', {
    taskQueue: TASK_QUEUE,
    workflowId: `subscriber/${randomUUID()}`,
    args: [requestIds, options],
  });
}

describe('webhook bridge over real HTTP on a real Temporal server', () => {
  it('hands a valid delivery to the waiting workflow and answers 202', async () => {
    const event = makeEvent();
    const subscriber = await startSubscriber([event.request_id], { subscribe: true });
    await subscribed(event.request_id, subscriber.workflowId);
    const answer = await deliver(urlA, event, [NEW_SECRET]);
    expect(answer.status).toBe(202);
    expect(JSON.parse(answer.text)).toEqual({ accepted: true, event_id: event.event_id });

    const state = (await subscriber.result()) as SubscriberState;
    expect(state.events.map((e) => e.event_id)).toEqual([event.event_id]);
    expect(state.received).toBe(1);
    expect(routed[routed.length - 1]).toBe('signalled');
  });

  describe('answers 401 with an empty body and signals nothing', () => {
    type Case = [name: string, build: (body: string, id: string) => { body: string; headers: Record<string, string> }];
    const good = (body: string, id: string) => signFor(body, { id, secrets: [NEW_SECRET] });
    const without = (header: string) => (body: string, id: string) => {
      const headers = good(body, id);
      delete headers[header];
      return { body, headers };
    };
    const withSignature = (value: (body: string, id: string, ts: number) => string) => (body: string, id: string) => {
      const headers = good(body, id);
      headers[WEBHOOK_HEADERS.signature] = value(body, id, Number(headers[WEBHOOK_HEADERS.timestamp]));
      return { body, headers };
    };
    const cases: Case[] = [
      ['missing id header', without(WEBHOOK_HEADERS.id)],
      ['missing timestamp header', without(WEBHOOK_HEADERS.timestamp)],
      ['missing signature header', without(WEBHOOK_HEADERS.signature)],
      [
        'timestamp 301 s in the past',
        (body, id) => ({ body, headers: signFor(body, { id, secrets: [NEW_SECRET], timestamp: nowSeconds() - 301 }) }),
      ],
      [
        'timestamp 301 s in the future',
        (body, id) => ({ body, headers: signFor(body, { id, secrets: [NEW_SECRET], timestamp: nowSeconds() + 301 }) }),
      ],
      [
        're-serialised body (same JSON, other bytes)',
        (body, id) => ({ body: JSON.stringify(JSON.parse(body), null, 2), headers: good(body, id) }),
      ],
      ['wrong secret', (body, id) => ({ body, headers: signFor(body, { id, secrets: ['whsec_someone_else'] }) })],
      ['empty v1= entry', withSignature(() => 'v1=')],
      ['non-hex v1=zz entry', withSignature(() => 'v1=zz')],
      [
        'right digest under a v2= scheme',
        withSignature((body, id, ts) => sign({ id, timestamp: ts, body, secret: NEW_SECRET }).replace('v1=', 'v2=')),
      ],
      [
        'body differing by one byte',
        (body, id) => ({ body: body.replace('out.mp4', 'out.mp5'), headers: good(body, id) }),
      ],
      [
        'id header not the one signed',
        (body, id) => {
          const headers = good(body, id);
          headers[WEBHOOK_HEADERS.id] = `${id}-other`;
          return { body, headers };
        },
      ],
    ];

    it.each(cases)('%s', async (_name, build) => {
      const event = makeEvent();
      const { body, headers } = build(JSON.stringify(event), event.event_id);
      const answer = await post(urlA, body, headers);
      expect(answer.status).toBe(401);
      expect(answer.text).toBe('');
      expect(stored(event.request_id)).toBe(false);
    });
  });

  it('answers 413 to a body over the limit, without reading it as an event', async () => {
    const event = makeEvent({ data: { request_id: 'x', padding: 'p'.repeat(BODY_LIMIT) } as never });
    const body = JSON.stringify(event);
    expect(Buffer.byteLength(body)).toBeGreaterThan(BODY_LIMIT);
    const answer = await post(urlA, body, signFor(body, { id: event.event_id, secrets: [NEW_SECRET] }));
    expect(answer.status).toBe(413);
    expect(JSON.parse(answer.text)).toMatchObject({ code: 'payload_too_large', status: 413 });
    expect(stored(event.request_id)).toBe(false);
  });

  it('accepts a body exactly at the limit (the limit is inclusive)', async () => {
    const event = makeEvent();
    const base = JSON.stringify({ ...event, padding: '' });
    const body = JSON.stringify({ ...event, padding: 'p'.repeat(BODY_LIMIT - Buffer.byteLength(base)) });
    expect(Buffer.byteLength(body)).toBe(BODY_LIMIT);
    const answer = await post(urlA, body, signFor(body, { id: event.event_id, secrets: [NEW_SECRET] }));
    expect(answer.status).toBe(202);
  });

  it('answers 400 to a well-signed but malformed event and signals nothing', async () => {
    const event = makeEvent();
    const { created_at: _dropped, ...missingCreatedAt } = event;
    for (const body of [
      JSON.stringify(missingCreatedAt),
      '{"event_id": not json',
      JSON.stringify({ ...event, api_version: '2025/01/01' }),
    ]) {
      const answer = await post(urlA, body, signFor(body, { id: event.event_id, secrets: [NEW_SECRET] }));
      expect(answer.status).toBe(400);
      expect(JSON.parse(answer.text)).toMatchObject({ code: 'malformed_event', status: 400 });
    }
    const answer = await post(
      urlA,
      JSON.stringify(missingCreatedAt),
      signFor(JSON.stringify(missingCreatedAt), { id: event.event_id, secrets: [NEW_SECRET] }),
    );
    expect(JSON.parse(answer.text).errors).toEqual([expect.objectContaining({ path: 'created_at' })]);
    expect(stored(event.request_id)).toBe(false);
  });

  it('a duplicate delivery (same event_id) reaches the workflow state once', async () => {
    const event = makeEvent();
    const subscriber = await startSubscriber([event.request_id], { subscribe: true, stayOpen: true });
    await subscribed(event.request_id, subscriber.workflowId);
    const before = routed.length;
    expect((await deliver(urlA, event, [NEW_SECRET])).status).toBe(202);
    expect((await deliver(urlA, event, [NEW_SECRET], nowSeconds() - 5)).status).toBe(202);
    expect((await deliver(urlA, event, [OLD_SECRET, NEW_SECRET])).status).toBe(202);
    // The inbox keeps one row per event_id: the redeliveries are acknowledged and signalled once.
    expect(await forwarded(before, 1)).toEqual(['signalled']);
    expect(rows.prepare('SELECT count(*) AS n FROM reelflow_inbox WHERE event_id = ?').get(event.event_id)).toEqual(
      expect.objectContaining({ n: 1 }),
    );
    const state = await subscriber.query(subscriberStateQuery);
    expect(state.received).toBe(1);
    expect(state.events.map((e) => e.event_id)).toEqual([event.event_id]);
    await subscriber.signal(stopSignal);
    await subscriber.result();
  });

  it('completes when the webhook arrives before the workflow subscribes: parked in the store, handed to the subscribe', async () => {
    const event = makeEvent();
    expect((await deliver(urlA, event, [NEW_SECRET])).status).toBe(202);
    expect(stored(event.request_id)).toBe(true);

    const subscriber = await startSubscriber([event.request_id], { subscribe: true });
    const state = (await subscriber.result()) as SubscriberState;
    expect(state.events.map((e) => e.event_id)).toEqual([event.event_id]);
    // It came back in the subscription's answer, not by signal.
    expect([state.handedOver, state.received]).toEqual([1, 0]);
    // No route workflow was started for it.
    expect(routed).not.toContain('route-workflow');
  });

  it('two bridges receiving the same event at once, before the subscription: stored once, reaches the state once', async () => {
    const event = makeEvent();
    const answers = await Promise.all([
      deliver(urlA, event, [NEW_SECRET]),
      deliver(urlB, event, [NEW_SECRET]),
      deliver(urlA, event, [OLD_SECRET]),
    ]);
    expect(answers.map((a) => a.status)).toEqual([202, 202, 202]);
    expect(rows.prepare('SELECT count(*) AS n FROM reelflow_inbox WHERE event_id = ?').get(event.event_id)).toEqual(
      expect.objectContaining({ n: 1 }),
    );
    const subscriber = await startSubscriber([event.request_id], { subscribe: true });
    const state = (await subscriber.result()) as SubscriberState;
    expect(state.events.map((e) => e.event_id)).toEqual([event.event_id]);
    expect(state.handedOver).toBe(1);
  });

  it('accepts a delivery signed with either secret during a rotation', async () => {
    for (const secrets of [[OLD_SECRET], [NEW_SECRET], ['whsec_retired', NEW_SECRET]]) {
      const event = makeEvent();
      expect((await deliver(urlB, event, secrets)).status).toBe(202);
      expect(stored(event.request_id)).toBe(true);
    }
  });

  it('logs the rejected webhook id, never secrets, signatures or bodies', async () => {
    const event = makeEvent({ status: 'OK-marker-7f3a' });
    const body = JSON.stringify(event);
    const headers = signFor(body, { id: event.event_id, secrets: [NEW_SECRET] });
    expect((await post(urlA, body, headers)).status).toBe(202);
    const forged = makeEvent();
    expect((await deliver(urlA, forged, ['whsec_forger'])).status).toBe(401);

    const accepted = logs
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .find((l) => l.event_id === event.event_id);
    // Accepted deliveries are not logged one by one (at thousands a second that costs more than the commit).
    expect(accepted).toBeUndefined();
    const rejected = logs
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .find((l) => l.webhook_id === forged.event_id);
    expect(rejected).toMatchObject({ outcome: 'rejected', reason: 'signature_mismatch' });
    const all = logs.join('\n');
    for (const secret of SECRETS) expect(all).not.toContain(secret);
    expect(all).not.toContain(headers[WEBHOOK_HEADERS.signature]!.slice(3));
    expect(all).not.toContain('OK-marker-7f3a');
    expect(all).not.toContain('files.example.test');
  });

  it('serves liveness and readiness', async () => {
    const base = urlA.replace(/\/webhooks$/, '');
    const live = await request(`${base}/healthz`);
    expect(live.statusCode).toBe(200);
    expect(await live.body.json()).toEqual({ status: 'ok' });
    const ready = await request(`${base}/readyz`);
    expect(ready.statusCode).toBe(200);
    expect(await ready.body.json()).toEqual({ status: 'ready' });
  });

  it('mounts into an existing Fastify app without changing how the host parses JSON', async () => {
    const host = Fastify();
    host.post('/api/echo', async (req) => ({ echoed: req.body }));
    await mountBridge(host, {
      secrets: SECRETS,
      path: '/hooks/service',
      health: false,
      sink,
    });
    const url = await listen(host, '/hooks/service');
    try {
      const echo = await request(url.replace('/hooks/service', '/api/echo'), {
        method: 'POST',
        body: '{"a":1}',
        headers: { 'content-type': 'application/json' },
      });
      expect(await echo.body.json()).toEqual({ echoed: { a: 1 } });
      const event = makeEvent();
      expect((await deliver(url, event, [OLD_SECRET])).status).toBe(202);
      expect(stored(event.request_id)).toBe(true);
      expect((await deliver(url, makeEvent(), ['whsec_forger'])).status).toBe(401);
    } finally {
      await host.close();
    }
  });
});
