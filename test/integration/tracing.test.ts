import { Client, type WorkflowClientInterceptor } from '@temporalio/client';
import { startInboxSink } from '../../src/bridge/server';
import { defaultRegistry } from '../../src/metrics';
import { openSqliteRouteStore } from '../../src/routing';
import { makeEvent } from './bridge-fixtures';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { threeStepPipeline } from '../../src/pipeline-spec';
import { pipelineStartOptions } from '../../src/pipeline-spec/ui-text';
import { pipelineWorkflowId, SEARCH_ATTRIBUTE_KEYS } from '../../src/workflows/definitions';
import type { PipelineSummary } from '../../src/workflows/pipeline-types';
import { bundleProductionWorkflows } from '../../src/workers/workflow-bundle';
import {
  activeTracing,
  startTracing,
  stopTracing,
  tracingClientInterceptors,
  tracingWorkflowModules,
} from '../../src/tracing';
import { PIXEL_PNG, TEST_API_KEY } from '../helpers/local-service';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '../helpers/otlp-receiver';
import { startDevServer } from '../helpers/temporal';
import { silentWavDataUri, startHarness, startTestBridge, type Harness, type TestBridge } from './workflow-harness';

/**
 * Tracing end to end with the real parts in one process: a dev server, the local service (stub renders,
 * Idempotency-Key honoured, so the bridge submits the next steps), the worker and the webhook bridge,
 * exporting over OTLP/HTTP to a loopback receiver. One pipeline's spans share one trace id, from the
 * client's start through the workflow, the submit activity and its HTTP call to the service, the bridge's
 * receive, commit and signal of the job's webhook, to the next step's submit the bridge makes.
 */

const TOKEN = 'otlp-test-token-0123';
let receiver: OtlpReceiver;
let env: TestWorkflowEnvironment;
let h: Harness | undefined;
let bridge: TestBridge | undefined;
const stops: (() => Promise<void>)[] = [];

beforeAll(async () => {
  receiver = await startOtlpReceiver();
  startTracing({
    url: `${receiver.url}/v1/traces`,
    headers: { authorization: `Bearer ${TOKEN}` },
    serviceName: 'reelflow-test',
  });
  const [bundle, server] = await Promise.all([
    bundleProductionWorkflows(undefined, { workflowInterceptorModules: tracingWorkflowModules() }),
    startDevServer({ searchAttributes: SEARCH_ATTRIBUTE_KEYS }),
  ]);
  env = server;
  h = await startHarness(env, bundle, 'tracing', { render: 'stub' }, { idempotency: 'honoured' });
  bridge = await startTestBridge(h.service, env, h.taskQueue);
}, 120_000);

afterAll(async () => {
  await bridge?.stop();
  await h?.close();
  await stopTracing();
  await env?.teardown();
  await receiver?.close();
});

const named = (spans: ReceivedSpan[], pattern: RegExp) => spans.filter((span) => pattern.test(span.name));

