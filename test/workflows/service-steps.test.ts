import * as path from 'node:path';
import { WorkflowFailedError, type WorkflowHandle } from '@temporalio/client';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import { eventually } from '../integration/workflow-harness';
import type { SubmitRequest } from '../../src/activities';
import type { ServiceStepResult } from '../../src/workflows/public';
import { scriptedService, useScriptedWorker, type Script } from './scripted-service';

/**
 * reelflow's step functions (generateVideo, upscale: src/workflows/service-steps.ts) called from a
 * team's own workflow module on the time-skipping server: a real worker bundles the module; only the
 * activities are scripted (they stand for the paid service).
 */

const TASK_QUEUE = 'service-steps';
const IMAGE = 'https://media.test/reference.png';
const WORKFLOWS = path.join(__dirname, 'service-steps.workflows.ts');

const service = scriptedService();
const scripted = useScriptedWorker(TASK_QUEUE, service, async () => ({ workflowsPath: WORKFLOWS }));

function start(type: string, workflowId: string, script: Script): Promise<WorkflowHandle> {
  service.script(workflowId, script);
  return scripted.env.client.workflow.start(type, { taskQueue: TASK_QUEUE, workflowId, args: [IMAGE] });
}

async function failureOf(handle: WorkflowHandle): Promise<unknown> {
  const error = await handle.result().then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(WorkflowFailedError);
  return (error as WorkflowFailedError).cause;
}

const submitsOf = (workflowId: string) =>
  service.calls(workflowId, 'submitAndSubscribe').map((call) => call.args[0] as SubmitRequest);

describe('step functions in a team workflow (time-skipping server, scripted service)', () => {
  it("chains generateVideo into upscale by the result's videos[0].url; two calls of one model are two jobs", async () => {
    const handle = await start('twoClipsThenUpscale', 'team/chain', { quote: 70 });
    const [first, second, big] = (await handle.result()) as ServiceStepResult[];
    const submits = submitsOf('team/chain');
    expect(submits.map((s) => s.model)).toEqual([
      'service-video-cinema-long-form-from-references',
      'service-video-cinema-long-form-from-references',
      'service-upscale-video-fast',
    ]);
    // Each call its own Idempotency-Key: the second clip is not the first one returned again.
    expect(new Set(submits.map((s) => s.idempotencyKey)).size).toBe(3);
    expect(first?.request_id).not.toBe(second?.request_id);
    expect(submits[2]?.input).toEqual({ video_url: first?.videos[0]?.url });
    expect(big).toMatchObject({
      status: 'COMPLETED',
      model: 'service-upscale-video-fast',
      requestId: big?.request_id,
      credits: { charged: 70, refunded: 0 },
      outcome: 'completed',
    });
    expect(big?.videos[0]?.url).toMatch(/^https:\/\/service\.test\/files\/.+\.mp4$/);
  });

  it("fails with JobFailed and the service's own reason when the job fails", async () => {
    const handle = await start('oneClip', 'team/failed', { job: () => ({ runSeconds: 30, ends: 'FAILED' }) });
    const failure = await failureOf(handle);
    expect(failure).toBeInstanceOf(ApplicationFailure);
    expect((failure as ApplicationFailure).type).toBe('JobFailed');
    expect((failure as ApplicationFailure).message).toMatch(/generation_failed: the model gave up/);
  });

  it('fails with JobCancelled when someone else cancelled the job at the service: no result to return', async () => {
    const handle = await start('oneClip', 'team/cancelled-elsewhere', {
      job: () => ({ runSeconds: 30, ends: 'CANCELLED' }),
    });
    const failure = await failureOf(handle);
    expect(failure).toBeInstanceOf(ApplicationFailure);
    expect((failure as ApplicationFailure).type).toBe('JobCancelled');
    expect((failure as ApplicationFailure).message).toMatch(/cancelled at the service by someone else \(refunded\)/);
    expect(service.calls('team/cancelled-elsewhere', 'cancelJob')).toEqual([]);
  });

  it("cancels the job at the service when the team's workflow is cancelled, and ends cancelled", async () => {
    const handle = await start('oneClip', 'team/cancelled', { job: () => ({ runSeconds: 600 }) });
    await eventually(() => submitsOf('team/cancelled').length === 1, 'the submit');
    await handle.cancel();
    const failure = await failureOf(handle);
    expect(failure).toBeInstanceOf(CancelledFailure);
    const cancels = service.calls('team/cancelled', 'cancelJob');
    expect(cancels.length).toBeGreaterThan(0);
    expect(cancels[0]?.args[0]).toBe('team-cancelled-1');
  });
});
