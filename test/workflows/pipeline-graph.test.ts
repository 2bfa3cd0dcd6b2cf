import { jobOutput } from '../helpers/step-summary';
import { WorkflowFailedError, type WorkflowHandle } from '@temporalio/client';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import { bundleReelflowWorkflows, eventually } from '../integration/workflow-harness';
import type { SubmitRequest } from '../../src/activities';
import { carriedStepsOf } from '../../src/cli/lib/resume';
import type { PipelineSpec } from '../../src/pipeline-spec';
import type { PipelineSummary, PipelineWorkflowInput, ResumeFrom } from '../../src/workflows/pipeline-types';
import { completedEvent, scriptedService, useScriptedWorker, type Script, type ServiceCall } from './scripted-service';

/**
 * Version-2 specs (the graph) on the time-skipping server: the real workflow bundle and worker, the
 * paid service scripted per key (`<pipeline>/job/<step>[/<item>]`), every figure read from the calls
 * the pipeline made to the service and the workflow time they were scheduled at.
 */

const TASK_QUEUE = 'pipeline-graph';
const LONG_FORM = 'service-video-cinema-long-form-from-references';
const UPSCALE = 'service-upscale-video-fast';
const IMAGE = { image_urls: ['https://media.test/reference.png'] };

const service = scriptedService();
const scripted = useScriptedWorker(TASK_QUEUE, service, async () => ({
  workflowBundle: await bundleReelflowWorkflows(),
}));

type Step = PipelineSpec['steps'][number];

async function start(
  name: string,
  steps: Step[],
  script: Script,
  extra: Partial<PipelineWorkflowInput> & { budgetCredits?: number } = {},
): Promise<WorkflowHandle> {
  const workflowId = `pipeline/${name}`;
  service.script(workflowId, script);
  const { budgetCredits, ...more } = extra;
  const input: PipelineWorkflowInput = {
    spec: { version: 2, name, steps, ...(budgetCredits ? { budgetCredits } : {}) },
    publishSearchAttributes: false,
    ...more,
  };
  return scripted.env.client.workflow.start('pipelineWorkflow', { taskQueue: TASK_QUEUE, workflowId, args: [input] });
}

/** Pacing under which a job waits an hour before its first poll: a cancel never meets a poll in flight. */
const QUIET = { pacing: { earlyCheckSeconds: 0, firstPollSeconds: 3_600 } };
const scene = (id: string, more: Partial<Step> = {}): Step => ({ id, model: LONG_FORM, input: IMAGE, ...more });
const upscale = (id: string, from: string, more: Partial<Step> = {}): Step => ({
  id,
  model: UPSCALE,
  input: { video_url: { $from: from } },
  ...more,
});

/** The step (and item) a submit was for, from its Idempotency-Key `reelflow:<pipeline>/job/<step>[/<item>]:<run>:<n>`. */
const unitOf = (request: SubmitRequest) => request.idempotencyKey.split(':')[1]?.split('/job/')[1] ?? '';
const submitsOf = (id: string) => service.calls(id, 'submitAndSubscribe');
const unitsOf = (calls: ServiceCall[]) => calls.map((call) => unitOf(call.args[0] as SubmitRequest)).sort();

async function failureOf(handle: WorkflowHandle): Promise<unknown> {
  const error = await handle.result().then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(WorkflowFailedError);
  return (error as WorkflowFailedError).cause;
}

/** History events of a closed execution, and how many of them start another execution (a child workflow). */
async function eventsOf(handle: WorkflowHandle): Promise<{ events: number; children: number }> {
  const events = (await handle.fetchHistory()).events ?? [];
  const children = events.filter((event) => event.startChildWorkflowExecutionInitiatedEventAttributes).length;
  return { events: events.length, children };
}

