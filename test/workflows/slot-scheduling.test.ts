import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Priority } from '@temporalio/common';
import { bundleReelflowWorkflows, eventually, startTestBatch } from '../integration/workflow-harness';
import type { SubmitAnswer, SubmitRequest } from '../../src/activities';
import { createBatchActivities } from '../../src/activities/batch';
import { batchFairnessKey } from '../../src/contract/workflow-names';
import { createFileStore } from '../../src/media/store';
import type { PipelineSpec } from '../../src/pipeline-spec';
import { slotGrantedSignal } from '../../src/workflows/definitions';
import type { BatchProgress } from '../../src/workflows/batch-types';
import type { PipelineSummary, PipelineWorkflowInput } from '../../src/workflows/pipeline-types';
import { scriptedService, useScriptedWorker, type ScriptedService } from './scripted-service';

/**
 * The account's slots as the workflows see them, on the time-skipping server (real workflow bundle
 * and worker, scripted service, batches in a real file media store): the priority and fairness key a
 * batch's items start with (what Temporal's task queues and the slot waiter rows order them by), and
 * what a graph's step reads while its submit waits for a slot.
 */

const TASK_QUEUE = 'slot-scheduling';
const LONG_FORM = 'service-video-cinema-long-form-from-references';
const IMAGE = { image_urls: ['https://media.test/reference.png'] };

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reelflow-slot-scheduling-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
const store = createFileStore(dir);
const pipelines = scriptedService();
/** Submits of the workflow ids listed answer `atCapacity` once (nothing sent): the step waits for `slotGranted`. */
const atCapacityOnce = new Set<string>();
/** The submits answered `atCapacity`, by workflow id. */
const queued = new Map<string, SubmitRequest>();
const activities = {
  ...pipelines.activities,
  ...createBatchActivities({ store, urlLifetimeSeconds: 60 }),
  async submitAndSubscribe(request: SubmitRequest): Promise<SubmitAnswer> {
    if (atCapacityOnce.delete(request.subscriberWorkflowId)) {
      queued.set(request.subscriberWorkflowId, request);
      return { atCapacity: true };
    }
    return pipelines.activities.submitAndSubscribe(request);
  },
};
const service: ScriptedService = { ...pipelines, activities };
const scripted = useScriptedWorker(TASK_QUEUE, service, async () => ({
  workflowBundle: await bundleReelflowWorkflows(),
}));

const spec = (name: string, more: Partial<PipelineSpec> = {}): PipelineSpec => ({
  name,
  steps: [{ id: 'render', model: LONG_FORM, input: IMAGE }],
  ...more,
});

/** Runs a batch of `specs` to its end, started with `priority` (the CLI's --priority and fairness flags). */
async function runBatch(
  name: string,
  specs: PipelineSpec[],
  more: { priority?: Priority; concurrency?: number } = {},
): Promise<BatchProgress> {
  const handle = await startTestBatch(scripted.env.client, TASK_QUEUE, store, {
    name,
    specs,
    publishSearchAttributes: false,
    ...more,
  });
  return (await handle.result()) as BatchProgress;
}

/**
 * An item's Temporal priority (its start event's: the time-skipping server's describe() leaves it out)
 * and the place its submit asked for in the slot queue.
 */
async function scheduledAs(name: string) {
  const workflowId = `pipeline/${name}`;
  const history = await scripted.env.client.workflow.getHandle(workflowId).fetchHistory();
  const priority = history.events?.[0]?.workflowExecutionStartedEventAttributes?.priority;
  const [submit] = service.calls(workflowId, 'submitAndSubscribe');
  const ask = (submit?.args[0] as SubmitRequest | undefined)?.slot;
  return {
    priorityKey: priority?.priorityKey || undefined,
    fairnessKey: priority?.fairnessKey || undefined,
    fairnessWeight: priority?.fairnessWeight || undefined,
    slot: { priority: ask?.priority, fairnessKey: ask?.fairnessKey, weight: ask?.weight },
  };
}

