import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import pino from 'pino';
import { Worker, bundleWorkflowCode, type WorkflowBundleWithSourceMap } from '@temporalio/worker';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { startDevServer } from '../helpers/temporal';
import { loadBridgeConfig, startBridgeServer, type RunningBridge } from '../../src/bridge';
import { DatabaseSync } from 'node:sqlite';
import { startTestPostgres } from '../helpers/postgres';
import { deliver, makeEvent, quietBundlerLogger, testSubscriberActivities } from './bridge-fixtures';
import type { SubscriberState } from './bridge.workflows';
import { freePort } from '../../src/stack/stack-state';
import type { RouteStore } from '../../src/routing';

/**
 * Outages under a running bridge. Temporal goes away and comes back: deliveries are still
 * acknowledged (the inbox holds them) and reach the workflow once it is back (the dev server restarts
 * on the same port with the same SQLite file, so the subscribed workflow survives). The route store
 * (PostgreSQL) goes away and comes back: deliveries get 503 with Retry-After (the service retries),
 * and the retried delivery reaches the workflow; nothing acknowledged is lost.
 */

const SECRET = 'whsec_outage_0123456789';
const TASK_QUEUE = `bridge-outage-${randomUUID()}`;

let bundle: WorkflowBundleWithSourceMap;
let dir: string;

beforeAll(async () => {
  bundle = await bundleWorkflowCode({
    workflowsPath: require.resolve('./bridge.workflows'),
    logger: quietBundlerLogger(),
  });
  dir = mkdtempSync(join(tmpdir(), 'reelflow-bridge-outage-'));
});

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

const makeWorker = (env: TestWorkflowEnvironment, store: RouteStore) =>
  Worker.create({
    connection: env.nativeConnection,
    taskQueue: TASK_QUEUE,
    workflowBundle: bundle,
    activities: testSubscriberActivities(store),
  });

async function readyStatus(bridge: RunningBridge): Promise<number> {
  const response = await request(bridge.url.replace(/\/webhooks$/, '/readyz'));
  await response.body.dump();
  return response.statusCode;
}

