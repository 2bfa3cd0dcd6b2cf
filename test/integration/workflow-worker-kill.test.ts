import { spawn, type ChildProcess } from 'node:child_process';
import * as net from 'node:net';
import * as path from 'node:path';
import type { WorkflowBundleWithSourceMap } from '@temporalio/worker';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { startDevServer } from '../helpers/temporal';
import { LONG_FORM, PIXEL_PNG, TEST_API_KEY, startTestService, type TestService } from '../helpers/local-service';
import { createServiceClient } from '../../src/client/service-client';
import { createReelflowWorker } from '../../src/workers/worker';
import { pipeline } from '../../src/pipeline-spec';
import { SEARCH_ATTRIBUTE_KEYS, pipelineWorkflowId } from '../../src/workflows/definitions';
import type { PipelineSummary } from '../../src/workflows/pipeline-types';
import { bundleReelflowWorkflows, eventually, maybeRecordHistory, startTestBridge } from './workflow-harness';
import { testRouteStore, testRouteStoreFile } from '../helpers/route-store';

/**
 * Exactly once, the hard way: the real worker entry point (src/workers/worker.ts) runs as a child
 * process and is killed with SIGKILL after its submit reached the service (the job exists) but
 * before the answer got back to it. A second worker takes over; Temporal retries the submit
 * activity; the Idempotency-Key makes the service answer with the job it already has.
 */
let bundle: WorkflowBundleWithSourceMap;
let env: TestWorkflowEnvironment;
let service: TestService;
const TASK_QUEUE = 'workflow-worker-kill';

beforeAll(async () => {
  [bundle, env, service] = await Promise.all([
    bundleReelflowWorkflows(),
    startDevServer({ searchAttributes: SEARCH_ATTRIBUTE_KEYS }),
    startTestService(),
  ]);
}, 120_000);

afterAll(async () => {
  await service?.close();
  await env?.teardown();
});

/** A loopback TCP proxy that holds the answers on any connection that carried a submit. */
async function startHoldingProxy(target: string): Promise<{ url: string; close(): Promise<void> }> {
  const { hostname, port } = new URL(target);
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(port), hostname);
    sockets.add(client).add(upstream);
    let hold = false;
    client.on('data', (chunk) => {
      if (chunk.toString('latin1').includes('POST /v1/queue/service-')) hold = true;
      upstream.write(chunk);
    });
    upstream.on('data', (chunk) => {
      if (!hold) client.write(chunk);
    });
    const end = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/** The version the spawned worker and its in-process replacement run (Worker Versioning). */
const KILLED_VERSION = { deploymentName: 'reelflow', buildId: 'worker-kill-test' };

function spawnWorker(serviceUrl: string): { child: ChildProcess; output: () => string } {
  const root = path.join(__dirname, '..', '..');
  const child = spawn(process.execPath, ['-r', 'tsx/cjs', path.join(root, 'src', 'workers', 'worker.ts')], {
    cwd: root,
    env: {
      ...process.env,
      TEMPORAL_ADDRESS: env.address,
      TEMPORAL_NAMESPACE: 'default',
      REELFLOW_TASK_QUEUE: TASK_QUEUE,
      REELFLOW_SERVICE_URL: serviceUrl,
      REELFLOW_API_KEY: TEST_API_KEY,
      // The local service honours the key: the next attempt after the kill resends with it.
      REELFLOW_SERVICE_IDEMPOTENCY: 'honoured',
      // The bridge's route store (startTestBridge): the event parked there is handed to the retried submit.
      REELFLOW_ROUTE_STORE: `sqlite:${testRouteStoreFile(TASK_QUEUE)}`,
      // The replacement worker below runs the same version: the pipeline is pinned to it.
      REELFLOW_DEPLOYMENT_NAME: KILLED_VERSION.deploymentName,
      REELFLOW_BUILD_ID: KILLED_VERSION.buildId,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr?.on('data', (c: Buffer) => (output += c.toString()));
  return { child, output: () => output };
}

it('a worker killed right after its submit reached the service does not create a second job', async () => {
  const proxy = await startHoldingProxy(service.url);
  // The real bridge, registered before anything runs: the job's signed event may well arrive before the new worker subscribes.
  const bridge = await startTestBridge(service, env, TASK_QUEUE);
  const spawned = spawnWorker(proxy.url);
  const exited = new Promise<void>((resolve) => spawned.child.once('exit', () => resolve()));
  const spec = pipeline('killed-worker')
    .step('generate', LONG_FORM, { image_urls: [PIXEL_PNG] })
    .build();
  const client = createServiceClient({ baseUrl: service.url, apiKey: TEST_API_KEY, idempotency: 'honoured' });
  try {
    // A short submit timeout bounds how long Temporal waits for the dead worker's attempt.
    const handle = await env.client.workflow.start('pipelineWorkflow', {
      taskQueue: TASK_QUEUE,
      workflowId: pipelineWorkflowId(spec.name),
      args: [{ spec, submitTimeoutSeconds: 3 }],
    });
    const job = await eventually(
      () => service.service.jobs()[0],
      `the submit to reach the service (worker output: ${spawned.output()})`,
      90_000,
    );
    spawned.child.kill('SIGKILL');
    await exited;
    expect(service.service.counters()).toMatchObject({ submits: 1, jobsCreated: 1 });

    const worker = await createReelflowWorker({
      connection: env.nativeConnection,
      client: env.client,
      taskQueue: TASK_QUEUE,
      service: client,
      workflowBundle: bundle,
      deployment: KILLED_VERSION,
      routeStore: testRouteStore(TASK_QUEUE),
    });
    const summary = await worker
      .runUntil(async () => {
        const result = (await handle.result()) as PipelineSummary;
        await maybeRecordHistory(handle, 'pipeline-killed-worker');
        return result;
      })
      .finally(() => bridge.stop());
    expect(summary.steps[0]?.attemptLog?.[0]?.learnedBy).toBe('webhook');
    expect(summary.status).toBe('completed');
    expect(summary.steps[0]?.requestIds).toEqual([job.id]);
    // The retried submit reached the service and was answered with the existing job.
    expect(service.service.counters()).toMatchObject({ submits: 2, jobsCreated: 1 });
    expect(service.service.jobs()).toHaveLength(1);
    expect(summary.ledger.charged).toBe(80);
  } finally {
    if (spawned.child.exitCode === null && spawned.child.signalCode === null) spawned.child.kill('SIGKILL');
    await bridge.stop();
    await client.close();
    await proxy.close();
  }
}, 120_000);

it('the worker entry point shuts down gracefully on SIGTERM', async () => {
  const spawned = spawnWorker(service.url);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    spawned.child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  try {
    await eventually(
      () => /reelflow worker: task queue workflow-worker-kill/.test(spawned.output()),
      `the worker to start (output: ${spawned.output()})`,
      90_000,
    );
    // The API key never appears in what the worker prints.
    expect(spawned.output()).not.toContain(TEST_API_KEY);
    spawned.child.kill('SIGTERM');
    expect(await exited).toEqual({ code: 0, signal: null });
  } finally {
    if (spawned.child.exitCode === null && spawned.child.signalCode === null) spawned.child.kill('SIGKILL');
  }
}, 120_000);
