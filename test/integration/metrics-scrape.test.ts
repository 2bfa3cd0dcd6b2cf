import { request } from 'undici';
import { DefaultLogger, Runtime, type WorkflowBundleWithSourceMap } from '@temporalio/worker';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { startDevServer } from '../helpers/temporal';
import { PIXEL_PNG } from '../helpers/local-service';
import { threeStepPipeline } from '../../src/pipeline-spec';
import type { RunningBridge } from '../../src/bridge/server';
import { startRegisteredBridge } from '../helpers/registered-bridge';
import { startMetricsServer, type MetricsServer } from '../../src/metrics';
import { SEARCH_ATTRIBUTE_KEYS, pipelineWorkflowId } from '../../src/workflows/definitions';
import type { PipelineSummary } from '../../src/workflows/pipeline-types';
import { bundleReelflowWorkflows, silentWavDataUri, startHarness, type Harness } from './workflow-harness';
import { freePort } from '../../src/stack/stack-state';

/**
 * /metrics of a real bridge and a real worker, scraped over HTTP while a three-step pipeline runs on
 * the dev server with the local service's own signed webhooks: reelflow's counters move, and the SDK
 * runtime's Prometheus exporter (appended to the worker's /metrics) shows SDK metrics and the job
 * workflow's outcome and credit counters.
 */

const TASK_QUEUE = 'metrics-scrape-test';
let bundle: WorkflowBundleWithSourceMap;
let env: TestWorkflowEnvironment;
let h: Harness;
let bridge: RunningBridge;
let workerMetrics: MetricsServer;
let sdkAddress: string;

async function scrape(url: string): Promise<string> {
  const response = await request(url);
  expect(response.statusCode).toBe(200);
  expect(String(response.headers['content-type'])).toMatch(/^text\/plain/);
  return response.body.text();
}

/** Sum of the samples of `name` whose labels include every `labels` pair (0 when none). */
function sample(text: string, name: string, labels: Record<string, string> = {}): number {
  let total = 0;
  for (const line of text.split('\n')) {
    if (line.startsWith('#') || !line.startsWith(name)) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})?\s+(\S+)/.exec(line);
    if (!match || match[1] !== name) continue;
    const found = Object.fromEntries(
      [...(match[3] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1], m[2]]),
    );
    if (Object.entries(labels).every(([k, v]) => found[k] === v)) total += Number(match[4]);
  }
  return total;
}

beforeAll(async () => {
  // jest-setup installed a runtime without metrics; nothing uses it yet, so replace it with one that exports.
  await Runtime.instance().shutdown();
  sdkAddress = `127.0.0.1:${await freePort()}`;
  Runtime.install({
    logger: new DefaultLogger('WARN'),
    telemetryOptions: { metrics: { prometheus: { bindAddress: sdkAddress } } },
  });
  [bundle, env] = await Promise.all([
    bundleReelflowWorkflows(),
    startDevServer({ searchAttributes: SEARCH_ATTRIBUTE_KEYS }),
  ]);
  h = await startHarness(env, bundle, TASK_QUEUE, { allowPrivateWebhooks: true });
  workerMetrics = await startMetricsServer({ port: 0, appendFrom: [`http://${sdkAddress}/metrics`] });
}, 120_000);

afterAll(async () => {
  await bridge?.close();
  await workerMetrics?.close();
  await h?.close();
  await env?.teardown();
});