describe('history footprint of a graph (one execution)', () => {
  it('a ten-node graph is one execution; a 100-item fan-out stays under 5,000 events', async () => {
    // Ten nodes: five independent scenes, each upscaled.
    const scenes = [0, 1, 2, 3, 4].map((i) => scene(`scene-${i}`));
    const ten = await start('footprint-ten', [...scenes, ...scenes.map((s) => upscale(`up-${s.id}`, s.id))], {});
    await ten.result();
    const tenEvents = await eventsOf(ten);
    const fanOut = await start(
      'footprint-fan-out',
      [
        scene('scenes', {
          input: { image_urls: [{ $item: 'image' }] },
          each: Array.from({ length: 100 }, (_, i) => ({ image: `https://media.test/${i}.png` })),
        }),
      ],
      {},
    );
    await fanOut.result();
    const fanOutEvents = await eventsOf(fanOut);
    // One execution each: nothing started beside the pipeline.
    expect([tenEvents.children, fanOutEvents.children]).toEqual([0, 0]);
    expect(submitsOf(ten.workflowId)).toHaveLength(10);
    expect(submitsOf(fanOut.workflowId)).toHaveLength(100);
    expect(fanOutEvents.events).toBeLessThan(5_000);
    if (process.env.REELFLOW_PRINT_FOOTPRINT)
      process.stdout.write(
        `graph footprint: ten nodes ${tenEvents.events} events (${(tenEvents.events / 10).toFixed(1)} a node); ` +
          `100-item fan-out ${fanOutEvents.events} events (${(fanOutEvents.events / 100).toFixed(1)} an item)\n`,
      );
  });
});

