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
import { routeWorkflowId } from '../../src/workflows/definitions';
import { deliver, makeEvent, quietBundlerLogger, testSubscriberActivities } from './bridge-fixtures';
import type { SubscriberState } from './bridge.workflows';
import { freePort } from '../../src/stack/stack-state';

/**
 * Temporal goes away under a running bridge and comes back: deliveries get 503 (so the service retries)
 * while it is down, and the retried delivery reaches the workflow once it is back. The dev server is
 * restarted on the same fixed port with the same SQLite file, so the subscribed workflow survives.
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

const makeWorker = (env: TestWorkflowEnvironment) =>
  Worker.create({
    connection: env.nativeConnection,
    taskQueue: TASK_QUEUE,
    workflowBundle: bundle,
    activities: testSubscriberActivities(env.client, TASK_QUEUE),
  });

async function readyStatus(bridge: RunningBridge): Promise<number> {
  const response = await request(bridge.url.replace(/\/webhooks$/, '/readyz'));
  await response.body.dump();
  return response.statusCode;
}

it('answers 503 while Temporal is down and delivers the retried event once it is back', async () => {
  const port = await freePort();
  const dbFilename = join(dir, 'temporal.sqlite');
  let env: TestWorkflowEnvironment | undefined = await startDevServer({ port, dbFilename });
  let bridge: RunningBridge | undefined;
  try {
    const config = loadBridgeConfig({
      REELFLOW_WEBHOOK_SECRETS: SECRET,
      TEMPORAL_ADDRESS: `127.0.0.1:${port}`,
      REELFLOW_BRIDGE_PORT: '0',
      REELFLOW_BRIDGE_TASK_QUEUE: TASK_QUEUE,
      REELFLOW_BRIDGE_SIGNAL_TIMEOUT_MS: '2000',
      REELFLOW_RENDEZVOUS_GRACE_SECONDS: '1',
    });
    bridge = await startBridgeServer(config, { logger: pino({ level: 'silent' }) });
    expect(await readyStatus(bridge)).toBe(200);

    // The pipeline (its stand-in) subscribes before the outage: its route names it.
    const event = makeEvent();
    const subscriberId = `subscriber/${randomUUID()}`;
    const first = await makeWorker(env);
    await first.runUntil(async () => {
      await env!.client.workflow.start('testSubscriberWorkflow', {
        taskQueue: TASK_QUEUE,
        workflowId: subscriberId,
        args: [[event.request_id], { subscribe: true }],
      });
      const route = env!.client.workflow.getHandle(routeWorkflowId(event.request_id));
      for (;;) {
        const description = await route.describe().catch(() => undefined);
        if (description?.memo?.subscriber === subscriberId && description.status.name === 'COMPLETED') break;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    });

    await env.teardown();
    env = undefined;

    const whileDown = await deliver(bridge.url, event, [SECRET]);
    expect(whileDown.status).toBe(503);
    expect(JSON.parse(whileDown.text)).toMatchObject({ code: 'service_unavailable' });
    expect(await readyStatus(bridge)).toBe(503);

    env = await startDevServer({ port, dbFilename });
    // Like the service: retry the same event, freshly signed, until it is accepted (bounded).
    let status = 0;
    for (let attempt = 0; attempt < 120 && status !== 202; attempt += 1) {
      if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, 500));
      status = (await deliver(bridge.url, event, [SECRET])).status;
      expect([202, 503]).toContain(status);
    }
    expect(status).toBe(202);
    expect(await readyStatus(bridge)).toBe(200);

    const second = await makeWorker(env);
    const state = (await second.runUntil(env.client.workflow.getHandle(subscriberId).result())) as SubscriberState;
    expect(state.events.map((e) => e.event_id)).toEqual([event.event_id]);
    // Straight to the subscriber: the 503 answers left nothing behind, the 202 signalled it once.
    expect(state.received).toBe(1);
    expect(state.handedOver ?? 0).toBe(0);
  } finally {
    await bridge?.close();
    await env?.teardown();
  }
});
