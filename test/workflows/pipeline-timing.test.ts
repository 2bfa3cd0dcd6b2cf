import { WorkflowFailedError, type WorkflowHandle } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { bundleReelflowWorkflows, eventually } from '../integration/workflow-harness';
import type { PipelineSpec } from '../../src/pipeline-spec';
import type { PipelineSummary, PipelineWorkflowInput } from '../../src/workflows/pipeline-types';
import { completedEvent, scriptedService, useScriptedWorker, type Script, type ServiceCall } from './scripted-service';
import { jobOutput } from '../helpers/step-summary';

/**
 * The pipeline's timing rules on the time-skipping server: a real worker runs the real workflow
 * bundle; only the activities are scripted (they stand for the paid service). Timers are skipped,
 * never waited for, so a 24 h deadline takes a second. Every figure is read from the calls the
 * pipeline made to the service and the workflow time they were scheduled at.
 *
 * Messages are addressed by their public names (`pipelineWorkflow`, `jobEvent`, `resolveAmbiguousStep`,
 * `pipelineProgress`), which running executions and senders outside the code share.
 */

const TASK_QUEUE = 'pipeline-timing';
const LONG_FORM = 'service-video-cinema-long-form-from-references';
const UPSCALE = 'service-upscale-video-fast';
const INPUT = { image_urls: ['https://media.test/reference.png'] };

const service = scriptedService();
const scripted = useScriptedWorker(TASK_QUEUE, service, async () => ({
  workflowBundle: await bundleReelflowWorkflows(),
}));

type Step = PipelineSpec['steps'][number];

/** Starts pipeline `name` with `steps` against `script`; search attributes off (the test server has none of reelflow's). */
async function start(
  name: string,
  steps: Step[],
  script: Script,
  extra: Partial<PipelineSpec> = {},
): Promise<WorkflowHandle> {
  const workflowId = `pipeline/${name}`;
  service.script(workflowId, script);
  const input: PipelineWorkflowInput = {
    spec: { name, steps, ...extra },
    publishSearchAttributes: false,
  };
  return scripted.env.client.workflow.start('pipelineWorkflow', { taskQueue: TASK_QUEUE, workflowId, args: [input] });
}

const step = (id: string, more: Partial<Step> = {}): Step => ({ id, model: LONG_FORM, input: INPUT, ...more });

/** The failure a pipeline ended with (its ApplicationFailure). */
async function failureOf(handle: WorkflowHandle): Promise<ApplicationFailure> {
  const error = await handle.result().then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(WorkflowFailedError);
  const cause = (error as WorkflowFailedError).cause;
  expect(cause).toBeInstanceOf(ApplicationFailure);
  return cause as ApplicationFailure;
}

/** Whole seconds from `from` to each call (workflow time; the worker's own latency is under a second). */
const secondsAfter = (from: ServiceCall, calls: ServiceCall[]) =>
  calls.map((call) => Math.floor((call.atMs - from.atMs) / 1000));

const keyOf = (call: ServiceCall) => (call.args[0] as { idempotencyKey: string }).idempotencyKey;