describe('pipeline graph (version 2, time-skipping server, scripted service)', () => {
  it('runs the two middle steps of a diamond at once: their jobs overlap at the service', async () => {
    const handle = await start(
      'diamond',
      [
        scene('join', { input: { image_urls: [{ $from: 'left' }, { $from: 'right' }] } }),
        upscale('left', 'source'),
        upscale('right', 'source'),
        scene('source'),
      ],
      { job: () => ({ runSeconds: 100 }) },
    );
    const summary = (await handle.result()) as PipelineSummary;
    const submits = submitsOf(handle.workflowId);
    const at = Object.fromEntries(submits.map((call) => [unitOf(call.args[0] as SubmitRequest), call.atMs]));
    expect(Object.keys(at).sort()).toEqual(['join', 'left', 'right', 'source']);
    // Both middle jobs were submitted before either could end (each runs 100 s), after the source ended.
    expect(Math.abs((at.left as number) - (at.right as number))).toBeLessThan(100_000);
    expect(at.left as number).toBeGreaterThanOrEqual((at.source as number) + 100_000);
    expect(at.join as number).toBeGreaterThanOrEqual(Math.max(at.left as number, at.right as number) + 100_000);
    expect(summary.status).toBe('completed');
    expect(summary.version).toBe(2);
    const join = summary.steps.find((s) => s.id === 'join');
    expect(join?.dependsOn).toEqual(['left', 'right']);
    expect(join?.input?.image_urls).toEqual([
      jobOutput(summary.outputs.left)?.videos[0]?.url,
      jobOutput(summary.outputs.right)?.videos[0]?.url,
    ]);
  });

  it('keeps the successes of a fan-out with onFailure: continue, records the failed item, and reads [*]', async () => {
    const handle = await start(
      'variants',
      [
        scene('variants', {
          input: { image_urls: [{ $item: 'image' }] },
          each: [0, 1, 2].map((i) => ({ image: `https://media.test/shot-${i}.png` })),
          onFailure: 'continue',
        }),
        scene('pick', { input: { image_urls: { $from: 'variants', path: '[*].videos[0].url' } } as never }),
      ],
      { job: (_n, request) => ({ runSeconds: 30, ends: unitOf(request) === 'variants/1' ? 'FAILED' : 'COMPLETED' }) },
    );
    const summary = (await handle.result()) as PipelineSummary;
    const submits = submitsOf(handle.workflowId);
    expect(unitsOf(submits)).toEqual(['pick', 'variants/0', 'variants/1', 'variants/2']);
    const itemInputs = submits.filter((c) => unitOf(c.args[0] as SubmitRequest).startsWith('variants/'));
    expect(itemInputs.map((c) => (c.args[0] as SubmitRequest).input.image_urls).sort()).toEqual(
      [0, 1, 2].map((i) => [`https://media.test/shot-${i}.png`]),
    );
    const variants = summary.steps[0];
    expect(variants?.status).toBe('completed');
    expect(variants?.items?.map((item) => item.status)).toEqual(['completed', 'failed', 'completed']);
    expect(variants?.items?.[1]?.error).toMatch(/step variants\[1\] .*the service said generation_failed/);
    expect(variants?.error).toBe('item(s) 1 failed; kept the others');
    const urls = summary.itemOutputs?.variants?.map((output) => jobOutput(output)?.videos[0]?.url);
    expect(urls).toHaveLength(2);
    expect(summary.steps[1]?.input?.image_urls).toEqual(urls);
    expect(summary.ledger.refunded).toBe(80);
  });

  it('fails a fan-out at its first failed item (onFailure: fail): the running siblings are cancelled at the service', async () => {
    // The failure comes by webhook while the siblings wait (no poll in flight: none is due for an hour).
    const handle = await start(
      'fail-fast',
      [
        scene('scenes', {
          input: { image_urls: [{ $item: 'image' }] },
          each: [0, 1, 2].map((i) => ({ image: `https://media.test/${i}.png` })),
          ...QUIET,
        }),
        upscale('up', 'scenes', { input: { video_url: { $from: 'scenes', path: '[0].videos[0].url' } } }),
      ],
      { job: () => ({ runSeconds: 10_000 }) },
    );
    await eventually(() => submitsOf(handle.workflowId).length === 3, 'three items submitted');
    const byUnit = Object.fromEntries(
      submitsOf(handle.workflowId).map((call, n) => [
        unitOf(call.args[0] as SubmitRequest),
        `pipeline-fail-fast-${n + 1}`,
      ]),
    );
    const failedId = byUnit['scenes/1'] as string;
    const completed = completedEvent(failedId, LONG_FORM, 0);
    await handle.signal('jobEvent', {
      ...completed,
      event_type: 'generation.failed',
      status: 'ERROR',
      error: { code: 'generation_failed', message: 'the model gave up' },
      data: { ...completed.data, status: 'FAILED', videos: [], output_count: 0 },
    });
    const failure = (await failureOf(handle)) as ApplicationFailure;
    expect(failure.type).toBe('StepFailed');
    expect(failure.message).toMatch(/failed at step scenes \[JobFailed\]: step scenes\[1\]/);
    const cancelled = service.calls(handle.workflowId, 'cancelJob').map((call) => call.args[0]);
    expect([...cancelled].sort()).toEqual([byUnit['scenes/0'], byUnit['scenes/2']].sort());
    const summary: PipelineSummary = await handle.query('pipelineProgress');
    expect(summary.steps[0]?.items?.map((item) => item.status)).toEqual(['cancelled', 'failed', 'cancelled']);
    expect(summary.steps[1]?.status).toBe('skipped');
    expect(summary.ledger).toMatchObject({ charged: 240, refunded: 240, net: 0 });
  });

  it('resumes a graph that failed after its fan-out without paying for any item twice', async () => {
    const steps = [
      scene('scenes', {
        input: { image_urls: [{ $item: 'image' }] },
        each: [
          { image: 'https://media.test/1.png' },
          { image: 'https://media.test/2.png' },
          { image: 'https://media.test/3.png' },
        ],
      }),
      scene('cut', { input: { image_urls: { $from: 'scenes', path: '[*].videos[0].url' } } as never }),
    ];
    const first = await start('resume-graph', steps, {
      job: (_n, request) => ({ ends: unitOf(request) === 'cut' ? 'FAILED' : 'COMPLETED' }),
    });
    await failureOf(first);
    const earlierSummary: PipelineSummary = await first.query('pipelineProgress');
    const { runId } = await first.describe();
    const earlierInput = { spec: { version: 2 as const, name: 'resume-graph', steps } };
    const carried = carriedStepsOf({ runId, input: earlierInput, summary: earlierSummary });
    expect(Object.keys(carried.scenes?.items ?? {})).toEqual(['0', '1', '2']);
    expect(carried.cut).toBeUndefined();
    const before = submitsOf(first.workflowId).length;
    const resume: ResumeFrom = { workflowId: first.workflowId, runId, ledger: earlierSummary.ledger, steps: carried };
    const second = await start('resume-graph', steps, { job: () => ({}) }, { resume });
    const summary = (await second.result()) as PipelineSummary;
    const paidAgain = submitsOf(first.workflowId).slice(before);
    expect(unitsOf(paidAgain)).toEqual(['cut']);
    expect(summary.steps[0]?.items?.map((item) => item.carriedFrom)).toEqual([runId, runId, runId]);
    expect(summary.steps[1]?.input?.image_urls).toEqual(
      earlierSummary.itemOutputs?.scenes?.map((o) => jobOutput(o)?.videos[0]?.url),
    );
  });

  it('refuses a graph whose jobs would pass its budget before its first submit, with the figures', async () => {
    const handle = await start(
      'over-budget-graph',
      [
        scene('scenes', {
          input: { image_urls: [{ $item: 'image' }] },
          each: [1, 2, 3].map((i) => ({ image: `https://media.test/${i}.png` })),
        }),
        upscale('up', 'scenes', { input: { video_url: { $from: 'scenes', path: '[0].videos[0].url' } } }),
      ],
      { quote: 80 },
      { budgetCredits: 300 },
    );
    const failure = (await failureOf(handle)) as ApplicationFailure;
    expect(failure).toBeInstanceOf(ApplicationFailure);
    expect(failure.type).toBe('BudgetExceeded');
    expect(failure.message).toBe(
      "pipeline over-budget-graph: the graph's jobs still to start would cost 320 credits (scenes 3 × 80, up 80), over the remaining budget of 300 (budget 300, 0 spent); nothing was submitted",
    );
    expect(submitsOf(handle.workflowId)).toEqual([]);
  });
  // Last: a cancelled pipeline leaves the time-skipping server moving at real time for the tests after it.
  it('cancels every running branch at the service when the pipeline is cancelled, each refunded', async () => {
    const handle = await start(
      'three-branches',
      [scene('a', QUIET), scene('b', QUIET), scene('c', QUIET), upscale('after', 'a')],
      {
        job: () => ({ runSeconds: 1_000 }),
      },
    );
    await eventually(() => submitsOf(handle.workflowId).length === 3, 'three branches submitted');
    const running: PipelineSummary = await handle.query('pipelineProgress');
    expect(running.steps.map((s) => [s.id, s.status, s.waitingFor])).toEqual([
      ['a', 'running', 'job'],
      ['b', 'running', 'job'],
      ['c', 'running', 'job'],
      ['after', 'pending', 'dependencies'],
    ]);
    await handle.cancel();
    expect(await failureOf(handle)).toBeInstanceOf(CancelledFailure);
    const cancels = service.calls(handle.workflowId, 'cancelJob').map((call) => call.args[0]);
    // The scripted service numbers its request ids by submit: the three branches are 1, 2 and 3.
    expect([...cancels].sort()).toEqual([1, 2, 3].map((n) => `pipeline-three-branches-${n}`));
    const summary: PipelineSummary = await handle.query('pipelineProgress');
    expect(summary.status).toBe('cancelled');
    expect(summary.steps.map((s) => s.status)).toEqual(['cancelled', 'cancelled', 'cancelled', 'skipped']);
    expect(summary.ledger).toMatchObject({ charged: 240, refunded: 240, net: 0 });
  });

  it("reaches every running branch with an operator's cancelPipeline: each job cancelled at the service", async () => {
    const handle = await start(
      'operator-cancel',
      [scene('a', QUIET), scene('b', QUIET), scene('c', { after: ['a'] })],
      {
        job: () => ({ runSeconds: 1_000 }),
      },
    );
    await eventually(() => submitsOf(handle.workflowId).length === 2, 'two branches submitted');
    await handle.executeUpdate('cancelPipeline', { args: [{ reason: 'wrong brief' }] });
    const failure = (await failureOf(handle)) as ApplicationFailure;
    expect(failure.type).toBe('StepCancelled');
    expect(failure.message).toMatch(/cancelled by an operator \(wrong brief\)/);
    const cancels = service.calls(handle.workflowId, 'cancelJob').map((call) => call.args[0]);
    expect([...cancels].sort()).toEqual(['pipeline-operator-cancel-1', 'pipeline-operator-cancel-2']);
    const summary: PipelineSummary = await handle.query('pipelineProgress');
    expect(summary.steps.map((s) => s.status)).toEqual(['cancelled', 'cancelled', 'skipped']);
    expect(summary.ledger.net).toBe(0);
  });
});
