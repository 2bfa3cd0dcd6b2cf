import type { WorkflowBundleWithSourceMap } from '@temporalio/worker';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { temporal } from '@temporalio/proto';
import { startDevServer } from '../helpers/temporal';
import { PIXEL_PNG } from '../helpers/local-service';
import { threeStepPipeline } from '../../src/pipeline-spec';
import { DEFAULT_CLI_ARCHIVE } from '../../src/pipeline-spec/spec';
import { pipelineWorkflowId, SEARCH_ATTRIBUTE_KEYS } from '../../src/workflows/definitions';
import type { PipelineSummary } from '../../src/workflows/pipeline-types';
import { pipelineStartOptions } from '../../src/pipeline-spec/ui-text';
import {
  bundleReelflowWorkflows,
  maybeRecordHistory,
  silentWavDataUri,
  startHarness,
  startTestBridge,
  type Harness,
  type TestBridge,
} from './workflow-harness';

/**
 * What one three-step pipeline costs Temporal: every execution it created (the pipeline and whatever
 * it starts or signals into being), and their history events by type. A count, not a time: it does not
 * depend on the machine's speed beyond a signal or an activity's completion landing in its own workflow
 * task or beside another, which the ceiling's slack covers. Lower a ceiling when a change lowers the
 * figure; never raise it without a reason in docs/decisions/pipelines.md.
 *
 * Measured for both ways a submit runs (docs/decisions/pipelines.md, "History footprint"): as a local
 * activity, what a worker whose service honours Idempotency-Key does (the local service does; the
 * local stack sets REELFLOW_SERVICE_IDEMPOTENCY=honoured), and as an activity (`unknown`, the default).
 */
const EVENT_CEILING = { 'local-activity': 48, activity: 68 } as const;
const EXECUTION_CEILING = 1;

let bundle: WorkflowBundleWithSourceMap;
let env: TestWorkflowEnvironment;
const harnesses: Partial<Record<keyof typeof EVENT_CEILING, { h: Harness; bridge: TestBridge }>> = {};

beforeAll(async () => {
  [bundle, env] = await Promise.all([
    bundleReelflowWorkflows(),
    startDevServer({ searchAttributes: SEARCH_ATTRIBUTE_KEYS }),
  ]);
  for (const [submitAs, idempotency] of [
    ['local-activity', 'honoured'],
    ['activity', 'unknown'],
  ] as const) {
    const h = await startHarness(env, bundle, `history-footprint-${submitAs}`, {}, { idempotency });
    harnesses[submitAs] = { h, bridge: await startTestBridge(h.service, env, h.taskQueue) };
  }
}, 120_000);

afterAll(async () => {
  for (const { h, bridge } of Object.values(harnesses)) {
    await bridge.stop();
    await h.close();
  }
  await env?.teardown();
});

const eventTypeName = (type: temporal.api.enums.v1.EventType | null | undefined): string =>
  (temporal.api.enums.v1.EventType[type ?? 0] ?? String(type)).replace(/^EVENT_TYPE_/, '');

describe.each(['local-activity', 'activity'] as const)('submits as %s', (submitAs) => {
  it('a three-step pipeline as `reelflow run` starts it stays within its history footprint', async () => {
    const { h } = harnesses[submitAs] as { h: Harness };
    // The spec as `reelflow run` hands it over: the CLI's default archive mode filled in.
    const spec = {
      ...threeStepPipeline(
        { imageUrls: [PIXEL_PNG], audioUrl: silentWavDataUri(), duration: '4' },
        `footprint-${submitAs}`,
        { allowedOrigins: [h.service.url] },
      ),
      archive: DEFAULT_CLI_ARCHIVE,
    };
    const handle = await env.client.workflow.start('pipelineWorkflow', {
      taskQueue: h.taskQueue,
      workflowId: pipelineWorkflowId(spec.name),
      args: [{ spec, uriRules: { allowedOrigins: [h.service.url] } }],
      ...pipelineStartOptions(spec),
    });
    const summary = (await handle.result()) as PipelineSummary;
    expect(summary.status).toBe('completed');
    // The replay test replays the submits run as local activities too (markers, not activity tasks).
    if (submitAs === 'local-activity') await maybeRecordHistory(handle, 'pipeline-three-step-local-submit');

    // Every execution of this file's server started from this task queue or by this pipeline (the dev
    // server is this file's own): the pipeline, and anything it would have started or signalled into being.
    const byExecution: { workflowId: string; type: string; events: number }[] = [];
    const byType = new Map<string, number>();
    for await (const execution of env.client.workflow.list()) {
      if (execution.taskQueue !== h.taskQueue && execution.workflowId.startsWith('pipeline/')) continue;
      const history = await env.client.workflow.getHandle(execution.workflowId, execution.runId).fetchHistory();
      const events = history.events ?? [];
      byExecution.push({ workflowId: execution.workflowId, type: execution.type, events: events.length });
      for (const event of events) {
        const name = eventTypeName(event.eventType);
        byType.set(name, (byType.get(name) ?? 0) + 1);
      }
    }
    const total = byExecution.reduce((sum, e) => sum + e.events, 0);
    const table = [...byType.entries()]
      .sort((a, b) => b[1] - a[1])
      .map(([type, n]) => `  ${String(n).padStart(4)}  ${type}`);
    console.log(
      [
        `history footprint of one three-step pipeline (submit as ${submitAs}): ${total} events in ${byExecution.length} executions`,
        ...byExecution.map((e) => `  ${e.type} ${e.workflowId}: ${e.events}`),
        'by event type:',
        ...table,
      ].join('\n'),
    );
    expect(byExecution.length).toBeLessThanOrEqual(EXECUTION_CEILING);
    expect(total).toBeLessThanOrEqual(EVENT_CEILING[submitAs]);
  }, 120_000);
});
