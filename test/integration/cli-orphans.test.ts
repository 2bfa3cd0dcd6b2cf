import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { SEARCH_ATTRIBUTES, SEARCH_ATTRIBUTE_KEYS, WORKFLOW_TYPES } from '../../src/workflows/definitions';
import { RECOVERY_MEMO_KEY, type RecoveryMemo } from '../../src/workflows/recovery-types';
import type { OrphanReport } from '../../src/cli/lib/orphans';
import { startDevServer } from '../helpers/temporal';
import {
  LONG_FORM,
  PIXEL_PNG,
  TEST_API_KEY,
  startTestService,
  waitForStatus,
  waitUntil,
  type TestService,
} from '../helpers/local-service';
import { startAnswerProxy } from '../helpers/answer-proxy';
import { jsonOf, runCli } from './cli-process';

/**
 * `reelflow orphans` as an operator runs it: a child process against a real Temporal dev server
 * (pipelines' request ids from visibility: search attribute and memo) and the real local service
 * (its account ledger). The pipelines here are started with no worker: they stay running with the
 * search attributes and memo a real pipeline publishes, which is all the command reads.
 */

let env: TestWorkflowEnvironment;
let svc: TestService;
let cliEnv: Record<string, string>;
const TASK_QUEUE = 'cli-orphans-no-worker';
const input = { image_urls: [PIXEL_PNG], duration: '4', resolution: '480p' };

async function submit(key: string): Promise<string> {
  const response = await svc.call('POST', `/v1/queue/${LONG_FORM}`, {
    body: input,
    headers: { 'idempotency-key': key },
  });
  expect(response.status).toBe(202);
  return String(response.body.request_id);
}

beforeAll(async () => {
  [env, svc] = await Promise.all([
    startDevServer({ searchAttributes: SEARCH_ATTRIBUTE_KEYS }),
    startTestService({ credits: 10_000 }),
  ]);
  svc.service.setFaults({ modelDurationMs: 0 });
  cliEnv = { TEMPORAL_ADDRESS: env.address, REELFLOW_SERVICE_URL: svc.url, REELFLOW_API_KEY: TEST_API_KEY };
}, 120_000);

afterAll(async () => {
  await env?.teardown();
  await svc?.close();
});