/** Starts the subscriber and waits until its row is in the store. */
async function subscribe(env: TestWorkflowEnvironment, store: RouteStore, requestId: string): Promise<string> {
  const subscriberId = `subscriber/${randomUUID()}`;
  await env.client.workflow.start('testSubscriberWorkflow', {
    taskQueue: TASK_QUEUE,
    workflowId: subscriberId,
    args: [[requestId], { subscribe: true }],
  });
  // The subscribe is idempotent: asking again returns once the row exists (and takes nothing: no delivery yet).
  for (let i = 0; i < 200; i += 1) {
    const state = await env.client.workflow
      .getHandle(subscriberId)
      .query('subscriberState')
      .catch(() => undefined);
    if (state !== undefined && (await store.pendingCount()) >= 0 && (await subscribedIn(store, requestId))) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return subscriberId;
}

let subscribedIn: (store: RouteStore, requestId: string) => Promise<boolean>;

interface InboxMetrics {
  backlog: number;
  /** Seconds the oldest undelivered event has waited. */
  age: number;
  failures: number;
}

/** Scrapes the bridge's own metrics port until `done` holds (at most 60 s); the last reading. */
async function metricsUntil(url: string, done: (metrics: InboxMetrics) => boolean): Promise<InboxMetrics> {
  let last: InboxMetrics = { backlog: -1, age: -1, failures: -1 };
  for (let i = 0; i < 300; i += 1) {
    const text = await (await request(url)).body.text();
    const value = (series: string) => Number(new RegExp(`^${series} (\\S+)$`, 'm').exec(text)?.[1] ?? 0);
    last = {
      backlog: value('reelflow_bridge_inbox_backlog'),
      age: value('reelflow_bridge_inbox_oldest_age_seconds'),
      failures:
        value('reelflow_bridge_forward_failures_total\\{kind="temporal_retry"\\}') +
        value('reelflow_bridge_forward_failures_total\\{kind="round"\\}'),
    };
    if (done(last)) return last;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return last;
}

it('acknowledges while Temporal is down and delivers once it is back', async () => {
  const port = await freePort();
  const dbFilename = join(dir, 'temporal.sqlite');
  const storeFile = join(dir, 'routes.sqlite');
  const rows = new DatabaseSync(storeFile, { readOnly: false });
  subscribedIn = async (_store, requestId) => {
    try {
      return rows.prepare('SELECT 1 FROM reelflow_routes WHERE request_id = ?').get(requestId) !== undefined;
    } catch {
      return false;
    }
  };
  let env: TestWorkflowEnvironment | undefined = await startDevServer({ port, dbFilename });
  let bridge: RunningBridge | undefined;
  try {
    const config = loadBridgeConfig({
      REELFLOW_WEBHOOK_SECRETS: SECRET,
      TEMPORAL_ADDRESS: `127.0.0.1:${port}`,
      REELFLOW_BRIDGE_PORT: '0',
      REELFLOW_BRIDGE_SIGNAL_TIMEOUT_MS: '2000',
      REELFLOW_ROUTE_STORE: `sqlite:${storeFile}`,
      REELFLOW_BRIDGE_METRICS_PORT: '0',
    });
    bridge = await startBridgeServer(config, { logger: pino({ level: 'silent' }) });
    expect(await readyStatus(bridge)).toBe(200);
    const metricsUrl = bridge.metricsUrl!;

    const event = makeEvent();
    const first = await makeWorker(env, bridge.store);
    const subscriberId = await first.runUntil(subscribe(env, bridge.store, event.request_id));

    await env.teardown();
    env = undefined;

    const whileDown = await deliver(bridge.url, event, [SECRET]);
    expect(whileDown.status).toBe(202);
    // Its metrics show what readiness does not: the acknowledged delivery waits, and forwarding fails.
    const down = await metricsUntil(metricsUrl, (m) => m.backlog >= 1 && m.failures > 0 && m.age > 0);
    expect(down).toMatchObject({ backlog: 1, age: expect.any(Number) });
    // The oldest undelivered event's age grows while Temporal stays down.
    const later = await metricsUntil(metricsUrl, (m) => m.age >= down.age + 1);
    expect(later.age).toBeGreaterThanOrEqual(down.age + 1);
    expect(later.backlog).toBe(1);

    env = await startDevServer({ port, dbFilename });
    const second = await makeWorker(env, bridge.store);
    const state = (await second.runUntil(env.client.workflow.getHandle(subscriberId).result())) as SubscriberState;
    expect(state.events.map((e) => e.event_id)).toEqual([event.event_id]);
    expect(state.handedOver ?? 0).toBe(0);
    expect(await metricsUntil(metricsUrl, (m) => m.backlog === 0 && m.age === 0)).toMatchObject({ backlog: 0, age: 0 });
  } finally {
    await bridge?.close();
    await env?.teardown();
    rows.close();
  }
});

it('answers 503 with Retry-After while the route store is down, and the retried delivery arrives', async () => {
  const postgres = await startTestPostgres();
  const env = await startDevServer();
  let bridge: RunningBridge | undefined;
  subscribedIn = async (store, requestId) => {
    // A subscribe of a throwaway workflow id would replace the row: ask the database through a claim-free count instead.
    void store;
    const { Client: PgClient } = await import('pg');
    const pg = new PgClient({ connectionString: postgres.url });
    try {
      await pg.connect();
      const found = await pg.query('SELECT 1 FROM reelflow_routes WHERE request_id = $1', [requestId]);
      return (found.rowCount ?? 0) > 0;
    } catch {
      return false;
    } finally {
      await pg.end().catch(() => undefined);
    }
  };
  try {
    const config = loadBridgeConfig({
      REELFLOW_WEBHOOK_SECRETS: SECRET,
      TEMPORAL_ADDRESS: env.address,
      REELFLOW_BRIDGE_PORT: '0',
      REELFLOW_ROUTE_STORE: postgres.url,
    });
    bridge = await startBridgeServer(config, { logger: pino({ level: 'silent' }) });
    const event = makeEvent();
    const worker = await makeWorker(env, bridge.store);
    await worker.runUntil(async () => {
      const subscriberId = await subscribe(env, bridge!.store, event.request_id);
      postgres.stop();
      const whileDown = await deliver(bridge!.url, event, [SECRET]);
      expect(whileDown.status).toBe(503);
      expect(whileDown.retryAfter).toBe('1');
      expect(JSON.parse(whileDown.text)).toMatchObject({ code: 'service_unavailable' });
      expect(await readyStatus(bridge!)).toBe(503);
      await postgres.start();
      // Like the service: retry the same event, freshly signed, until it is accepted (bounded).
      let status = 0;
      for (let attempt = 0; attempt < 120 && status !== 202; attempt += 1) {
        if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, 500));
        status = (await deliver(bridge!.url, event, [SECRET])).status;
        expect([202, 503]).toContain(status);
      }
      expect(status).toBe(202);
      const state = (await env.client.workflow.getHandle(subscriberId).result()) as SubscriberState;
      expect(state.events.map((e) => e.event_id)).toEqual([event.event_id]);
      expect(state.received).toBe(1);
    });
  } finally {
    await bridge?.close();
    await env.teardown();
    postgres.close();
  }
});
