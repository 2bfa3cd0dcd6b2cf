import { randomUUID } from 'node:crypto';
import Fastify, { type FastifyInstance } from 'fastify';
import { request } from 'undici';
import { Worker, bundleWorkflowCode, type WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { WorkflowNotFoundError } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { startDevServer } from '../helpers/temporal';
import { createBridgeApp, createTemporalSink, mountBridge, type RouteDelivery } from '../../src/bridge';
import { routeWorkflowId } from '../../src/workflows/definitions';
import type { RouteSummary } from '../../src/workflows/webhook-route';
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
 * The bridge over real HTTP, with real signed deliveries, against a real Temporal dev server and a
 * worker running the real route workflow plus a stand-in subscriber (the pipeline's role).
 */

const TASK_QUEUE = `bridge-http-${randomUUID()}`;
const OLD_SECRET = 'whsec_old_0123456789abcdef';
const NEW_SECRET = 'whsec_new_fedcba9876543210';
const SECRETS = [OLD_SECRET, NEW_SECRET];
const BODY_LIMIT = 64 * 1024;
const ROUTE_LIFETIME = { ttlMs: 60_000 };
/** How each delivery was routed, in order. */
const routed: RouteDelivery[] = [];

let bundle: WorkflowBundleWithSourceMap;
let env: TestWorkflowEnvironment;
let worker: Worker;
let workerRun: Promise<void>;
let bridgeA: FastifyInstance;
let bridgeB: FastifyInstance;
let urlA: string;
let urlB: string;
let logs: string[];

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
  worker = await Worker.create({
    connection: env.nativeConnection,
    taskQueue: TASK_QUEUE,
    workflowBundle: bundle,
    activities: testSubscriberActivities(env.client, TASK_QUEUE, ROUTE_LIFETIME),
  });
  workerRun = worker.run();
  const sink = createTemporalSink({
    client: env.client,
    taskQueue: TASK_QUEUE,
    signalTimeoutMs: 5_000,
    rendezvous: ROUTE_LIFETIME,
    onRouted: (how) => routed.push(how),
  });
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
  worker?.shutdown();
  await workerRun;
  await env?.teardown();
});

/** Waits until a subscriber's route names it (the subscription is in place). */
async function subscribed(requestId: string, subscriber: string): Promise<void> {
  for (let i = 0; i < 200; i += 1) {
    const description = await env.client.workflow
      .getHandle(routeWorkflowId(requestId))
      .describe()
      .catch(() => undefined);
    if (description?.memo?.subscriber === subscriber) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`${subscriber} never subscribed to ${requestId}`);
}

async function routeExists(requestId: string): Promise<boolean> {
  try {
    await env.client.workflow.getHandle(routeWorkflowId(requestId)).describe();
    return true;
  } catch (error) {
    if (error instanceof WorkflowNotFoundError) return false;
    throw error;
  }
}

function startSubscriber(requestIds: string[], options: { subscribe: boolean; stayOpen?: boolean }) {
  return env.client.workflow.start('testSubscriberWorkflow', {
    taskQueue: TASK_QUEUE,
    workflowId: `subscriber/${randomUUID()}`,
    args: [requestIds, options],
  });
}