describe('pipeline timing (time-skipping server, scripted service)', () => {
  it('paces fallback polls over a 10-minute job with no webhook: early check at 5 s, then 180, 480, 780 s', async () => {
    const handle = await start('paced', [step('render')], { job: () => ({ runSeconds: 600 }) });
    const summary = (await handle.result()) as PipelineSummary;
    const id = handle.workflowId;
    const [submit] = service.calls(id, 'submitAndSubscribe');
    const polls = service.calls(id, 'pollJobStatus');
    // Long-form expects 180 s: the first paced poll comes at 180 s, the next delays double from there
    // but are capped at 300 s. The poll at 480 s still finds the job running; the one at 780 s finds it COMPLETED.
    expect(secondsAfter(submit as ServiceCall, polls)).toEqual([5, 180, 480, 780]);
    expect(service.calls(id, 'fetchJobResult')).toHaveLength(1);
    expect(service.calls(id, 'submitAndSubscribe')).toHaveLength(1);
    expect(summary.status).toBe('completed');
    expect(summary.steps[0]).toMatchObject({ status: 'completed', polls: 4, attempts: 1 });
  });

  it('paces from the model: an upscale step (60 s expected) polls at 5, 60, 180, 420 s until its 400 s job ends', async () => {
    const handle = await start(
      'paced-upscale',
      [step('upscale', { model: UPSCALE, input: { video_url: 'https://media.test/v.mp4' } })],
      {
        job: () => ({ runSeconds: 400 }),
      },
    );
    await handle.result();
    const [submit] = service.calls(handle.workflowId, 'submitAndSubscribe');
    expect(secondsAfter(submit as ServiceCall, service.calls(handle.workflowId, 'pollJobStatus'))).toEqual([
      5, 60, 180, 420,
    ]);
  });

  it('stops polling once the webhook reports the outcome: no paced poll, no result fetch', async () => {
    const handle = await start('webhook-first', [step('render')], { job: () => ({ runSeconds: 100 }) });
    await eventually(() => service.calls(handle.workflowId, 'submitAndSubscribe').length === 1, 'the submit');
    // Workflow time moves only while the test waits: skip to the job's end, then deliver its event
    // as the bridge does (signal `jobEvent`).
    await scripted.env.sleep('100 seconds');
    const [submit] = service.calls(handle.workflowId, 'submitAndSubscribe');
    const requestId = `pipeline-webhook-first-1`;
    expect(submit).toBeDefined();
    await handle.signal('jobEvent', completedEvent(requestId, LONG_FORM, 80));
    const summary = (await handle.result()) as PipelineSummary;
    // Only the early status check (5 s) ran before the event; the 180 s poll never came.
    expect(secondsAfter(submit as ServiceCall, service.calls(handle.workflowId, 'pollJobStatus'))).toEqual([5]);
    expect(service.calls(handle.workflowId, 'fetchJobResult')).toEqual([]);
    expect(jobOutput(summary.outputs.render)?.request_id).toBe(requestId);
  });

  it("archives each output once the next step's submit was answered, never before it, and all before the close", async () => {
    const chained = (id: string, previous: string): Step => ({
      id,
      model: UPSCALE,
      input: { video_url: { $from: previous } },
    });
    const handle = await start(
      'archive-after-submit',
      [step('render'), chained('upscale', 'render'), chained('again', 'upscale')],
      { job: () => ({ runSeconds: 3 }) },
      { archive: 'on-expiry-risk' },
    );
    const summary = (await handle.result()) as PipelineSummary;
    const order = service
      .calls(handle.workflowId)
      .filter((call) => call.activity === 'submitAndSubscribe' || call.activity === 'archiveOutputs')
      .map((call) =>
        call.activity === 'archiveOutputs' ? `archive ${(call.args[0] as { step: string }).step}` : 'submit',
      );
    expect(order).toEqual(['submit', 'submit', 'archive render', 'submit', 'archive upscale', 'archive again']);
    expect(summary.status).toBe('completed');
  });

  it('learns by polling that the job was cancelled at the service, and fails with StepCancelled', async () => {
    const handle = await start('cancelled-elsewhere', [step('render'), step('after')], {
      job: () => ({ runSeconds: 100, ends: 'CANCELLED' }),
    });
    const failure = await failureOf(handle);
    expect(failure.type).toBe('StepCancelled');
    expect(failure.message).toMatch(/step render was cancelled outside the pipeline/);
    const [submit] = service.calls(handle.workflowId, 'submitAndSubscribe');
    expect(secondsAfter(submit as ServiceCall, service.calls(handle.workflowId, 'pollJobStatus'))).toEqual([5, 180]);
    // Nothing of the next step, and nothing to cancel: the service already did.
    expect(service.calls(handle.workflowId, 'submitAndSubscribe')).toHaveLength(1);
    expect(service.calls(handle.workflowId, 'cancelJob')).toEqual([]);
  });

  it('fails the step with JobFailed after one FAILED job when its policy allows no resubmit', async () => {
    const handle = await start('failed-once', [step('render')], { job: () => ({ ends: 'FAILED' }) });
    const failure = await failureOf(handle);
    expect(failure.type).toBe('StepFailed');
    expect(failure.message).toMatch(/\[JobFailed\]/);
    expect(failure.message).toMatch(/failed 1 time\(s\); policy allows 0 resubmit\(s\); every attempt was refunded/);
    expect(failure.message).toMatch(/generation_failed: the model gave up/);
    expect(service.calls(handle.workflowId, 'submitAndSubscribe')).toHaveLength(1);
  });

  it('resubmits a FAILED job after 2, 4, 8 s of backoff, each time with a fresh Idempotency-Key, up to its policy', async () => {
    const handle = await start('backoff', [step('render', { retry: { maxResubmits: 3 } })], {
      job: () => ({ ends: 'FAILED' }),
    });
    const failure = await failureOf(handle);
    expect(failure.message).toMatch(/failed 4 time\(s\); policy allows 3 resubmit\(s\)/);
    const id = handle.workflowId;
    const submits = service.calls(id, 'submitAndSubscribe');
    const polls = service.calls(id, 'pollJobStatus');
    expect(submits).toHaveLength(4);
    // Each job fails at once; the early status check (5 s) finds it FAILED, then the backoff runs.
    expect(polls.map((poll, i) => Math.floor((poll.atMs - (submits[i] as ServiceCall).atMs) / 1000))).toEqual([
      5, 5, 5, 5,
    ]);
    const backoffs = submits.slice(1).map((next, i) => Math.floor((next.atMs - (polls[i] as ServiceCall).atMs) / 1000));
    expect(backoffs).toEqual([2, 4, 8]);
    const keys = submits.map(keyOf);
    expect(new Set(keys).size).toBe(4);
    expect(keys.map((key) => key.slice(-2))).toEqual([':1', ':2', ':3', ':4']);
  });

  it('completes on a resubmit once a job succeeds, with no further backoff', async () => {
    const handle = await start('backoff-then-ok', [step('render', { retry: { maxResubmits: 3 } })], {
      job: (n) => (n === 1 ? { ends: 'FAILED' } : { runSeconds: 3 }),
    });
    const summary = (await handle.result()) as PipelineSummary;
    expect(service.calls(handle.workflowId, 'submitAndSubscribe')).toHaveLength(2);
    expect(summary.steps[0]).toMatchObject({ status: 'completed', attempts: 2 });
  });

  describe('budget', () => {
    it('refuses a step whose quote exceeds the budget before anything is submitted', async () => {
      const handle = await start('over-budget', [step('render')], { quote: 80 }, { budgetCredits: 50 });
      const failure = await failureOf(handle);
      expect(failure.type).toBe('BudgetExceeded');
      expect(failure.message).toMatch(/quote of 80 credits exceeds the remaining budget of 50; nothing was submitted/);
      expect(service.calls(handle.workflowId, 'quoteJob')).toHaveLength(1);
      expect(service.calls(handle.workflowId, 'submitAndSubscribe')).toEqual([]);
    });

    it('counts what earlier steps spent: the second step is refused against the remainder', async () => {
      const handle = await start(
        'budget-spent',
        [step('first'), step('second')],
        { quote: 60 },
        { budgetCredits: 100 },
      );
      const failure = await failureOf(handle);
      expect(failure.type).toBe('BudgetExceeded');
      expect(failure.message).toMatch(/before step second: .*quote of 60 credits exceeds the remaining budget of 40/);
      const calls = service.calls(handle.workflowId).map((call) => call.activity);
      // The first step ran whole; the second was quoted and stopped there.
      expect(calls.filter((name) => name === 'submitAndSubscribe')).toHaveLength(1);
      expect(calls[calls.length - 1]).toBe('quoteJob');
    });

    it('lets a refunded FAILED attempt be resubmitted: the budget is net of refunds', async () => {
      const handle = await start(
        'budget-refunded',
        [step('render', { retry: { maxResubmits: 1 } })],
        { quote: 80, job: (n) => (n === 1 ? { ends: 'FAILED' } : {}) },
        { budgetCredits: 100 },
      );
      const summary = (await handle.result()) as PipelineSummary;
      expect(service.calls(handle.workflowId, 'submitAndSubscribe')).toHaveLength(2);
      // One quote per step, however many attempts.
      expect(service.calls(handle.workflowId, 'quoteJob')).toHaveLength(1);
      expect(summary.ledger).toEqual({ quoted: 80, charged: 160, refunded: 80, net: 80 });
    });
  });

  describe('ambiguous submit', () => {
    it('waits 24 h for an operator decision, then fails with AmbiguousSubmission naming the key', async () => {
      const handle = await start('ambiguous-deadline', [step('render')], { ambiguous: () => true });
      const failure = await failureOf(handle);
      expect(failure.message).toMatch(/\[AmbiguousSubmission\]/);
      expect(failure.message).toMatch(/no decision within 24 h/);
      const [submit] = service.calls(handle.workflowId, 'submitAndSubscribe');
      expect(failure.message).toContain(keyOf(submit as ServiceCall));
      const closed = (await handle.describe()).closeTime as Date;
      // The deadline counts from the failed submit; the worker's own latency is far under a minute.
      expect(Math.floor((closed.getTime() - (submit as ServiceCall).atMs) / 60_000)).toBe(24 * 60);
      // Never resubmitted on its own.
      expect(service.calls(handle.workflowId, 'submitAndSubscribe')).toHaveLength(1);
    });

    it('is still waiting after 23 h, and resubmits with the same key when the operator says so', async () => {
      const handle = await start('ambiguous-resolved', [step('render')], { ambiguous: (n) => n === 1 });
      // The step waits for a decision once the candidate orphans were listed.
      await eventually(() => service.calls(handle.workflowId, 'candidateOrphans').length === 1, 'the step waiting');
      await scripted.env.sleep('23 hours');
      expect((await handle.describe()).status.name).toBe('RUNNING');
      expect(service.calls(handle.workflowId, 'submitAndSubscribe')).toHaveLength(1);
      await handle.executeUpdate('resolveAmbiguousStep', { args: [{ step: 'render', action: 'resubmit' }] });
      const summary = (await handle.result()) as PipelineSummary;
      const submits = service.calls(handle.workflowId, 'submitAndSubscribe');
      expect(submits).toHaveLength(2);
      expect(keyOf(submits[1] as ServiceCall)).toBe(keyOf(submits[0] as ServiceCall));
      expect(Math.floor(((submits[1] as ServiceCall).atMs - (submits[0] as ServiceCall).atMs) / 3_600_000)).toBe(23);
      expect(summary.status).toBe('completed');
    });

    it('takes its deadline from the pipeline input when set (ambiguousDeadlineHours)', async () => {
      const workflowId = 'pipeline/ambiguous-short';
      service.script(workflowId, { ambiguous: () => true });
      const input: PipelineWorkflowInput = {
        spec: { name: 'ambiguous-short', steps: [step('render')] },
        publishSearchAttributes: false,
        ambiguousDeadlineHours: 2,
      };
      const handle = await scripted.env.client.workflow.start('pipelineWorkflow', {
        taskQueue: TASK_QUEUE,
        workflowId,
        args: [input],
      });
      const failure = await failureOf(handle);
      expect(failure.message).toMatch(/no decision within 2 h/);
      const [submit] = service.calls(workflowId, 'submitAndSubscribe');
      const closed = (await handle.describe()).closeTime as Date;
      expect(Math.floor((closed.getTime() - (submit as ServiceCall).atMs) / 60_000)).toBe(2 * 60);
    });
  });
});
