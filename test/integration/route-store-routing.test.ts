import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import type { FastifyInstance } from 'fastify';
import { Client, Connection } from '@temporalio/client';
import { Worker, bundleWorkflowCode } from '@temporalio/worker';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { startDevServer } from '../helpers/temporal';
import { freePort } from '../../src/stack/stack-state';
import { createBridgeApp } from '../../src/bridge';
import {
  Inbox,
  INBOX_STATE,
  openSqliteRouteStore,
  startForwarder,
  warmSignalPath,
  type Forwarder,
  type ForwardOutcome,
  type RouteStore,
} from '../../src/routing';
import { routeWorkflowId } from '../../src/workflows/definitions';
import type { RouteSummary } from '../../src/workflows/webhook-route';
import {
  deliver,
  makeEvent,
  quietBundlerLogger,
  routeWorkflowSubscriberActivities,
  testSubscriberActivities,
} from './bridge-fixtures';
import type { SubscriberState } from './bridge.workflows';

/**
 * Routing through the route store on a real dev server: deliveries for jobs nobody here submitted
 * stay rows (never workflows) and are purged after their TTL; subscribers of builds that still
 * subscribe through route workflows get their events from the upgraded bridge (its fallback).
 */

const SECRET = 'whsec_routes_0123456789';
const TTL_MS = 60_000;
const PARK_AFTER_MS = 400;

let env: TestWorkflowEnvironment;
let store: RouteStore;
let rows: DatabaseSync;
let forwarder: Forwarder;
let app: FastifyInstance;
let url: string;
const outcomes: { outcome: ForwardOutcome; requestId: string }[] = [];
/** Current time of the store's clock (the forwarder's purge reads it), moved forward by the TTL test. */
let clockOffsetMs = 0;
const now = () => Date.now() + clockOffsetMs;
const workers: { worker: Worker; running: Promise<void> }[] = [];

async function startWorker(taskQueue: string, routeWorkflows: boolean): Promise<void> {
  const bundle = await bundleWorkflowCode({
    workflowsPath: require.resolve('./bridge.workflows'),
    logger: quietBundlerLogger(),
  });
  const worker = await Worker.create({
    connection: env.nativeConnection,
    taskQueue,
    workflowBundle: bundle,
    activities: routeWorkflows
      ? routeWorkflowSubscriberActivities(env.client, taskQueue)
      : testSubscriberActivities(store),
  });
  workers.push({ worker, running: worker.run() });
}

beforeAll(async () => {
  env = await startDevServer();
  const file = join(mkdtempSync(join(tmpdir(), 'route-store-')), 'routes.sqlite');
  store = openSqliteRouteStore(file);
  rows = new DatabaseSync(file);
  const inbox = new Inbox({ store, backlogLimit: 10_000 });
  forwarder = startForwarder({
    store,
    client: env.client,
    inbox,
    ttlMs: TTL_MS,
    parkAfterMs: PARK_AFTER_MS,
    purgeEveryMs: 60 * 60_000,
    now,
    onOutcome: (outcome, delivery) => outcomes.push({ outcome, requestId: delivery.requestId }),
  });
  app = await createBridgeApp({ secrets: [SECRET], sink: inbox, logger: false });
  url = `${await app.listen({ host: '127.0.0.1', port: 0 })}/webhooks`;
});

afterAll(async () => {
  await app?.close();
  await forwarder?.stop();
  for (const { worker, running } of workers) {
    worker.shutdown();
    await running;
  }
  await store?.close();
  rows?.close();
  await env?.teardown();
});

