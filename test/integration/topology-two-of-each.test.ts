import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import pino from 'pino';
import { request } from 'undici';
import { NativeConnection, type Worker } from '@temporalio/worker';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { startDevServer } from '../helpers/temporal';
import { PIXEL_PNG, startTestService, TEST_API_KEY, type TestService } from '../helpers/local-service';
import { threeStepPipeline } from '../../src/pipeline-spec';
import { startBridgeServer, type RunningBridge } from '../../src/bridge/server';
import { loadBridgeConfig } from '../../src/config';
import { createServiceClient } from '../../src/client/service-client';
import type { CallKind, ServiceClient } from '../../src/client/types';
import { createReelflowWorker, workerOptionsFromEnv } from '../../src/workers/worker';
import { SEARCH_ATTRIBUTE_KEYS, pipelineWorkflowId } from '../../src/workflows/definitions';
import type { PipelineSummary } from '../../src/workflows/pipeline-types';
import { buildWorkflowBundle } from '../../scripts/build-workflow-bundle';
import { eventually, silentWavDataUri } from './workflow-harness';
import { startProxy, type RoundRobinProxy } from '../helpers/round-robin-proxy';

/**
 * The production topology on loopback: two workers on one task queue, loading the workflow bundle
 * that `npm run build` writes, and two bridges behind one webhook address (a small round-robin
 * proxy standing in for nginx: a bridge that refuses the connection is skipped). Pipelines complete
 * with both of each, and keep completing after one worker and one bridge are stopped mid-run.
 */

const TASK_QUEUE = 'topology-test';
let env: TestWorkflowEnvironment;
let service: TestService;
let bundleDir: string;
let proxy: RoundRobinProxy;
const bridges: RunningBridge[] = [];
const workers: {
  worker: Worker;
  running: Promise<void>;
  connection: NativeConnection;
  client: ServiceClient & { close(): Promise<void> };
  calls: Record<CallKind, number>;
  stopped: boolean;
}[] = [];

async function startWorker(bundlePath: string): Promise<void> {
  const fast = { maxAttempts: 2, initialDelayMs: 50, maxDelayMs: 200, jitter: 0 };
  const client = createServiceClient({ baseUrl: service.url, apiKey: TEST_API_KEY, retry: fast, submitRetry: fast });
  const calls: Record<CallKind, number> = { submit: 0, status: 0, result: 0, cancel: 0, quote: 0 };
  // The production path: the bundle and tuning come from the environment, as in docker-compose.yml.
  // Its own connection, as a separate worker process has (the SDK refuses two workers of one queue on one connection).
  const connection = await NativeConnection.connect({ address: env.address });
  const { workflowBundle, ...tuning } = workerOptionsFromEnv({
    REELFLOW_WORKFLOW_BUNDLE: bundlePath,
    REELFLOW_MAX_CONCURRENT_ACTIVITIES: '20',
    REELFLOW_SHUTDOWN_GRACE_SECONDS: '10',
  });
  const worker = await createReelflowWorker({
    connection,
    client: env.client,
    taskQueue: TASK_QUEUE,
    service: client,
    ...(workflowBundle ? { workflowBundle } : {}),
    worker: tuning,
    onCall: (kind) => (calls[kind] += 1),
  });
  workers.push({ worker, running: worker.run(), connection, client, calls, stopped: false });
}

async function stopWorker(index: number): Promise<void> {
  const entry = workers[index];
  if (!entry || entry.stopped) return;
  entry.stopped = true;
  // Graceful: in-flight activities finish (or hand back at the grace time), then run() resolves.
  entry.worker.shutdown();
  await entry.running;
  await entry.client.close();
  await entry.connection.close();
}

function startPipeline(name: string) {
  const spec = threeStepPipeline({ imageUrls: [PIXEL_PNG], audioUrl: silentWavDataUri(), duration: '4' }, name, {
    allowedOrigins: [service.url],
  });
  return env.client.workflow.start('pipelineWorkflow', {
    taskQueue: TASK_QUEUE,
    workflowId: pipelineWorkflowId(name),
    args: [{ spec, uriRules: { allowedOrigins: [service.url] } }],
  });
}

