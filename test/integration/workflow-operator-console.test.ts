import type { WorkflowBundleWithSourceMap } from '@temporalio/worker';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { WorkflowFailedError, WorkflowUpdateFailedError, type WorkflowHandle } from '@temporalio/client';
import { ApplicationFailure, defaultPayloadConverter } from '@temporalio/common';
import { threeStepPipeline } from '../../src/pipeline-spec';
import {
  SEARCH_ATTRIBUTES,
  SEARCH_ATTRIBUTE_KEYS,
  pipelineProgressQuery,
  pipelineWorkflowId,
} from '../../src/workflows/definitions';
import { cancelStepUpdate, raiseBudgetUpdate, retryStepUpdate } from '../../src/workflows/definitions';
import type { PipelineSummary, PipelineWorkflowInput } from '../../src/workflows/pipeline-types';
import { resolveAmbiguousUpdate } from '../../src/workflows/definitions';
import { pipelineStartOptions } from '../../src/pipeline-spec/ui-text';
import { PIXEL_PNG } from '../helpers/local-service';
import { startDevServer } from '../helpers/temporal';
import {
  bundleReelflowWorkflows,
  eventually,
  maybeRecordHistory,
  silentWavDataUri,
  startHarness,
  startTestBridge,
  type Harness,
  type TestBridge,
} from './workflow-harness';

/**
 * The operator console on a real dev server with the real local service: the static summary and
 * details, activity and timer summaries, the live current-details table, the saved views' search
 * attributes, and the updates with their validators (refusals with reasons, then a cancel of the
 * running step that stops its paid job).
 */

let bundle: WorkflowBundleWithSourceMap;
let env: TestWorkflowEnvironment;
let h: Harness;
let bridge: TestBridge;
const TASK_QUEUE = 'operator-console-test';

beforeAll(async () => {
  [bundle, env] = await Promise.all([
    bundleReelflowWorkflows(),
    startDevServer({ searchAttributes: SEARCH_ATTRIBUTE_KEYS }),
  ]);
  h = await startHarness(env, bundle, TASK_QUEUE, { concurrencyPerModel: 2 });
  bridge = await startTestBridge(h.service, env, TASK_QUEUE);
}, 120_000);

afterAll(async () => {
  await bridge?.stop();
  await h?.close();
  await env?.teardown();
});

async function refusal(promise: Promise<unknown>): Promise<string> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(WorkflowUpdateFailedError);
  return ((error as WorkflowUpdateFailedError).cause as Error).message;
}

/** The `__temporal_workflow_metadata` query the Temporal UI asks: the current details. */
async function currentDetails(handle: WorkflowHandle): Promise<string> {
  const metadata = (await handle.query('__temporal_workflow_metadata')) as { currentDetails?: string };
  return metadata.currentDetails ?? '';
}

/** Summaries of the activities and timers in the history, decoded. */
async function historySummaries(handle: WorkflowHandle): Promise<string[]> {
  const history = await handle.fetchHistory();
  return (history.events ?? []).flatMap((event) => {
    const payload = event.userMetadata?.summary;
    return payload ? [String(defaultPayloadConverter.fromPayload(payload as never))] : [];
  });
}

