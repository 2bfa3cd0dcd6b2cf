import { spawn, type ChildProcess } from 'node:child_process';
import * as path from 'node:path';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { freePort } from '../../src/stack/stack-state';
import type { WorkerReadiness } from '../../src/workers/worker-health';
import { startDevServer } from '../helpers/temporal';

/**
 * The worker entry point's readiness endpoint (REELFLOW_WORKER_HEALTH_PORT), metrics off: a real
 * worker process against a real dev server, then the same worker once that server is gone.
 */

const ENTRY = path.join(__dirname, '..', '..', 'src', 'workers', 'worker.ts');
let env: TestWorkflowEnvironment | undefined;
let worker: ChildProcess | undefined;

afterAll(async () => {
  worker?.kill('SIGKILL');
  await env?.teardown();
});

async function readyz(base: string): Promise<{ status: number; body: WorkerReadiness }> {
  const response = await fetch(`${base}/readyz`);
  return { status: response.status, body: (await response.json()) as WorkerReadiness };
}

it('answers /readyz 200 while Temporal answers and both pollers poll, 503 naming the connection when Temporal is gone', async () => {
  env = await startDevServer();
  const healthPort = await freePort();
  const child = spawn(process.execPath, ['-r', 'tsx/cjs', ENTRY], {
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      TEMPORAL_ADDRESS: env.address,
      REELFLOW_TASK_QUEUE: 'worker-readiness',
      REELFLOW_SERVICE_URL: 'http://127.0.0.1:9',
      REELFLOW_API_KEY: 'unused-key',
      REELFLOW_WORKER_HEALTH_PORT: String(healthPort),
      REELFLOW_LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  worker = child;
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const base = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`worker did not start:\n${output}`)), 110_000);
    child.stdout?.on('data', () => {
      const match = /readiness on (http:\/\/\S+)\/readyz/.exec(output);
      if (match?.[1]) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    });
    child.once('exit', (code) => reject(new Error(`worker exited with ${code}:\n${output}`)));
  });
  expect(base).toBe(`http://127.0.0.1:${healthPort}`);
  // No metrics port was set: the health endpoint stands on its own.
  expect(output).not.toContain('metrics on');

  let ready = await readyz(base);
  for (let i = 0; i < 50 && ready.status !== 200; i += 1) {
    await new Promise((resolve) => setTimeout(resolve, 200));
    ready = await readyz(base);
  }
  expect(ready.status).toBe(200);
  expect(ready.body).toMatchObject({
    status: 'ready',
    temporal: { address: env.address, namespace: 'default', connected: true, ms: expect.any(Number) },
    worker: { taskQueue: 'worker-readiness', state: 'RUNNING', workflowPoller: 'POLLING', activityPoller: 'POLLING' },
  });
  expect((await fetch(`${base}/healthz`)).status).toBe(200);
  expect((await fetch(`${base}/metrics`)).status).toBe(404);

  await env.teardown();
  env = undefined;
  const gone = await readyz(base);
  expect(gone.status).toBe(503);
  expect(gone.body.status).toBe('not_ready');
  expect(gone.body.temporal).toMatchObject({ connected: false, error: expect.any(String) });
  expect(gone.body.temporal).not.toHaveProperty('ms');
  expect(JSON.stringify(gone.body)).not.toContain('unused-key');
});
