import type { WorkflowBundleWithSourceMap } from '@temporalio/worker';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { WorkflowFailedError, WorkflowUpdateFailedError, type WorkflowHandle } from '@temporalio/client';
import { createServiceClient } from '../../src/client/service-client';
import type { IdempotencySetting } from '../../src/client/submit-policy';
import { findOrphans, listPipelineClaims } from '../../src/cli/lib/orphans';
import { pipeline } from '../../src/pipeline-spec';
import { createReelflowWorker } from '../../src/workers/worker';
import { SEARCH_ATTRIBUTE_KEYS, pipelineProgressQuery, pipelineWorkflowId } from '../../src/workflows/definitions';
import type { PipelineSummary } from '../../src/workflows/pipeline-types';
import { resolveAmbiguousUpdate } from '../../src/workflows/definitions';
import { startAnswerProxy, type AnswerProxy } from '../helpers/answer-proxy';
import { LONG_FORM, PIXEL_PNG, TEST_API_KEY, startTestService, type TestService } from '../helpers/local-service';
import { startDevServer } from '../helpers/temporal';
import { bundleReelflowWorkflows, eventually, maybeRecordHistory } from './workflow-harness';

/**
 * No paid work lost, against real parts: a Temporal dev server, the local service over loopback HTTP, real
 * workers. No bridge: outcomes come by (fast-paced) polls, so a rewritten poll answer matters.
 * Where the service must misbehave in ways it does not (a 401 on a poll, a 202 that breaks the
 * contract), a real HTTP proxy in front of it rewrites the answer after the service handled the call.
 */

let bundle: WorkflowBundleWithSourceMap;
let env: TestWorkflowEnvironment;
let svc: TestService;
const PACING = { firstPollSeconds: 0.5, factor: 1.5, capSeconds: 1 };
const input = { image_urls: [PIXEL_PNG], duration: '4' as const, resolution: '480p' as const };

beforeAll(async () => {
  [bundle, env, svc] = await Promise.all([
    bundleReelflowWorkflows(),
    startDevServer({ searchAttributes: SEARCH_ATTRIBUTE_KEYS }),
    startTestService({ credits: 1_000_000 }),
  ]);
}, 120_000);

afterAll(async () => {
  await svc?.close();
  await env?.teardown();
});

afterEach(() => {
  svc.service.setFaults({ dropSubmitResponseRate: 0, failureRate: 0, modelDurationMs: 0 });
});

/** Runs `fn` with a worker on its own task queue whose client talks to `baseUrl` under `idempotency`. */
async function withWorker<T>(
  queue: string,
  baseUrl: string,
  idempotency: IdempotencySetting,
  fn: () => Promise<T>,
): Promise<T> {
  const fast = { maxAttempts: 2, initialDelayMs: 50, maxDelayMs: 200, jitter: 0 };
  const client = createServiceClient({ baseUrl, apiKey: TEST_API_KEY, idempotency, retry: fast, submitRetry: fast });
  const worker = await createReelflowWorker({
    connection: env.nativeConnection,
    client: env.client,
    taskQueue: queue,
    service: client,
    workflowBundle: bundle,
  });
  try {
    return await worker.runUntil(fn);
  } finally {
    await client.close();
  }
}

function start(
  queue: string,
  spec: ReturnType<ReturnType<typeof pipeline>['build']>,
  extra: Record<string, unknown> = {},
): Promise<WorkflowHandle> {
  return env.client.workflow.start('pipelineWorkflow', {
    taskQueue: queue,
    workflowId: pipelineWorkflowId(spec.name),
    args: [{ spec, defaultPacing: PACING, submitTimeoutSeconds: 10, ...extra }],
  });
}

/** The pipeline's failure (it must fail) with the summary it carries. */
async function failureOf(handle: WorkflowHandle): Promise<{ message: string; summary: PipelineSummary }> {
  const error = await handle.result().then(
    () => undefined,
    (e: unknown) => e,
  );
  await maybeRecordHistory(handle, `recovery-${handle.workflowId.replace(/^pipeline\//, '')}`);
  expect(error).toBeInstanceOf(WorkflowFailedError);
  const cause = (error as WorkflowFailedError).cause as { message: string; details?: unknown[] };
  return {
    message: cause.message,
    summary: (cause.details?.[0] as PipelineSummary) ?? (await handle.query(pipelineProgressQuery)),
  };
}

const jobsWithKey = (fragment: string) => svc.service.jobs().filter((j) => j.idempotencyKey?.includes(fragment));