it('counts deliveries, signal latency, verification failures, service calls, credits and job outcomes as a pipeline runs', async () => {
  ({ bridge } = await startRegisteredBridge({
    serviceUrl: h.service.url,
    temporalAddress: env.address,
    taskQueue: TASK_QUEUE,
    metrics: true,
  }));
  // The bridge's metrics are on a listener of their own (REELFLOW_BRIDGE_METRICS_PORT), not on the
  // public webhook port, where /metrics is not found.
  const bridgeMetricsUrl = bridge.metricsUrl!;
  expect(new URL(bridgeMetricsUrl).port).not.toBe(new URL(bridge.url).port);
  const onWebhookPort = await request(bridge.url.replace(/\/webhooks$/, '/metrics'));
  await onWebhookPort.body.dump();
  expect(onWebhookPort.statusCode).toBe(404);

  const bridgeBefore = await scrape(bridgeMetricsUrl);
  const workerBefore = await scrape(workerMetrics.url);
  const accepted0 = sample(bridgeBefore, 'reelflow_bridge_deliveries_total', { outcome: 'accepted' });
  const latency0 = sample(bridgeBefore, 'reelflow_bridge_signal_latency_seconds_count');
  const submits0 = sample(workerBefore, 'reelflow_service_calls_total', { kind: 'submit', outcome: 'ok' });

  const spec = threeStepPipeline(
    { imageUrls: [PIXEL_PNG], audioUrl: silentWavDataUri(), duration: '4' },
    'metrics-scrape',
    { allowedOrigins: [h.service.url] },
  );
  const handle = await env.client.workflow.start('pipelineWorkflow', {
    taskQueue: TASK_QUEUE,
    workflowId: pipelineWorkflowId(spec.name),
    // No early status check: the zero-polls count below is about the webhook path.
    args: [{ spec, uriRules: { allowedOrigins: [h.service.url] }, defaultPacing: { earlyCheckSeconds: 0 } }],
  });
  const summary = (await handle.result()) as PipelineSummary;
  expect(summary.status).toBe('completed');

  // A forged delivery: refused, counted as a verification failure by reason.
  const forged = await request(bridge.url, {
    method: 'POST',
    body: '{}',
    headers: {
      'content-type': 'application/json',
      'webhook-id': 'evt_forged',
      'webhook-timestamp': String(Math.floor(Date.now() / 1000)),
      'webhook-signature': 'v1,AAAA',
    },
  });
  await forged.body.text();
  expect(forged.statusCode).toBe(401);

  const bridgeAfter = await scrape(bridgeMetricsUrl);
  expect(bridgeAfter).toContain('# TYPE reelflow_bridge_deliveries_total counter');
  expect(bridgeAfter).toContain('# TYPE reelflow_bridge_signal_latency_seconds histogram');
  // Three jobs, three completion events, each handed to Temporal (the service may retry, never fewer).
  expect(
    sample(bridgeAfter, 'reelflow_bridge_deliveries_total', { outcome: 'accepted' }) - accepted0,
  ).toBeGreaterThanOrEqual(3);
  expect(sample(bridgeAfter, 'reelflow_bridge_signal_latency_seconds_count') - latency0).toBeGreaterThanOrEqual(3);
  expect(sample(bridgeAfter, 'reelflow_bridge_signal_latency_seconds_bucket', { le: '+Inf' })).toBe(
    sample(bridgeAfter, 'reelflow_bridge_signal_latency_seconds_count'),
  );
  expect(sample(bridgeAfter, 'reelflow_bridge_verification_failures_total')).toBeGreaterThanOrEqual(1);
  expect(sample(bridgeAfter, 'reelflow_bridge_deliveries_total', { outcome: 'rejected' })).toBeGreaterThanOrEqual(1);

  const jobs = h.service.service.jobs();
  expect(jobs).toHaveLength(3);
  const workerAfter = await scrape(workerMetrics.url);
  expect(sample(workerAfter, 'reelflow_service_calls_total', { kind: 'submit', outcome: 'ok' }) - submits0).toBe(3);
  // The SDK exporter's metrics are on the same scrape: Temporal's own (one execution per pipeline: routes
  // are rows of the route store, not workflows), and the job workflow's counters.
  expect(sample(workerAfter, 'temporal_workflow_completed')).toBeGreaterThanOrEqual(1);
  for (const model of [
    'service-video-cinema-long-form-from-references',
    'service-horizon-studio',
    'service-upscale-video-fast',
  ]) {
    expect(sample(workerAfter, 'reelflow_jobs_submitted_total', { model })).toBe(1);
    expect(sample(workerAfter, 'reelflow_jobs', { model, outcome: 'completed' })).toBe(1);
  }
  // Every answer of the service is counted by kind and status (what the 429-share alert reads).
  expect(
    sample(workerAfter, 'reelflow_service_requests_total', { kind: 'submit', status: '202' }),
  ).toBeGreaterThanOrEqual(3);
  // What the service's ledger charged is what the job workflows counted.
  const charged = jobs.reduce((sum, job) => sum + job.creditsCharged - job.creditsRefunded, 0);
  expect(charged).toBeGreaterThan(0);
  expect(sample(workerAfter, 'reelflow_credits_charged')).toBe(charged);
  // Webhook path: no status poll, and no result fetch (the signed events carried the results).
  expect(sample(workerAfter, 'reelflow_status_polls_total')).toBe(0);
  expect(sample(workerAfter, 'reelflow_service_calls_total', { kind: 'result' })).toBe(0);
});