const routeResult = (requestId: string): Promise<RouteSummary> =>
  env.client.workflow.getHandle(routeWorkflowId(requestId)).result();

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
    expect(routed[routed.length - 1]).toBe('direct');
    // The route named the subscriber and closed at once; the event went past it, straight to the subscriber.
    const summary = await routeResult(event.request_id);
    expect(summary).toMatchObject({ endedBecause: 'handed_over', subscriber: subscriber.workflowId, events: [] });
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
      expect(await routeExists(event.request_id)).toBe(false);
    });
  });

  it('answers 413 to a body over the limit, without reading it as an event', async () => {
    const event = makeEvent({ data: { request_id: 'x', padding: 'p'.repeat(BODY_LIMIT) } as never });
    const body = JSON.stringify(event);
    expect(Buffer.byteLength(body)).toBeGreaterThan(BODY_LIMIT);
    const answer = await post(urlA, body, signFor(body, { id: event.event_id, secrets: [NEW_SECRET] }));
    expect(answer.status).toBe(413);
    expect(JSON.parse(answer.text)).toMatchObject({ code: 'payload_too_large', status: 413 });
    expect(await routeExists(event.request_id)).toBe(false);
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
    expect(await routeExists(event.request_id)).toBe(false);
  });

  it('a duplicate delivery (same event_id) reaches the workflow state once', async () => {
    const event = makeEvent();
    const subscriber = await startSubscriber([event.request_id], { subscribe: true, stayOpen: true });
    await subscribed(event.request_id, subscriber.workflowId);
    expect((await deliver(urlA, event, [NEW_SECRET])).status).toBe(202);
    expect((await deliver(urlA, event, [NEW_SECRET], nowSeconds() - 5)).status).toBe(202);
    expect((await deliver(urlA, event, [OLD_SECRET, NEW_SECRET])).status).toBe(202);
    expect(routed.slice(-3)).toEqual(['direct', 'direct', 'direct']);
    // Each delivery was signalled straight to the subscriber, which dedupes on event_id (as the pipeline does).
    const state = await subscriber.query(subscriberStateQuery);
    expect(state.received).toBe(3);
    expect(state.events.map((e) => e.event_id)).toEqual([event.event_id]);
    await subscriber.signal(stopSignal);
    await subscriber.result();
  });

  it('completes when the webhook arrives before the workflow subscribes', async () => {
    const event = makeEvent();
    expect((await deliver(urlA, event, [NEW_SECRET])).status).toBe(202);
    expect(routed[routed.length - 1]).toBe('parked');
    const parked = await env.client.workflow.getHandle(routeWorkflowId(event.request_id)).describe();
    expect([parked.type, parked.status.name, parked.memo?.subscriber]).toEqual([
      'webhookRouteWorkflow',
      'RUNNING',
      undefined,
    ]);

    const subscriber = await startSubscriber([event.request_id], { subscribe: true });
    const state = (await subscriber.result()) as SubscriberState;
    expect(state.events.map((e) => e.event_id)).toEqual([event.event_id]);
    // It came back in the subscription's answer, not by signal.
    expect([state.handedOver, state.received]).toEqual([1, 0]);
    const summary = await routeResult(event.request_id);
    expect(summary).toMatchObject({ endedBecause: 'handed_over', subscriber: subscriber.workflowId });
    expect(summary.events.map((e) => e.event_id)).toEqual([event.event_id]);
    // A retry of the same delivery after the route closed goes straight to the subscriber (closed too: dropped).
    expect((await deliver(urlA, event, [NEW_SECRET])).status).toBe(202);
    expect(routed[routed.length - 1]).toBe('subscriber-closed');
  });

  it('two bridges receiving the same event at once, before the subscription: parked once, reaches the state once', async () => {
    const event = makeEvent();
    const answers = await Promise.all([
      deliver(urlA, event, [NEW_SECRET]),
      deliver(urlB, event, [NEW_SECRET]),
      deliver(urlA, event, [OLD_SECRET]),
    ]);
    expect(answers.map((a) => a.status)).toEqual([202, 202, 202]);
    const subscriber = await startSubscriber([event.request_id], { subscribe: true, stayOpen: true });
    const summary = await routeResult(event.request_id);
    expect(summary.events.map((e) => e.event_id)).toEqual([event.event_id]);
    expect(summary.duplicatesIgnored).toBe(2);
    // And after the subscription, two bridges signal the subscriber directly: it dedupes.
    await Promise.all([deliver(urlA, event, [NEW_SECRET]), deliver(urlB, event, [NEW_SECRET])]);
    const state = await subscriber.query(subscriberStateQuery);
    expect(state.events.map((e) => e.event_id)).toEqual([event.event_id]);
    expect([state.handedOver, state.received]).toEqual([1, 2]);
    await subscriber.signal(stopSignal);
    await subscriber.result();
  });

  it('accepts a delivery signed with either secret during a rotation', async () => {
    for (const secrets of [[OLD_SECRET], [NEW_SECRET], ['whsec_retired', NEW_SECRET]]) {
      const event = makeEvent();
      expect((await deliver(urlB, event, secrets)).status).toBe(202);
      expect(await routeExists(event.request_id)).toBe(true);
    }
  });

  it('logs event_id and request_id, never secrets, signatures or bodies', async () => {
    const event = makeEvent({ status: 'OK-marker-7f3a' });
    const body = JSON.stringify(event);
    const headers = signFor(body, { id: event.event_id, secrets: [NEW_SECRET] });
    expect((await post(urlA, body, headers)).status).toBe(202);
    const forged = makeEvent();
    expect((await deliver(urlA, forged, ['whsec_forger'])).status).toBe(401);

    const accepted = logs
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .find((l) => l.event_id === event.event_id);
    expect(accepted).toMatchObject({ request_id: event.request_id, outcome: 'accepted' });
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
      sink: createTemporalSink({ client: env.client, taskQueue: TASK_QUEUE, rendezvous: ROUTE_LIFETIME }),
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
      expect(await routeExists(event.request_id)).toBe(true);
      expect((await deliver(url, makeEvent(), ['whsec_forger'])).status).toBe(401);
    } finally {
      await host.close();
    }
  });
});