describe('unknown idempotency: an ambiguous step waits for an operator decision', () => {
  it('shows the key and candidates, rejects bad decisions, and adopts the job the key created', async () => {
    const queue = 'recovery-adopt';
    await withWorker(queue, svc.url, 'unknown', async () => {
      svc.service.setFaults({ dropSubmitResponseRate: 1 });
      const spec = pipeline('ambiguous-adopt').step('generate', LONG_FORM, input).build();
      const handle = await start(queue, spec);
      const waiting = await eventually(async () => {
        const p = await handle.query(pipelineProgressQuery);
        return p.recovery?.ambiguous[0]?.state === 'waiting' && p.recovery.ambiguous[0].candidates !== undefined
          ? p
          : undefined;
      }, 'the step to wait for a decision');
      svc.service.setFaults({ dropSubmitResponseRate: 0 });
      const record = waiting.recovery!.ambiguous[0]!;
      const jobs = jobsWithKey('ambiguous-adopt/job/generate');
      expect(jobs).toHaveLength(1);
      // Nothing was sent twice: one submit, one job.
      expect(record.candidates).toContain(jobs[0]!.id);
      expect(waiting.steps[0]).toMatchObject({ phase: 'ambiguous' });
      expect(waiting.steps[0]!.error).toContain(record.idempotencyKey);

      // The validator refuses what cannot be applied; nothing changes.
      for (const bad of [
        { step: 'nope', action: 'adopt' as const, requestId: jobs[0]!.id },
        { step: 'generate', action: 'adopt' as const },
        { step: 'generate', action: 'explode' as unknown as 'adopt' },
      ]) {
        await expect(handle.executeUpdate(resolveAmbiguousUpdate, { args: [bad] })).rejects.toBeInstanceOf(
          WorkflowUpdateFailedError,
        );
      }
      const found = await svc.call(
        'GET',
        `/v1/queue/requests?idempotency_key=${encodeURIComponent(record.idempotencyKey)}`,
      );
      const requestId = String(found.body.requests[0].request_id);
      const answer = await handle.executeUpdate(resolveAmbiguousUpdate, {
        args: [{ step: 'generate', action: 'adopt', requestId, note: 'found by key' }],
      });
      expect(answer).toMatchObject({ step: 'generate', action: 'adopt', requestId });
      const summary = (await handle.result()) as PipelineSummary;
      await maybeRecordHistory(handle, 'recovery-ambiguous-adopt');
      expect(summary.status).toBe('completed');
      expect(summary.steps[0]!.requestIds).toEqual([requestId]);
      expect(summary.recovery?.ambiguous[0]).toMatchObject({ state: 'adopted', requestId });
      expect(summary.ledger.net).toBe(80);
      expect(jobsWithKey('ambiguous-adopt/job/generate')).toHaveLength(1);
    });
  });

  it('give-up fails the step; reelflow orphans lists the job by its key', async () => {
    const queue = 'recovery-give-up';
    await withWorker(queue, svc.url, 'unknown', async () => {
      svc.service.setFaults({ dropSubmitResponseRate: 1 });
      const spec = pipeline('ambiguous-give-up').step('generate', LONG_FORM, input).build();
      const handle = await start(queue, spec);
      await eventually(
        async () => (await handle.query(pipelineProgressQuery)).recovery?.ambiguous[0]?.state === 'waiting',
        'the step to wait',
      );
      svc.service.setFaults({ dropSubmitResponseRate: 0 });
      await handle.executeUpdate(resolveAmbiguousUpdate, { args: [{ step: 'generate', action: 'give-up' }] });
      const { message, summary } = await failureOf(handle);
      expect(message).toMatch(/AmbiguousSubmission.*gave up/);
      expect(summary.recovery?.ambiguous[0]?.state).toBe('given-up');
      const job = jobsWithKey('ambiguous-give-up/job/generate')[0]!;
      const since = new Date(Date.now() - 3_600_000);
      const orphans = createServiceClient({ baseUrl: svc.url, apiKey: TEST_API_KEY });
      const report = await findOrphans(
        orphans,
        await eventually(async () => {
          const claims = await listPipelineClaims(env.client, since);
          return claims.some((c) => c.workflowId === handle.workflowId && c.ambiguous.length > 0) ? claims : undefined;
        }, 'the pipeline in visibility'),
        since,
      ).finally(() => orphans.close());
      expect(report.orphans.find((o) => o.request_id === job.id)).toMatchObject({
        idempotency_key: job.idempotencyKey,
      });
      expect(report.ambiguous).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ workflow_id: handle.workflowId, state: 'given-up', request_id: job.id }),
        ]),
      );
    });
  });
});

