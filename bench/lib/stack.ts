import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { randomUUID } from 'node:crypto';
import { request } from 'undici';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { startDevServer } from '../../test/helpers/temporal';
import { SEARCH_ATTRIBUTE_KEYS } from '../../src/workflows/definitions';
import { freePort } from '../../src/stack/stack-state';
import { startProcess, tsNode, type BenchProcess } from './processes';
import { benchServiceIdempotency } from './run-info';
import type { JobClocks } from '../../src/local-service/routes/clocks';

export const ROOT = path.resolve(__dirname, '..', '..');
export const DIST = path.join(ROOT, 'dist');
export const BENCH_API_KEY = 'bench-key-0123456789abcdef';
/** Admin credential of the bench's service (its job clocks are an admin route). */
export const BENCH_ADMIN_KEY = 'bench-admin-0123456789abcdef';

export type { JobClocks } from '../../src/local-service/routes/clocks';

export interface ServiceCounters {
  submits: number;
  statusCalls: number;
  resultCalls: number;
  [name: string]: number;
}

/** Options of one bench stack: every part its own process, on loopback. */
export interface BenchStackOptions {
  name: string;
  render: 'stub' | 'ffmpeg';
  stubHoldMs?: number;
  /** Jobs running at once per model at the service (default 64: its queue is not what is measured). */
  serviceConcurrency?: number;
  bridge?: boolean;
  worker?: boolean;
  rawWorker?: boolean;
  /**
   * The service's quote limit per key and minute: the benches widen it to 1,000,000 (what they measure
   * is not the service's limit); `'default'` keeps the local service's own (120).
   */
  quotesPerMinute?: number | 'default';
  /**
   * Keep the local service's journal in memory (/dev/shm where there is one): it stands for a service
   * on other machines, whose durable writes never wait behind this machine's disk (the worker's
   * media store writing whole videos). reelflow's own state (route store, media store) stays on disk.
   */
  serviceDataInMemory?: boolean;
  /** Extra environment of the reelflow worker (e.g. REELFLOW_MAX_CACHED_WORKFLOWS). */
  workerEnv?: NodeJS.ProcessEnv;
  /** Extra environment of the bridge (e.g. the account's caps, REELFLOW_ACCOUNT_CONCURRENCY). */
  bridgeEnv?: NodeJS.ProcessEnv;
  /**
   * A running Temporal frontend to use (namespace `default`, reelflow's search attributes registered),
   * e.g. the `npm run cluster` one; without it the stack starts its own dev server.
   */
  temporalAddress?: string;
}

export interface BenchStack {
  /** The dev server the stack started (null when it runs on a given `temporalAddress`). */
  temporal: TestWorkflowEnvironment | null;
  temporalAddress: string;
  taskQueue: string;
  rawTaskQueue: string;
  serviceUrl: string;
  bridgeUrl: string | null;
  webhookSecret: string | null;
  endpointId: string | null;
  processes: Record<string, BenchProcess>;
  /** The route store the bridge and the worker share (`REELFLOW_ROUTE_STORE`). */
  routeStore: string;
  /** The service's clocks and counters (`GET /v1/admin/jobs`). */
  clocks(): Promise<{ jobs: JobClocks[]; counters: ServiceCounters }>;
  /** Deletes the webhook endpoint: later jobs complete without a delivery (polling fallback). */
  deleteEndpoint(): Promise<void>;
  stop(): Promise<void>;
}