describe("a batch's items keep their priority and their batch's fairness key", () => {
  it("take the spec's priority when the batch has none, under the batch id as key", async () => {
    const done = await runBatch('spec-priority', [spec('rush', { priority: 1 }), spec('plain')]);
    expect(done).toMatchObject({ status: 'completed', completed: 2 });
    expect(await scheduledAs('rush')).toEqual({
      priorityKey: 1,
      fairnessKey: 'batch/spec-priority',
      fairnessWeight: undefined,
      slot: { priority: 1, fairnessKey: 'batch/spec-priority', weight: 1 },
    });
    // No priority anywhere: Temporal's default, and the slot queue's (3).
    expect(await scheduledAs('plain')).toEqual({
      priorityKey: undefined,
      fairnessKey: 'batch/spec-priority',
      fairnessWeight: undefined,
      slot: { priority: 3, fairnessKey: 'batch/spec-priority', weight: 1 },
    });
  });

  it("take the batch's --priority over the spec's, and its fairness key and weight", async () => {
    const priority = { priorityKey: 4, fairnessKey: 'tenant-a', fairnessWeight: 2 };
    await runBatch('batch-priority', [spec('overridden', { priority: 1 })], { priority });
    expect(await scheduledAs('overridden')).toEqual({
      ...priority,
      slot: { priority: 4, fairnessKey: 'tenant-a', weight: 2 },
    });
  });

  it("of a partitioned batch share one key, the batch's id, not one per partition", async () => {
    // A window over MAX_WINDOW_PER_RUN (500) is split over two partitions, batch/parted/part-0 and part-1.
    const names = ['part-a', 'part-b', 'part-c', 'part-d'];
    const done = await runBatch(
      'parted',
      names.map((name) => spec(name, { priority: 2 })),
      { concurrency: 501 },
    );
    expect(done).toMatchObject({ completed: 4, partitions: ['batch/parted/part-0', 'batch/parted/part-1'] });
    for (const name of names) {
      expect(await scheduledAs(name)).toEqual({
        priorityKey: 2,
        fairnessKey: 'batch/parted',
        fairnessWeight: undefined,
        slot: { priority: 2, fairnessKey: 'batch/parted', weight: 1 },
      });
    }
  });

  it('of a batch whose id passes 64 bytes share that id cut to 64 bytes (Temporal refuses a longer key)', async () => {
    const name = `long-${'n'.repeat(59)}`;
    await runBatch(name, [spec('long-a'), spec('long-b')], { concurrency: 501 });
    const key = batchFairnessKey(`batch/${name}`);
    expect(Buffer.byteLength(key)).toBe(64);
    for (const item of ['long-a', 'long-b'])
      expect(await scheduledAs(item)).toMatchObject({ fairnessKey: key, slot: { fairnessKey: key } });
  });
});

describe('a graph step whose submit waits for a slot', () => {
  it('reads phase slot and "waiting for: slot" until slotGranted, then submits and completes', async () => {
    const workflowId = 'pipeline/slot-wait';
    atCapacityOnce.add(workflowId);
    const input: PipelineWorkflowInput = {
      spec: { version: 2, name: 'slot-wait', steps: [{ id: 'render', model: LONG_FORM, input: IMAGE }] },
      publishSearchAttributes: false,
    };
    const handle = await scripted.env.client.workflow.start('pipelineWorkflow', {
      taskQueue: TASK_QUEUE,
      workflowId,
      args: [input],
    });
    const row = await eventually(async () => {
      const summary = await handle.query<PipelineSummary>('pipelineProgress');
      const step = summary.steps[0];
      return step?.phase === 'slot' && step;
    }, 'the step to wait for a slot');
    expect(row).toMatchObject({ status: 'running', phase: 'slot', waitingFor: 'slot' });

    const key = queued.get(workflowId)?.idempotencyKey;
    expect(service.calls(workflowId, 'submitAndSubscribe')).toEqual([]);
    await handle.signal(slotGrantedSignal, key as string);
    const summary = (await handle.result()) as PipelineSummary;
    expect(summary.status).toBe('completed');
    // Queued (nothing sent), then submitted once the slot came, under the same key.
    const sent = service
      .calls(workflowId, 'submitAndSubscribe')
      .map((c) => (c.args[0] as SubmitRequest).idempotencyKey);
    expect(sent).toEqual([key]);
  });

  it('cancelled while it waits: gives its place back once and submits nothing', async () => {
    const workflowId = 'pipeline/slot-cancel';
    atCapacityOnce.add(workflowId);
    const handle = await scripted.env.client.workflow.start('pipelineWorkflow', {
      taskQueue: TASK_QUEUE,
      workflowId,
      args: [{ spec: spec('slot-cancel'), publishSearchAttributes: false }],
    });
    await eventually(async () => {
      const summary = await handle.query<PipelineSummary>('pipelineProgress');
      return summary.steps[0]?.phase === 'slot';
    }, 'the step to wait for a slot');
    await handle.cancel();
    await expect(handle.result()).rejects.toThrow('Workflow execution cancelled');
    expect(service.calls(workflowId, 'submitAndSubscribe')).toEqual([]);
    const key = queued.get(workflowId)?.idempotencyKey;
    expect(service.calls(workflowId, 'releaseAccountPermit').map((c) => c.args[0])).toEqual([key]);
  });
});
