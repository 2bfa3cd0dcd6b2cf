import type { WorkflowBundleWithSourceMap } from '@temporalio/worker';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { startDevServer } from '../helpers/temporal';
import { LONG_FORM, PIXEL_PNG } from '../helpers/local-service';
import { SEARCH_ATTRIBUTE_KEYS } from '../../src/workflows/definitions';
import { INBOX_STATE } from '../../src/routing';
import { DatabaseSync } from 'node:sqlite';
import { testRouteStore, testRouteStoreFile } from '../helpers/route-store';
import {
  bundleReelflowWorkflows,
  eventually,
  startHarness,
  startTestBridge,
  type Harness,
  type TestBridge,
} from './workflow-harness';

/**
 * An account's webhook endpoint receives every job of the account, those of other clients included.
 * Twenty jobs submitted straight to the local service (not by reelflow), delivered by the service to
 * the real bridge: every delivery is acknowledged and kept as a row of the route store, and not one
 * workflow is left running.
 */

let bundle: WorkflowBundleWithSourceMap;
let env: TestWorkflowEnvironment;
let h: Harness;
let bridge: TestBridge;
const TASK_QUEUE = 'foreign-jobs-test';

beforeAll(async () => {
  [bundle, env] = await Promise.all([
    bundleReelflowWorkflows(),
    startDevServer({ searchAttributes: SEARCH_ATTRIBUTE_KEYS }),
  ]);
  h = await startHarness(env, bundle, TASK_QUEUE, { allowPrivateWebhooks: true });
  bridge = await startTestBridge(h.service, env, TASK_QUEUE);
}, 120_000);

afterAll(async () => {
  await bridge?.stop();
  await h?.close();
  await env?.teardown();
});

async function runningWorkflows(): Promise<string[]> {
  const ids: string[] = [];
  for await (const execution of env.client.workflow.list({ query: 'ExecutionStatus = "Running"' }))
    ids.push(`${execution.type} ${execution.workflowId}`);
  return ids;
}

it('0 workflows running after the deliveries of 20 jobs reelflow did not submit', async () => {
  const jobs = await Promise.all(
    Array.from({ length: 20 }, () => h.sideClient.submit(LONG_FORM, { image_urls: [PIXEL_PNG] })),
  );
  const ids = new Set(jobs.map((job) => job.request_id));
  // The service delivered each job's completion to the bridge, which acknowledged it.
  await eventually(
    () => [...ids].every((id) => bridge.deliveredFor(id)),
    'the service to deliver the 20 completions',
    120_000,
  );
  // Each is a row of the route store, parked once no subscriber came for it (kept until its TTL).
  const store = testRouteStore(TASK_QUEUE);
  await eventually(async () => (await store.pendingCount()) === 0, 'the forwarder to park the 20 deliveries');
  const rows = new DatabaseSync(testRouteStoreFile(TASK_QUEUE));
  try {
    const parked = rows
      .prepare(`SELECT request_id FROM reelflow_inbox WHERE state = ?`)
      .all(INBOX_STATE.parked)
      .map((row) => String(row.request_id));
    expect(new Set(parked)).toEqual(ids);
  } finally {
    rows.close();
  }
  expect(h.calls.submit).toBe(0);
  expect(await runningWorkflows()).toEqual([]);
  // Asked again a little later: the visibility store is eventually consistent.
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  expect(await runningWorkflows()).toEqual([]);
});