async function eventually(probe: () => boolean | Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 600; i += 1) {
    if (await probe()) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

async function runningWorkflows(): Promise<number> {
  let count = 0;
  for await (const _ of env.client.workflow.list({ query: 'ExecutionStatus = "Running"' })) count += 1;
  return count;
}

describe('routing through the route store', () => {
  it('past its backlog bound the bridge answers 503 with Retry-After, and takes deliveries again once drained', async () => {
    const small = openSqliteRouteStore(':memory:');
    const inbox = new Inbox({ store: small, backlogLimit: 2 });
    const bounded = await createBridgeApp({ secrets: [SECRET], sink: inbox, logger: false });
    const boundedUrl = `${await bounded.listen({ host: '127.0.0.1', port: 0 })}/webhooks`;
    try {
      expect((await deliver(boundedUrl, makeEvent(), [SECRET])).status).toBe(202);
      expect((await deliver(boundedUrl, makeEvent(), [SECRET])).status).toBe(202);
      const full = await deliver(boundedUrl, makeEvent(), [SECRET]);
      expect([full.status, full.retryAfter]).toEqual([503, '5']);
      expect(JSON.parse(full.text)).toMatchObject({ code: 'service_unavailable' });
      inbox.drained(1);
      expect((await deliver(boundedUrl, makeEvent(), [SECRET])).status).toBe(202);
    } finally {
      await bounded.close();
      await small.close();
    }
  });

  it('while a burst arrives, the forwarder holds its deliveries until they are busyHoldMs old, then forwards them during the burst', async () => {
    const burstStore = openSqliteRouteStore(':memory:');
    let clock = Date.now();
    const inbox = new Inbox({ store: burstStore, backlogLimit: 10_000, now: () => clock });
    const handled: string[] = [];
    const burstForwarder = startForwarder({
      store: burstStore,
      client: env.client,
      inbox,
      ttlMs: TTL_MS,
      busyHoldMs: 2_000,
      busyRate: 200,
      idlePollMs: 20,
      routeWorkflowFallback: false,
      now: () => clock,
      onOutcome: (_, delivery) => handled.push(delivery.requestId),
    });
    // 100 appends in this clock's 100 ms slot: 500 deliveries/s, well over busyRate.
    const burst = (tag: string) =>
      Promise.all(
        Array.from({ length: 100 }, (_, i) =>
          inbox.append({ eventId: `${tag}-${i}`, requestId: `${tag}-${i}`, body: '{}' }),
        ),
      );
    try {
      const event = makeEvent();
      // Its subscriber has closed: the forwarder's signal finds no workflow, which is an outcome too.
      await burstStore.subscribe(
        { requestId: event.request_id, workflowId: `gone/${randomUUID()}`, signalName: 'jobEvent' },
        clock,
      );
      await inbox.append({ eventId: event.event_id, requestId: event.request_id, body: JSON.stringify(event) });
      await burst('first');
      await new Promise((resolve) => setTimeout(resolve, 600));
      expect(handled).not.toContain(event.request_id);
      // 2.1 s later by the clock, the burst still arriving: the held delivery is old enough to go.
      clock += 2_100;
      await burst('second');
      await eventually(() => handled.includes(event.request_id), 'the held delivery forwarded');
      expect(inbox.recentRate()).toBeGreaterThan(200);
    } finally {
      await burstForwarder.stop();
      await burstStore.close();
    }
  });

  it('0 workflows running after the deliveries of 20 jobs reelflow did not submit; their rows are purged after the TTL', async () => {
    const foreign = Array.from({ length: 20 }, () => makeEvent({ request_id: `foreign-${randomUUID()}` }));
    for (const event of foreign) expect((await deliver(url, event, [SECRET])).status).toBe(202);
    const ids = new Set(foreign.map((event) => event.request_id));
    await eventually(
      () => outcomes.filter((o) => o.outcome === 'parked' && ids.has(o.requestId)).length === 20,
      'the 20 foreign deliveries to be parked',
    );
    // Not one workflow: no route workflow was started for them (the visibility store is eventually
    // consistent, so it is asked after the forwarder is done, and twice).
    expect(await runningWorkflows()).toBe(0);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(await runningWorkflows()).toBe(0);
    const parked = rows
      .prepare(`SELECT count(*) AS n FROM reelflow_inbox WHERE request_id LIKE 'foreign-%' AND state = ?`)
      .get(INBOX_STATE.parked);
    expect(parked?.n).toBe(20);

    // Kept until their TTL, then purged.
    expect((await forwarder.purge()).deliveries).toBe(0);
    clockOffsetMs = TTL_MS + 1_000;
    try {
      expect((await forwarder.purge()).deliveries).toBeGreaterThanOrEqual(20);
    } finally {
      clockOffsetMs = 0;
    }
    expect(rows.prepare(`SELECT count(*) AS n FROM reelflow_inbox WHERE request_id LIKE 'foreign-%'`).get()?.n).toBe(0);
  });

  it('the forwarder readies its signal path at start: Temporal answers the warm-up; without Temporal it gives up at its deadline and never throws', async () => {
    expect(await warmSignalPath(env.client)).toBe(true);
    // Nothing listens on a port just freed: the warm-up's one call is refused or waits out its deadline.
    const connection = Connection.lazy({ address: `127.0.0.1:${await freePort()}` });
    try {
      expect(await warmSignalPath(new Client({ connection }), 300)).toBe(false);
    } finally {
      await connection.close();
    }
    expect(await warmSignalPath({} as Client)).toBe(false);
  });

  it('a subscriber that subscribes in the store gets a later delivery by signal, with no other workflow', async () => {
    const taskQueue = `routes-store-${randomUUID()}`;
    await startWorker(taskQueue, false);
    const event = makeEvent();
    const subscriber = await env.client.workflow.start('testSubscriberWorkflow', {
      taskQueue,
      workflowId: `subscriber/${randomUUID()}`,
      args: [[event.request_id], { subscribe: true }],
    });
    await eventually(
      () => rows.prepare('SELECT 1 FROM reelflow_routes WHERE request_id = ?').get(event.request_id) !== undefined,
      'the subscription row',
    );
    expect((await deliver(url, event, [SECRET])).status).toBe(202);
    const state = (await subscriber.result()) as SubscriberState;
    expect(state.events.map((e) => e.event_id)).toEqual([event.event_id]);
    expect(outcomes.find((o) => o.requestId === event.request_id)?.outcome).toBe('signalled');
    await expect(env.client.workflow.getHandle(routeWorkflowId(event.request_id)).describe()).rejects.toThrow();
  });

  it('a subscriber of a build that routes through route workflows still gets its events from the upgraded bridge', async () => {
    const taskQueue = `routes-pinned-${randomUUID()}`;
    await startWorker(taskQueue, true);
    const event = makeEvent();
    const subscriber = await env.client.workflow.start('testSubscriberWorkflow', {
      taskQueue,
      workflowId: `subscriber/${randomUUID()}`,
      args: [[event.request_id], { subscribe: true }],
    });
    // Its subscription is a route workflow naming it, as those builds made it.
    await eventually(
      () =>
        env.client.workflow
          .getHandle(routeWorkflowId(event.request_id))
          .describe()
          .then(
            (d) => d.memo?.subscriber === subscriber.workflowId,
            () => false,
          ),
      'the route workflow of the older build',
    );
    expect((await deliver(url, event, [SECRET])).status).toBe(202);
    const state = (await subscriber.result()) as SubscriberState;
    expect(state.events.map((e) => e.event_id)).toEqual([event.event_id]);
    expect(outcomes.find((o) => o.requestId === event.request_id)?.outcome).toBe('route-workflow');
    const route = await env.client.workflow
      .getHandle<() => Promise<RouteSummary>>(routeWorkflowId(event.request_id))
      .result();
    expect(route.endedBecause).toBe('handed_over');
  });
});