describe('never abandon an accepted job', () => {
  let proxy: AnswerProxy;
  beforeEach(async () => {
    proxy = await startAnswerProxy(svc.url);
  });
  afterEach(async () => {
    await proxy.close();
  });

  it('a poll answered 401 mid-wait cancels the job through its cancel_url and records it', async () => {
    const queue = 'recovery-poll-401';
    svc.service.setFaults({ modelDurationMs: 30_000 });
    proxy.rewrite = ({ method, path }) =>
      method === 'GET' && path.endsWith('/status')
        ? {
            status: 401,
            body: {
              type: 'about:blank',
              title: 'Unauthorized',
              status: 401,
              code: 'unauthorized',
              detail: 'key revoked',
            },
          }
        : undefined;
    await withWorker(queue, proxy.url, 'honoured', async () => {
      const spec = pipeline('poll-401').step('generate', LONG_FORM, input).build();
      const { message, summary } = await failureOf(await start(queue, spec));
      expect(message).toContain('unauthorized');
      const job = jobsWithKey('poll-401/job/generate')[0]!;
      expect(job.status).toBe('CANCELLED');
      expect(proxy.seen).toContain(`POST /v1/queue/requests/${job.id}/cancel`);
      expect(summary.steps[0]!.requestIds).toEqual([job.id]);
      expect(summary.steps[0]!.attemptLog?.[0]?.error).toMatch(/cancelled at the service \(CANCELLED\)/);
      expect(summary.ledger).toMatchObject({ charged: 80, refunded: 80, net: 0 });
      expect(summary.recovery?.abandoned ?? []).toEqual([]);
    });
  });

  it('when the cancel is refused too, the job is recorded as abandoned with its request id', async () => {
    const queue = 'recovery-abandon';
    svc.service.setFaults({ modelDurationMs: 2_000 });
    const unauthorized = {
      status: 401,
      body: { type: 'about:blank', title: 'Unauthorized', status: 401, code: 'unauthorized' },
    };
    proxy.rewrite = ({ method, path }) =>
      (method === 'GET' && path.endsWith('/status')) || path.endsWith('/cancel') ? unauthorized : undefined;
    await withWorker(queue, proxy.url, 'honoured', async () => {
      const spec = pipeline('abandon-401').step('generate', LONG_FORM, input).build();
      const { summary } = await failureOf(await start(queue, spec));
      const job = jobsWithKey('abandon-401/job/generate')[0]!;
      expect(summary.recovery?.abandoned).toEqual([
        expect.objectContaining({ step: 'generate', requestId: job.id, idempotencyKey: job.idempotencyKey }),
      ]);
      expect(summary.recovery?.abandoned[0]?.reason).toMatch(/cancelling it failed too/);
      // Billed and shown: the ledger keeps its charge.
      expect(summary.ledger.net).toBe(80);
    });
  });

  it('a 202 that breaks the contract is cancelled by what could be read of it and reported', async () => {
    const queue = 'recovery-bad-202';
    svc.service.setFaults({ modelDurationMs: 30_000 });
    proxy.rewrite = ({ method, path, status, body }) => {
      if (method !== 'POST' || !path.startsWith('/v1/queue/service-') || status !== 202) return undefined;
      const { status_url: _s, response_url: _r, ...rest } = body as Record<string, unknown>;
      return { status: 202, body: rest };
    };
    await withWorker(queue, proxy.url, 'honoured', async () => {
      const spec = pipeline('bad-202').step('generate', LONG_FORM, input).build();
      const { message, summary } = await failureOf(await start(queue, spec));
      const job = jobsWithKey('bad-202/job/generate')[0]!;
      expect(message).toMatch(/SubmitAnswerInvalid/);
      expect(message).toContain(job.id);
      expect(message).toContain('status_url');
      expect(job.status).toBe('CANCELLED');
      expect(summary.steps[0]!.requestIds).toEqual([job.id]);
      expect(summary.ledger.net).toBe(0);
    });
  });

  it('a 202 without a readable request id is recorded as abandoned by its key, and orphans lists the job', async () => {
    const queue = 'recovery-bad-202-no-id';
    proxy.rewrite = ({ method, path, status }) =>
      method === 'POST' && path.startsWith('/v1/queue/service-') && status === 202
        ? { status: 202, body: { accepted: true } }
        : undefined;
    await withWorker(queue, proxy.url, 'honoured', async () => {
      const spec = pipeline('bad-202-no-id').step('generate', LONG_FORM, input).build();
      const { summary } = await failureOf(await start(queue, spec));
      const job = jobsWithKey('bad-202-no-id/job/generate')[0]!;
      expect(summary.recovery?.abandoned).toEqual([
        expect.objectContaining({ step: 'generate', idempotencyKey: job.idempotencyKey }),
      ]);
      expect(summary.recovery?.abandoned[0]?.requestId).toBeUndefined();
      // Its charge is in the ledger under a request id no pipeline claims: reelflow orphans lists it.
      const since = new Date(Date.now() - 3_600_000);
      const orphans = createServiceClient({ baseUrl: svc.url, apiKey: TEST_API_KEY });
      try {
        const report = await findOrphans(orphans, await listPipelineClaims(env.client, since), since);
        expect(report.orphans.map((o) => o.request_id)).toContain(job.id);
      } finally {
        await orphans.close();
      }
    });
  });
});

describe('a cancel that arrives before the submit', () => {
  it('never submits', async () => {
    const queue = 'recovery-cancel-first';
    const before = svc.service.counters();
    const spec = pipeline('cancel-first').step('generate', LONG_FORM, input).build();
    // Started and cancelled while no worker polls its queue: the first activation carries both.
    const handle = await start(queue, spec);
    await handle.cancel();
    await withWorker(queue, svc.url, 'honoured', async () => {
      await handle.result().catch(() => undefined);
      await maybeRecordHistory(handle, 'recovery-cancel-before-submit');
    });
    expect((await handle.describe()).status.name).toBe('CANCELLED');
    expect(svc.service.counters().submits).toBe(before.submits);
    expect(jobsWithKey('cancel-first/')).toHaveLength(0);
  });
});
