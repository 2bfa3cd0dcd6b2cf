import * as fs from 'node:fs';
import * as path from 'node:path';
import * as zlib from 'node:zlib';
import type { WorkflowBundleWithSourceMap } from '@temporalio/worker';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { startDevServer } from '../helpers/temporal';
import { LONG_FORM, PIXEL_PNG, TEST_API_KEY, startTestService, type TestService } from '../helpers/local-service';
import { createServiceClient } from '../../src/client/service-client';
import { createReelflowWorker } from '../../src/workers/worker';
import { from, pipeline } from '../../src/spec';
import {
  SEARCH_ATTRIBUTE_KEYS,
  jobWorkflowId,
  pipelineWorkflowId,
  rendezvousWorkflowId,
} from '../../src/workflows/definitions';
import type { PipelineSummary } from '../../src/workflows/pipeline-types';
import { bundleReelflowWorkflows, eventually, startTestBridge } from './workflow-harness';

/**
 * Safe deploy of the one-workflow change: a pipeline started on the previous release (its workflow
 * bundle, built from commit af2b91e: test/fixtures/README.md) is mid-step when that worker stops;
 * the new worker (and the new bridge) take over and finish it on the legacy path: child job
 * workflows, rendezvous per request. A pipeline started after the switch runs in one workflow.
 */

let newBundle: WorkflowBundleWithSourceMap;
let env: TestWorkflowEnvironment;
let service: TestService;
const TASK_QUEUE = 'upgrade-running';

/** The previous release's workflow bundle (as its worker ran it). */
function previousBundle(): { code: string } {
  return {
    code: zlib
      .gunzipSync(fs.readFileSync(path.join(__dirname, '..', 'fixtures', 'workflow-bundle-v1.js.gz')))
      .toString(),
  };
}

beforeAll(async () => {
  [newBundle, env, service] = await Promise.all([
    bundleReelflowWorkflows(),
    startDevServer({ searchAttributes: SEARCH_ATTRIBUTE_KEYS }),
    startTestService({ faults: { modelDurationMs: { [LONG_FORM]: 3_000 } } }),
  ]);
}, 120_000);

afterAll(async () => {
  await service?.close();
  await env?.teardown();
});

it('a pipeline started on the previous code, mid-step at the switch, completes on the new worker', async () => {
  const client = createServiceClient({ baseUrl: service.url, apiKey: TEST_API_KEY });
  const spec = pipeline('started-before')
    .step('generate', LONG_FORM, { image_urls: [PIXEL_PNG] })
    .step('upscale', 'service-upscale-video-fast', { video_url: from('generate') })
    .build();
  const old = await createReelflowWorker({
    connection: env.nativeConnection,
    client: env.client,
    taskQueue: TASK_QUEUE,
    service: client,
    workflowBundle: previousBundle(),
  });
  const bridge = await startTestBridge(service, env, TASK_QUEUE);
  try {
    // Previous release: the pipeline starts its first child job workflow, which submits and subscribes.
    const handle = await old.runUntil(async () => {
      const started = await env.client.workflow.start('pipelineWorkflow', {
        taskQueue: TASK_QUEUE,
        workflowId: pipelineWorkflowId(spec.name),
        args: [{ spec }],
      });
      const job = await eventually(
        () => service.service.jobs().find((j) => j.status === 'IN_PROGRESS'),
        'the first job running',
      );
      await eventually(
        () =>
          env.client.workflow
            .getHandle(rendezvousWorkflowId(job.id))
            .describe()
            .then(
              (d) => d.type === 'webhookRendezvousWorkflow',
              () => false,
            ),
        'the job subscribed',
      );
      return started;
    });
    expect(service.service.jobs()).toHaveLength(1);

    // New release: the running job workflow learns its outcome through its rendezvous (the new bridge
    // still delivers to it); the legacy pipeline then starts its second step as a child job workflow.
    const worker = await createReelflowWorker({
      connection: env.nativeConnection,
      client: env.client,
      taskQueue: TASK_QUEUE,
      service: client,
      workflowBundle: newBundle,
    });
    const { summary, fresh } = await worker.runUntil(async () => {
      const result = (await handle.result()) as PipelineSummary;
      const after = pipeline('started-after')
        .step('generate', LONG_FORM, { image_urls: [PIXEL_PNG] })
        .build();
      const freshHandle = await env.client.workflow.start('pipelineWorkflow', {
        taskQueue: TASK_QUEUE,
        workflowId: pipelineWorkflowId(after.name),
        args: [{ spec: after }],
      });
      return {
        summary: result,
        fresh: { handle: freshHandle, result: (await freshHandle.result()) as PipelineSummary },
      };
    });
    expect(summary.status).toBe('completed');
    expect(summary.steps.map((s) => [s.id, s.status, s.polls])).toEqual([
      ['generate', 'completed', 0],
      ['upscale', 'completed', 0],
    ]);
    expect(service.service.jobs()).toHaveLength(3);
    const history = await handle.fetchHistory();
    const children = (history.events ?? []).flatMap(
      (e) => e.startChildWorkflowExecutionInitiatedEventAttributes?.workflowId ?? [],
    );
    expect(children).toEqual([jobWorkflowId('started-before', 'generate'), jobWorkflowId('started-before', 'upscale')]);
    expect((history.events ?? []).some((e) => e.markerRecordedEventAttributes)).toBe(false);
    const upscale = await env.client.workflow.getHandle(jobWorkflowId('started-before', 'upscale')).describe();
    expect([upscale.type, upscale.status.name]).toEqual(['jobWorkflow', 'COMPLETED']);

    // Started after the switch: one workflow, no child, its route names it.
    expect(fresh.result.status).toBe('completed');
    const freshHistory = await fresh.handle.fetchHistory();
    expect((freshHistory.events ?? []).some((e) => e.startChildWorkflowExecutionInitiatedEventAttributes)).toBe(false);
    const route = await env.client.workflow
      .getHandle(rendezvousWorkflowId(fresh.result.steps[0]?.requestIds[0] as string))
      .describe();
    expect([route.type, route.memo?.subscriber]).toEqual(['webhookRouteWorkflow', fresh.handle.workflowId]);
  } finally {
    await bridge.stop();
    await client.close();
  }
}, 180_000);