test('lists charged jobs no pipeline claims, abandoned jobs and unresolved ambiguous keys, with state, credits and outputs', async () => {
  const claimed = await submit('orphans:claimed');
  const memoClaimed = await submit('orphans:memo-claimed');
  const abandoned = await submit('orphans:abandoned');
  const unclaimed = await submit('orphans:unclaimed');
  // The ambiguous submit: the job exists and is billed, the answer never came back.
  svc.service.setFaults({ dropSubmitResponseRate: 1 });
  await expect(
    svc.call('POST', `/v1/queue/${LONG_FORM}`, { body: input, headers: { 'idempotency-key': 'orphans:ambiguous' } }),
  ).rejects.toThrow();
  svc.service.setFaults({ dropSubmitResponseRate: 0 });
  await waitUntil(() => svc.service.jobs().some((j) => j.idempotencyKey === 'orphans:ambiguous'));
  const ambiguousJob = svc.service.jobs().find((j) => j.idempotencyKey === 'orphans:ambiguous')!.id;
  for (const id of [claimed, unclaimed]) await waitForStatus(svc.url, id, (s) => s === 'COMPLETED');

  const recovery: RecoveryMemo = {
    abandoned: [
      {
        step: 'upscale',
        requestId: abandoned,
        idempotencyKey: 'orphans:abandoned',
        reason: 'poll answered 401; cancel refused',
        at: new Date().toISOString(),
      },
    ],
    ambiguous: [
      { step: 'generate', idempotencyKey: 'orphans:ambiguous', since: new Date().toISOString(), state: 'waiting' },
    ],
  };
  await env.client.workflow.start(WORKFLOW_TYPES.pipeline, {
    taskQueue: TASK_QUEUE,
    workflowId: 'pipeline/orphans-a',
    args: [],
    typedSearchAttributes: [{ key: SEARCH_ATTRIBUTES.requestIds, value: [claimed, abandoned] }],
    memo: { [RECOVERY_MEMO_KEY]: recovery },
  });
  // A namespace without reelflow's search attributes: the memo summary names the request ids.
  await env.client.workflow.start(WORKFLOW_TYPES.pipeline, {
    taskQueue: TASK_QUEUE,
    workflowId: 'pipeline/orphans-b',
    args: [],
    memo: { summary: { steps: [{ id: 'generate', requestIds: [memoClaimed] }] } },
  });
  await waitUntil(
    async () => {
      let n = 0;
      for await (const execution of env.client.workflow.list({ query: `WorkflowType = '${WORKFLOW_TYPES.pipeline}'` }))
        if (execution.workflowId.startsWith('pipeline/orphans-')) n += 1;
      return n === 2;
    },
    30_000,
    'both pipelines in visibility',
  );

  const result = await runCli(['orphans', '--since', '1h', '--json'], cliEnv);
  expect(result.code).toBe(1);
  const report = jsonOf<OrphanReport>(result);
  expect(report.pipelines_checked).toBe(2);
  expect(report.charged_jobs).toBe(5);
  expect(report.claimed_jobs).toBe(2);
  const byId = new Map(report.orphans.map((o) => [o.request_id, o]));
  expect([...byId.keys()].sort()).toEqual([abandoned, unclaimed, ambiguousJob].sort());
  const unclaimedRow = byId.get(unclaimed)!;
  expect(unclaimedRow).toMatchObject({ state: 'COMPLETED', credits_charged: 80, credits_refunded: 0, credits_net: 80 });
  expect(unclaimedRow.outputs).toHaveLength(1);
  expect(unclaimedRow.outputs[0]).toMatch(new RegExp(`^${svc.url}/files/${unclaimed}/`));
  expect(byId.get(abandoned)?.abandoned_by).toEqual({
    workflow_id: 'pipeline/orphans-a',
    step: 'upscale',
    reason: 'poll answered 401; cancel refused',
  });
  expect(byId.get(ambiguousJob)?.idempotency_key).toBe('orphans:ambiguous');
  expect(report.orphaned_credits).toBe(3 * 80);
  expect(report.ambiguous).toEqual([
    expect.objectContaining({
      workflow_id: 'pipeline/orphans-a',
      step: 'generate',
      idempotency_key: 'orphans:ambiguous',
      state: 'waiting',
      request_id: ambiguousJob,
    }),
  ]);

  const text = await runCli(['orphans'], cliEnv);
  expect(text.code).toBe(1);
  expect(text.stdout).toContain(`orphans since`);
  expect(text.stdout).toContain(unclaimed);
  expect(text.stdout).toContain('abandoned by pipeline/orphans-a step upscale');
  expect(text.stdout).toContain('Idempotency-Key orphans:ambiguous');
  expect(text.stdout).not.toContain(TEST_API_KEY);
}, 120_000);

test('a bad --since is a usage error naming the flag', async () => {
  const result = await runCli(['orphans', '--since', 'yesterday'], cliEnv);
  expect(result.code).toBe(2);
  expect(result.stderr).toContain('--since');
});

test('against a service without the ledger (a local-service extension): what the pipelines recorded, what it means and what to do instead; exit 5, no stack trace', async () => {
  // The outside service: the local service's API without its extensions (ledger, lookup by key).
  const outside = await startAnswerProxy(svc.url);
  outside.rewrite = ({ path }) =>
    path.startsWith('/v1/account/ledger') || path.startsWith('/v1/queue/requests?')
      ? { status: 404, body: { type: 'about:blank', title: 'Not Found', status: 404, code: 'not_found' } }
      : undefined;
  try {
    const env = { ...cliEnv, REELFLOW_SERVICE_URL: outside.url };
    const text = await runCli(['orphans', '--since', '1h'], env);
    expect(text.code).toBe(5);
    expect(text.stdout).toMatch(/jobs \d+ pipeline\(s\) abandoned since .*: 1 \(no ledger: credits unknown/);
    expect(text.stdout).toContain('abandoned by pipeline/orphans-a step upscale');
    expect(text.stderr).toContain(`the service at ${outside.url} has no account ledger`);
    expect(text.stderr).toContain("extension of reelflow's local service");
    expect(text.stderr).toContain('temporal workflow list --query "ReelflowRequestIds = \'<request id>\'"');
    expect(text.stderr).not.toMatch(/\n\s+at /);

    const json = await runCli(['orphans', '--since', '1h', '--json'], env);
    expect(json.code).toBe(5);
    const report = jsonOf<OrphanReport>(json);
    expect(report).toMatchObject({ ledger_available: false, charged_jobs: 0 });
    expect(report.orphans.map((o) => o.abandoned_by?.step)).toEqual(['upscale']);
    expect(outside.seen).toContain('GET /v1/account/ledger');
  } finally {
    await outside.close();
  }
}, 60_000);