it('follows one pipeline in one trace: client, workflow, activity, service call, bridge, next submit', async () => {
  const client = new Client({ connection: env.connection, interceptors: tracingClientInterceptors() });
  const rules = { allowedOrigins: [h!.service.url] };
  const spec = threeStepPipeline(
    { imageUrls: [PIXEL_PNG], audioUrl: silentWavDataUri(), duration: '4' },
    'traced',
    rules,
  );
  const handle = await client.workflow.start('pipelineWorkflow', {
    taskQueue: h!.taskQueue,
    workflowId: pipelineWorkflowId(spec.name),
    args: [{ spec, uriRules: rules }],
    ...pipelineStartOptions(spec),
  });
  const summary = (await handle.result()) as PipelineSummary;
  expect(summary.status).toBe('completed');
  // The bridge submitted the later steps (the trace must reach them through the webhook).
  expect(summary.steps.map((step) => step.attemptLog?.[0]?.submittedBy)).toEqual([undefined, 'bridge', 'bridge']);
  // Exports what every part ended so far (workflow spans too: their sink hands them to the same processor).
  await activeTracing()!.flush();

  const start = receiver.spans.find(
    (span) =>
      span.name === 'StartWorkflow:pipelineWorkflow' && span.attributes.temporalWorkflowId === handle.workflowId,
  );
  expect(start).toBeDefined();
  const trace = receiver.spans.filter((span) => span.traceId === start!.traceId);
  const names = new Set(trace.map((span) => span.name));
  for (const name of [
    'RunWorkflow:pipelineWorkflow',
    'reelflow.bridge.receive',
    'reelflow.bridge.commit',
    'reelflow.bridge.signal',
    'SignalWorkflow:jobEventWithNextSubmit',
    'HandleSignal:jobEventWithNextSubmit',
  ])
    expect(names).toContain(name);
  expect(named(trace, /^StartActivity:reelflow\./).length).toBeGreaterThan(0);
  expect(named(trace, /^RunActivity:reelflow\./).length).toBeGreaterThan(0);

  // The service calls: the worker's first submit (under its activity) and the bridge's next submits (under its signal span).
  const submits = named(trace, /^POST \/v1\/queue\/\{model_id\}$/);
  const byId = new Map(trace.map((span) => [span.spanId, span]));
  const parentName = (span: ReceivedSpan) => byId.get(span.parentSpanId ?? '')?.name ?? '';
  expect(submits.filter((span) => parentName(span).startsWith('RunActivity:reelflow.'))).toHaveLength(1);
  expect(submits.filter((span) => parentName(span) === 'reelflow.bridge.signal')).toHaveLength(2);
  for (const span of submits) {
    expect(span.attributes['http.response.status_code']).toBe(202);
    expect(span.attributes['url.template']).toBe('/v1/queue/{model_id}');
  }
  // Every webhook of the pipeline's jobs joined its trace: receive → commit, and the signal under receive.
  for (const signal of named(trace, /^reelflow\.bridge\.signal$/))
    expect(parentName(signal)).toBe('reelflow.bridge.receive');
  for (const commit of named(trace, /^reelflow\.bridge\.commit$/))
    expect(parentName(commit)).toBe('reelflow.bridge.receive');

  // The export carried its header; no span carries the API key.
  expect(receiver.requests.some((headers) => headers.authorization === `Bearer ${TOKEN}`)).toBe(true);
  expect(JSON.stringify(receiver.spans)).not.toContain(TEST_API_KEY);
}, 120_000);

/** The signal latency histogram's sum and count in the process registry (the bridge's sinks observe into it). */
async function signalLatency(): Promise<{ sum: number; count: number }> {
  const text = await defaultRegistry.getSingleMetricAsString('reelflow_bridge_signal_latency_seconds');
  const value = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1] ?? 0);
  return {
    sum: value('reelflow_bridge_signal_latency_seconds_sum'),
    count: value('reelflow_bridge_signal_latency_seconds_count'),
  };
}

it('takes the signal latency when Temporal accepts the signal, the signal call included', async () => {
  // The pipeline's bridge observes into the same histogram: stopped, so only this delivery counts.
  await bridge?.stop();
  // One clock for the inbox and the forwarder, moved only by the signal call: 7 s pass inside it.
  let clock = Date.now();
  const slowSignal: WorkflowClientInterceptor = {
    async signal(input, next) {
      clock += 7_000;
      return next(input);
    },
  };
  const client = new Client({ connection: env.connection, interceptors: { workflow: [slowSignal] } });
  // A workflow that waits on a task queue no worker polls still takes signals.
  const waiting = await client.workflow.start('pipelineWorkflow', {
    taskQueue: 'tracing-no-worker',
    workflowId: `signal-latency-${Date.now()}`,
    args: [],
  });
  const store = openSqliteRouteStore(':memory:');
  const event = makeEvent();
  await store.subscribe({ requestId: event.request_id, workflowId: waiting.workflowId, signalName: 'jobEvent' }, clock);
  const before = await signalLatency();
  const signalled = new Promise<void>((resolve) => {
    const sink = startInboxSink({
      store,
      client,
      now: () => clock,
      warmUp: false,
      onOutcome: (outcome) => outcome === 'signalled' && resolve(),
    });
    void sink.sink.deliver(event).then(() => undefined);
    stops.push(sink.stop);
  });
  await signalled;
  const after = await signalLatency();
  expect(after.count - before.count).toBe(1);
  expect(after.sum - before.sum).toBeCloseTo(7, 3);
  await waiting.terminate();
  await Promise.all(stops.splice(0).map((stop) => stop()));
  await store.close();
}, 60_000);