beforeAll(async () => {
  bundleDir = fs.mkdtempSync(path.join(os.tmpdir(), 'reelflow-bundle-'));
  const [bundlePath, devServer, testService] = await Promise.all([
    buildWorkflowBundle(path.join(bundleDir, 'workflow-bundle.js')),
    startDevServer({ searchAttributes: SEARCH_ATTRIBUTE_KEYS }),
    startTestService({ allowPrivateWebhooks: true }),
  ]);
  env = devServer;
  service = testService;
  proxy = await startProxy(() => bridges.map((b) => b.url.replace(/\/webhooks$/, '')));
  const registered = await service.call('POST', '/v1/webhooks/endpoints', { body: { url: proxy.url } });
  expect(registered.status).toBe(201);
  for (let i = 0; i < 2; i += 1) {
    const config = loadBridgeConfig({
      REELFLOW_WEBHOOK_SECRETS: String(registered.body.secret),
      TEMPORAL_ADDRESS: env.address,
      REELFLOW_BRIDGE_PORT: '0',
    });
    bridges.push(await startBridgeServer(config, { logger: pino({ level: 'silent' }) }));
  }
  await startWorker(bundlePath);
  await startWorker(bundlePath);
}, 120_000);

afterAll(async () => {
  for (let i = 0; i < workers.length; i += 1) await stopWorker(i);
  for (const bridge of bridges) await bridge.close().catch(() => undefined);
  await proxy?.close();
  await service?.close();
  await env?.teardown();
  if (bundleDir) fs.rmSync(bundleDir, { recursive: true, force: true });
});

it('completes pipelines on two workers and two bridges, and keeps completing them with one of each stopped mid-run', async () => {
  const first = await Promise.all(['topo-a1', 'topo-a2'].map(startPipeline));
  const firstResults = (await Promise.all(first.map((h) => h.result()))) as PipelineSummary[];
  expect(firstResults.map((r) => r.status)).toEqual(['completed', 'completed']);
  // Round robin: both bridges answered deliveries while both were up.
  expect(proxy.served[0]).toBeGreaterThan(0);
  expect(proxy.served[1]).toBeGreaterThan(0);

  // Start more pipelines, then stop worker 1 and bridge 1 while they are in flight.
  const second = await Promise.all(['topo-b1', 'topo-b2', 'topo-b3'].map(startPipeline));
  await eventually(() => service.service.jobs().length >= 7, 'a job of the second round at the service');
  const servedBy0 = proxy.served[0] ?? 0;
  const servedBy1 = proxy.served[1] ?? 0;
  const stoppedBridge = bridges[0] as RunningBridge;
  await Promise.all([stopWorker(0), stoppedBridge.close()]);
  const callsOfStopped = { ...workers[0]?.calls };
  const survivorCallsAtStop = Object.values(workers[1]?.calls ?? {}).reduce((a, b) => a + b, 0);

  const secondResults = (await Promise.all(second.map((h) => h.result()))) as PipelineSummary[];
  expect(secondResults.map((r) => r.status)).toEqual(['completed', 'completed', 'completed']);

  // 5 pipelines × 3 steps, each exactly one job, each completion delivered through the one address.
  const jobs = service.service.jobs();
  expect(jobs).toHaveLength(15);
  expect(jobs.every((job) => job.status === 'COMPLETED')).toBe(true);
  const deliveries = service.service.deliveries();
  for (const job of jobs) expect(deliveries.some((d) => d.requestId === job.id && d.state === 'delivered')).toBe(true);
  // After the stop, only the surviving bridge and worker did the work.
  expect(proxy.served[0]).toBe(servedBy0);
  expect((proxy.served[1] ?? 0) - servedBy1).toBeGreaterThan(0);
  expect(workers[0]?.calls).toEqual(callsOfStopped);
  expect(Object.values(workers[1]?.calls ?? {}).reduce((a, b) => a + b, 0)).toBeGreaterThan(survivorCallsAtStop);
  // The stopped bridge is really gone: its port refuses.
  await expect(request(stoppedBridge.url, { method: 'POST', body: '{}' })).rejects.toThrow();
});