/** Calls the service with the bench key; throws on an unexpected status. */
export async function serviceCall(
  url: string,
  method: 'GET' | 'POST' | 'PUT' | 'DELETE',
  route: string,
  body?: unknown,
  key = BENCH_API_KEY,
): Promise<Record<string, unknown>> {
  const expect = [200, 201, 202, 204];
  const response = await request(`${url}${route}`, {
    method,
    headers: { authorization: `Key ${key}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await response.body.text();
  if (!expect.includes(response.statusCode))
    throw new Error(`${method} ${route}: HTTP ${response.statusCode} ${text.slice(0, 500)}`);
  return text ? (JSON.parse(text) as Record<string, unknown>) : {};
}

/**
 * Builds what the bench stacks start, as `npm run build` does: dist/ (tsc, emit only: the type check
 * is CI's) and the pre-built workflow bundle.
 */
export function buildForBench(): void {
  execFileSync(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', 'tsconfig.build.json', '--noCheck'], {
    cwd: ROOT,
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  execFileSync(process.execPath, ['-r', 'tsx/cjs', path.join(ROOT, 'scripts', 'build-workflow-bundle.ts')], {
    cwd: ROOT,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}

/** Where the bench keeps pre-rendered stub fixtures between runs (rendered once, then hard-linked). */
export const FIXTURES_DIR = path.join(ROOT, '.bench', 'fixtures');

/**
 * Starts the Temporal dev server (unless `temporalAddress` names one that runs), then the local service (`reelflow service`, compiled), the webhook
 * bridge and the reelflow worker (their compiled production entry points, dist/workers/*.js, with the
 * pre-built workflow bundle) and the raw worker, each its own process.
 */
export async function startBenchStack(options: BenchStackOptions): Promise<BenchStack> {
  const processes: Record<string, BenchProcess> = {};
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), `reelflow-bench-${options.name}-`));
  const memory = options.serviceDataInMemory && fs.existsSync('/dev/shm') ? '/dev/shm' : null;
  const serviceDataDir = memory ? fs.mkdtempSync(path.join(memory, `reelflow-bench-${options.name}-`)) : dataDir;
  const taskQueue = `bench-${options.name}-${randomUUID().slice(0, 8)}`;
  const rawTaskQueue = `${taskQueue}-raw`;
  const temporal = options.temporalAddress ? null : await startDevServer({ searchAttributes: SEARCH_ATTRIBUTE_KEYS });
  const temporalAddress = options.temporalAddress ?? temporal!.address;
  const routeStore = `sqlite:${path.join(dataDir, 'routes.sqlite')}`;
  const stopAll = async () => {
    for (const p of Object.values(processes).reverse()) await p.stop();
    await temporal?.teardown();
    fs.rmSync(dataDir, { recursive: true, force: true });
    fs.rmSync(serviceDataDir, { recursive: true, force: true });
  };
  try {
    const service = await startProcess(
      `${options.name}-service`,
      process.execPath,
      [
        path.join(DIST, 'cli', 'main.js'),
        'service',
        '--data-dir',
        serviceDataDir,
        '--port',
        '0',
        '--api-key',
        BENCH_API_KEY,
        '--credits',
        '1000000000',
        '--allow-private-webhooks',
        '--concurrency',
        String(options.serviceConcurrency ?? 64),
        // Like its job concurrency, the service's quote rate limit is not what is measured (unless asked).
        ...(options.quotesPerMinute === 'default'
          ? []
          : ['--quotes-per-minute', String(options.quotesPerMinute ?? 1_000_000)]),
        '--render',
        options.render,
        ...(options.render === 'stub'
          ? ['--stub-hold-ms', String(options.stubHoldMs ?? 0), '--stub-fixtures', FIXTURES_DIR]
          : []),
      ],
      { ready: /listening on (http\S+)/, env: { ...process.env, REELFLOW_SERVICE_ADMIN_KEY: BENCH_ADMIN_KEY } },
    );
    processes.service = service;
    const serviceUrl = /listening on (http\S+)/.exec(service.output())![1]!;

    let bridgeUrl: string | null = null;
    let webhookSecret: string | null = null;
    let endpointId: string | null = null;
    if (options.bridge) {
      const port = await freePort();
      bridgeUrl = `http://127.0.0.1:${port}/webhooks`;
      const endpoint = await serviceCall(serviceUrl, 'POST', '/v1/webhooks/endpoints', { url: bridgeUrl });
      webhookSecret = String(endpoint.secret);
      endpointId = String(endpoint.id);
      processes.bridge = await startProcess(
        `${options.name}-bridge`,
        process.execPath,
        [path.join(DIST, 'workers', 'bridge.js')],
        {
          env: {
            ...process.env,
            REELFLOW_WEBHOOK_SECRETS: webhookSecret,
            TEMPORAL_ADDRESS: temporalAddress,
            REELFLOW_BRIDGE_PORT: String(port),
            REELFLOW_ROUTE_STORE: routeStore,
            REELFLOW_TASK_QUEUE: taskQueue,
            REELFLOW_SERVICE_URL: serviceUrl,
            REELFLOW_API_KEY: BENCH_API_KEY,
            REELFLOW_SERVICE_IDEMPOTENCY: benchServiceIdempotency(),
            REELFLOW_LOG_LEVEL: 'warn',
            ...options.bridgeEnv,
          },
          ready: /listening on/,
        },
      );
    }
    if (options.worker) {
      processes.worker = await startProcess(
        `${options.name}-worker`,
        process.execPath,
        [path.join(DIST, 'workers', 'worker.js')],
        {
          env: {
            ...process.env,
            TEMPORAL_ADDRESS: temporalAddress,
            REELFLOW_TASK_QUEUE: taskQueue,
            REELFLOW_SERVICE_URL: serviceUrl,
            REELFLOW_API_KEY: BENCH_API_KEY,
            REELFLOW_ROUTE_STORE: routeStore,
            REELFLOW_WORKFLOW_BUNDLE: path.join(DIST, 'workflow-bundle.js'),
            REELFLOW_SERVICE_IDEMPOTENCY: benchServiceIdempotency(),
            REELFLOW_LOG_LEVEL: 'warn',
            ...options.workerEnv,
          },
          ready: /reelflow worker: task queue/,
          timeoutMs: 120_000,
        },
      );
    }
    if (options.rawWorker) {
      const [cmd, args] = tsNode(path.join(__dirname, '..', 'procs', 'raw-worker.ts'));
      processes.rawWorker = await startProcess(`${options.name}-raw-worker`, cmd, args, {
        env: { ...process.env, TEMPORAL_ADDRESS: temporalAddress, BENCH_RAW_TASK_QUEUE: rawTaskQueue },
        ready: /raw worker ready/,
        timeoutMs: 120_000,
      });
    }
    return {
      temporal,
      temporalAddress,
      taskQueue,
      rawTaskQueue,
      serviceUrl,
      bridgeUrl,
      webhookSecret,
      endpointId,
      processes,
      routeStore,
      clocks: async () =>
        (await serviceCall(serviceUrl, 'GET', '/v1/admin/jobs', undefined, BENCH_ADMIN_KEY)) as unknown as {
          jobs: JobClocks[];
          counters: ServiceCounters;
        },
      deleteEndpoint: async () => {
        if (endpointId) await serviceCall(serviceUrl, 'DELETE', `/v1/webhooks/endpoints/${endpointId}`);
      },
      stop: stopAll,
    };
  } catch (error) {
    await stopAll();
    throw error;
  }
}

/** The environment of a `reelflow` CLI process against `stack`, its state (and default media store) under `stateDir`. */
export function cliEnv(stack: BenchStack, stateDir: string): NodeJS.ProcessEnv {
  return {
    ...process.env,
    TEMPORAL_ADDRESS: stack.temporalAddress,
    REELFLOW_TASK_QUEUE: stack.taskQueue,
    REELFLOW_SERVICE_URL: stack.serviceUrl,
    REELFLOW_API_KEY: BENCH_API_KEY,
    REELFLOW_STATE_DIR: stateDir,
  };
}
