import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Pool } from 'undici';
import { Worker, bundleWorkflowCode } from '@temporalio/worker';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { startDevServer } from '../helpers/temporal';
import { createRouteSubscriber, openSqliteRouteStore, type RouteStore } from '../../src/routing';
import { makeEvent, quietBundlerLogger, signFor, testSubscriberActivities } from './bridge-fixtures';
import { stopSignal, subscriberStateQuery } from './bridge.workflows';

/**
 * A bridge process killed with SIGKILL in the middle of a burst loses no delivery it acknowledged:
 * every 202 was committed to the route store first, and the bridge started again on the same store
 * forwards what the killed one had not signalled yet.
 */

const ENTRY = join(__dirname, '..', '..', 'src', 'workers', 'bridge.ts');
const SECRET = 'whsec_kill_0123456789';
const TASK_QUEUE = `bridge-kill-${randomUUID()}`;
const N = 600;

let env: TestWorkflowEnvironment;
let store: RouteStore;
let storeFile: string;

beforeAll(async () => {
  env = await startDevServer();
  storeFile = join(mkdtempSync(join(tmpdir(), 'bridge-kill-')), 'routes.sqlite');
  store = openSqliteRouteStore(storeFile);
});

afterAll(async () => {
  await store?.close();
  await env?.teardown();
});

/** Starts `src/workers/bridge.ts` as its own process on the shared store; resolves with its webhook URL. */
async function startBridgeProcess(): Promise<{ child: ChildProcessWithoutNullStreams; url: string }> {
  const child = spawn(process.execPath, ['-r', 'tsx/cjs', ENTRY], {
    env: {
      ...process.env,
      REELFLOW_WEBHOOK_SECRETS: SECRET,
      TEMPORAL_ADDRESS: env.address,
      REELFLOW_BRIDGE_PORT: '0',
      REELFLOW_ROUTE_STORE: `sqlite:${storeFile}`,
      REELFLOW_LOG_LEVEL: 'warn',
    },
  });
  let out = '';
  let err = '';
  child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const match = /reelflow bridge listening on (http:\/\/\S+)/.exec(out);
      if (match?.[1]) resolve(match[1]);
    });
    child.once('exit', (code) => reject(new Error(`bridge exited (${code}): ${err}`)));
  });
  return { child, url };
}

it('a bridge killed with -9 during a burst loses 0 acknowledged deliveries', async () => {
  const bundle = await bundleWorkflowCode({
    workflowsPath: require.resolve('./bridge.workflows'),
    logger: quietBundlerLogger(),
  });
  const worker = await Worker.create({
    connection: env.nativeConnection,
    taskQueue: TASK_QUEUE,
    workflowBundle: bundle,
    activities: testSubscriberActivities(store),
  });
  await worker.runUntil(async () => {
    // One stand-in pipeline waiting for N jobs, subscribed in the store before the burst.
    const requestIds = Array.from({ length: N }, () => `req-${randomUUID()}`);
    const subscriber = await env.client.workflow.start('testSubscriberWorkflow', {
      taskQueue: TASK_QUEUE,
      workflowId: `subscriber/${randomUUID()}`,
      args: [requestIds, { subscribe: false, stayOpen: true }],
    });
    const subscribe = createRouteSubscriber(store);
    for (const id of requestIds) await subscribe.subscribe(id, subscriber.workflowId);

    const first = await startBridgeProcess();
    const acknowledged = new Set<string>();
    let answered = 0;
    const origin = new URL(first.url);
    const pool = new Pool(origin.origin, { connections: 16 });
    let killed = false;
    const exited = new Promise<void>((resolve) => first.child.once('exit', () => resolve()));
    const events = requestIds.map((id) => makeEvent({ request_id: id }));
    let next = 0;
    await Promise.all(
      Array.from({ length: 16 }, async () => {
        while (next < events.length) {
          const event = events[next++]!;
          const body = JSON.stringify(event);
          try {
            const response = await pool.request({
              path: origin.pathname,
              method: 'POST',
              body,
              headers: signFor(body, { id: event.event_id, secrets: [SECRET] }),
            });
            await response.body.dump();
            if (response.statusCode === 202) acknowledged.add(event.event_id);
          } catch {
            // Refused or reset: the bridge is gone; the service would retry this one later.
          }
          answered += 1;
          // Mid-burst: a third of the way in, the process is killed without any chance to clean up.
          if (!killed && answered >= N / 3) {
            killed = true;
            first.child.kill('SIGKILL');
          }
        }
      }),
    );
    await exited;
    await pool.close().catch(() => undefined);
    expect(killed).toBe(true);
    expect(acknowledged.size).toBeGreaterThan(0);
    expect(acknowledged.size).toBeLessThan(N);

    // A new bridge on the same store: its forwarder takes over what the killed one left.
    const second = await startBridgeProcess();
    try {
      let seen = new Set<string>();
      for (let i = 0; i < 600; i += 1) {
        const state = await subscriber.query(subscriberStateQuery);
        seen = new Set(state.events.map((e) => e.event_id));
        if ([...acknowledged].every((id) => seen.has(id))) break;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      const lost = [...acknowledged].filter((id) => !seen.has(id));
      console.log(
        `bridge killed with -9 after ${answered} answers: ${acknowledged.size} acknowledged, ${lost.length} lost`,
      );
      expect({ acknowledged: acknowledged.size, lost: lost.length }).toEqual({
        acknowledged: acknowledged.size,
        lost: 0,
      });
    } finally {
      second.child.kill('SIGTERM');
      await new Promise((resolve) => second.child.once('exit', resolve));
    }
    await subscriber.signal(stopSignal);
    await subscriber.terminate().catch(() => undefined);
  });
});