describe('operator console', () => {
  it('explains itself and takes validated updates; a cancel of the running step stops its job', async () => {
    // The re-voicing step runs 60 s at the service, so it is surely running when the cancel comes.
    h.service.service.setFaults({ modelDurationMs: { 'service-horizon-studio': 60_000 } });
    const spec = {
      ...threeStepPipeline({ imageUrls: [PIXEL_PNG], audioUrl: silentWavDataUri(), duration: '4' }, 'console-cancel', {
        allowedOrigins: [h.service.url],
      }),
      budgetCredits: 500,
    };
    const input: PipelineWorkflowInput = { spec, uriRules: { allowedOrigins: [h.service.url] } };
    const handle = await env.client.workflow.start('pipelineWorkflow', {
      taskQueue: TASK_QUEUE,
      workflowId: pipelineWorkflowId(spec.name),
      args: [input],
      ...pipelineStartOptions(spec),
    });

    const running = await eventually(async () => {
      const s = await handle.query(pipelineProgressQuery);
      return s.steps[1]?.status === 'running' && s.steps[1].requestIds.length === 1 ? s : undefined;
    }, 'the revoice step to run');
    const revoiceRequest = running.steps[1]?.requestIds[0] as string;

    // Static summary and details, set at start.
    const described = await handle.describe();
    expect(await described.staticSummary()).toBe('console-cancel: generate → revoice → upscale · budget 500 credits');
    expect(await described.staticDetails()).toContain('<inline image/png, 0.1 KiB>');

    // The live step table.
    const details = await currentDetails(handle);
    expect(details).toContain('| Step | State | Request id | Credits | Elapsed | Output |');
    expect(details).toMatch(
      /\| generate \| completed \| `[^`]+` \| 80 \| \d+\.\d s \| \[long-form-[^\]]+\.mp4\]\(http:\/\/127\.0\.0\.1:\d+\/files\//,
    );
    expect(details).toContain(`| revoice | running (waiting) | \`${revoiceRequest}\``);
    // The UI's Stack Trace tab (the `__stack_trace` query), with the sandbox's 4 frames a stack
    // (WORKFLOW_STACK_TRACE_LIMIT): still where the running step waits, and what called it.
    expect(await handle.query('__stack_trace')).toMatch(/at waitThenPoll [^\n]*\n\s+at waitForOutcome /);

    // Validators refuse with reasons; nothing is written to history for a refused update.
    expect(await refusal(handle.executeUpdate(cancelStepUpdate, { args: [{ step: 'generate' }] }))).toBe(
      'step: generate is completed; only a pending or running step can be cancelled (its output is already paid for and kept)',
    );
    expect(await refusal(handle.executeUpdate(raiseBudgetUpdate, { args: [{ credits: 50 }] }))).toBe(
      `credits: a budget of 50 is below the ${running.ledger.net} credits this pipeline has already spent`,
    );
    expect(await refusal(handle.executeUpdate(retryStepUpdate, { args: [{ step: 'revoice' }] }))).toMatch(
      /^step: revoice is running \(waiting\), not waiting to resubmit/,
    );
    expect(await refusal(handle.executeUpdate(cancelStepUpdate, { args: [{ step: 'nope' }] }))).toBe(
      'step: no step "nope" in pipeline console-cancel (steps: generate, revoice, upscale)',
    );
    // resolveAmbiguousStep, on a step whose submit was answered (not ambiguous).
    expect(
      await refusal(handle.executeUpdate(resolveAmbiguousUpdate, { args: [{ step: 'revoice', action: 'resubmit' }] })),
    ).toBe('step: no ambiguous step is waiting for a decision');

    // An accepted budget raise shows in the summary and the table's header line.
    expect(await handle.executeUpdate(raiseBudgetUpdate, { args: [{ credits: 900 }] })).toEqual({
      ok: true,
      message: `budget raised from 500 to 900 credits (${running.ledger.net} spent)`,
    });
    expect((await handle.query(pipelineProgressQuery)).budgetCredits).toBe(900);
    expect(await currentDetails(handle)).toMatch(/of budget 900/);

    // Cancel the running step: its job is cancelled at the service and refunded; no later step starts.
    const answer = await handle.executeUpdate(cancelStepUpdate, { args: [{ step: 'revoice', reason: 'wrong voice' }] });
    expect(answer.message).toMatch(/^cancelling step revoice/);
    const failure = await handle.result().then(
      () => null,
      (e: unknown) => e,
    );
    expect(failure).toBeInstanceOf(WorkflowFailedError);
    const cause = (failure as WorkflowFailedError).cause as ApplicationFailure;
    expect(cause.type).toBe('StepCancelled');
    expect(cause.message).toBe(
      'pipeline console-cancel: step revoice was cancelled by an operator (wrong voice); no later step was started',
    );
    const summary = cause.details?.[0] as PipelineSummary;
    expect(summary.status).toBe('cancelled');
    expect(summary.steps.map((s) => s.status)).toEqual(['completed', 'cancelled', 'skipped']);
    const job = h.service.service.jobs().find((j) => j.id === revoiceRequest);
    expect(job?.status).toBe('CANCELLED');
    expect(job?.creditsRefunded).toBe(job?.creditsCharged);
    expect(await currentDetails(handle)).toContain(`| revoice | cancelled | \`${revoiceRequest}\``);
    // The replay test's history of the patched path: budget raised, a running step cancelled by update.
    await maybeRecordHistory(handle, 'pipeline-operator-cancel-step');

    // Search attributes for the saved views.
    const attributes = (await handle.describe()).typedSearchAttributes;
    expect(attributes.get(SEARCH_ATTRIBUTES.pipeline)).toBe('console-cancel');
    expect(attributes.get(SEARCH_ATTRIBUTES.models)).toEqual([
      'service-video-cinema-long-form-from-references',
      'service-horizon-studio',
      'service-upscale-video-fast',
    ]);
    expect(attributes.get(SEARCH_ATTRIBUTES.overBudget)).toBe(false);
    expect(attributes.get(SEARCH_ATTRIBUTES.status)).toBe('cancelled');

    // Every activity and timer says what it is for.
    const summaries = await historySummaries(handle);
    expect(summaries).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^submit generate · service-video-cinema-long-form-from-references · key …\w{4}$/),
        expect.stringMatching(
          new RegExp(`^wait for the webhook of …${revoiceRequest.slice(-4)} \\(next poll in \\d+ s\\)$`),
        ),
        expect.stringMatching(new RegExp(`^cancel revoice at the service \\(…${revoiceRequest.slice(-4)}\\)$`)),
      ]),
    );
    h.service.service.setFaults({ modelDurationMs: 0 });
  });
});
