import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ApplicationFailure, WorkflowFailedError, type Client, type WorkflowHandle } from '@temporalio/client';
import { request } from 'undici';
import { startLocalService, type InjectedFault, type JobView } from '../../src/local-service';
import { from, pipeline } from '../../src/pipeline-spec';
import { pipelineProgressQuery, pipelineWorkflowId } from '../../src/workflows/definitions';
import type { PipelineSummary } from '../../src/workflows/pipeline-types';
import { api, LONG_FORM, PIXEL_PNG, TEST_ADMIN_KEY, TEST_API_KEY } from '../helpers/local-service';
import { createServiceClient } from '../../src/client/service-client';
import { findOrphans, listPipelineClaims } from '../../src/cli/lib/orphans';
import { resolveAmbiguousUpdate } from '../../src/workflows/definitions';
import { freePort } from '../../src/stack/stack-state';
import { explainOutcomes, killsWithoutWork, workAtKills, type Kill } from './fault-explain';

/**
 * The fault run: N two-step pipelines at once against the real local service (child process),
 * the real webhook bridge (child process) and the real worker entry point (child process), under
 * the service's fault injection, while the worker is killed twice, the bridge once and the service
 * once, each kill while jobs are live. Everything is real: HTTP on loopback, a Temporal dev server,
 * ffmpeg renders.
 * The service's books are read back afterwards by opening its data directory in-process.
 */

const ROOT = path.join(__dirname, '..', '..');

/** Faults applied (and re-applied after the service restarts: faults are not durable). */
export const FAULTS = {
  failureRate: 0.1,
  modelDurationMs: 1500,
  dropDeliveryRate: 0.3,
  duplicateDeliveryRate: 0.3,
  deliveryDelayMs: 100,
  reorderDeliveries: true,
  submitErrorRate: 0.15,
  submitErrorStatus: 503 as 500 | 503 | 429,
  submitRetryAfterSeconds: 1,
  dropSubmitResponseRate: 0.1,
};

/** Resubmits each step of a fault pipeline may make. */
export const FAULT_MAX_RESUBMITS = 3;

export interface FaultRunFigures {
  pipelines: number;
  completed: number;
  failed: number;
  failureReasons: string[];
  faults: {
    jobsFailedByFault: number;
    jobsFailedByRestart: number;
    deliveriesDropped: number;
    deliveriesDuplicated: number;
    submitsAnswered5xxOr429: number;
    submitAnswersDroppedSeen: number;
    /** Submit answers the service dropped after creating the job (its log). */
    submitAnswersDropped: number;
  };
  /** Processes killed (SIGKILL) and restarted during the run, by name. */
  restarts: Record<string, number>;
  /** Faults the service reports it injected (its journal), by kind. */
  injected: Record<string, number>;
  /** Each pipeline's end with every fault on its path, from the service's books (printed). */
  explained: string[];
  /** Jobs in flight (submitted, not terminal, by the service's records) at each kill, by what was killed. */
  workAtKills: Record<string, number[]>;
  /** Kills that hit no work in flight (or, for the bridge, no delivery due while it was down). */
  killsWithoutWork: string[];
  /** Steps with more than one job whose credits were kept. */
  duplicatesFound: number;
  /** Idempotency keys that created more than one job. */
  keysWithTwoJobs: number;
  serviceJobs: number;
  /**
   * reelflowNet: sum of the pipelines' own ledgers. orphanedNet: net credits of jobs created by a submit
   * whose answer was dropped (AmbiguousSubmission): reelflow names their Idempotency-Key but never
   * learned their request id, so they are in no pipeline ledger. off = |completed − (reelflow + orphaned)|
   * + the service's own books checked against each other.
   */
  credits: {
    serviceCharged: number;
    serviceRefunded: number;
    completedJobsPrice: number;
    reelflowNet: number;
    orphanedNet: number;
    ledgerNet: number;
    off: number;
  };
  /** Jobs behind AmbiguousSubmission failures (key named in the failure), and how many of them were named. */
  orphans: { jobs: number; named: number; completed: number };
  missingOutputs: string[];
  unexplained: string[];
  /** Ambiguous steps the pipelines recorded, and the updates the run sent to resolve them (unknown mode). */
  ambiguous: { waited: number; adopted: number; resubmitted: number };
  /** Jobs the pipelines recorded as abandoned. */
  abandoned: number;
  /** Charged jobs `reelflow orphans` (findOrphans) listed at the end, and orphan jobs it did not list. */
  orphansReported: number;
  orphansNotReported: string[];
  seconds: number;
  /** Every line the service, bridge and worker printed (scanned for secrets). */
  logs: string;
  /** Secrets that must never appear in `logs`. */
  secrets: string[];
}

/** A child process of the run. */
export interface Child {
  child: ChildProcess;
  exited: Promise<void>;
  kill(signal?: NodeJS.Signals): Promise<void>;
}

/** Spawns a child, collecting its output into `sink`, resolving once `ready` matches its output. */
export async function spawnChild(
  args: string[],
  env: NodeJS.ProcessEnv,
  ready: RegExp,
  sink: { text: string },
  label: string,
): Promise<Child> {
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let own = '';
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${label} did not start:\n${own}`)), 90_000);
    const onData = (chunk: Buffer) => {
      const text = chunk.toString();
      own += text;
      sink.text += text;
      if (ready.test(own)) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${label} exited with ${code}:\n${own}`));
    });
  });
  return {
    child,
    exited,
    kill: async (signal = 'SIGKILL') => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      await exited;
    },
  };
}

/**
 * Environment of a worker process of a fault run (the fault suite and the cluster run alike): the
 * local service honours Idempotency-Key, so by default the worker is told so (docs/submit-policy.md).
 */
export function faultWorkerEnvironment(o: {
  temporalAddress: string;
  namespace?: string;
  taskQueue: string;
  serviceUrl: string;
  idempotency?: 'honoured' | 'unknown';
  /** REELFLOW_ROUTE_STORE shared with the bridges; default faultRouteStore(taskQueue). */
  routeStore?: string;
}): NodeJS.ProcessEnv {
  return {
    REELFLOW_ROUTE_STORE: o.routeStore ?? faultRouteStore(o.taskQueue),
    TEMPORAL_ADDRESS: o.temporalAddress,
    TEMPORAL_NAMESPACE: o.namespace ?? 'default',
    REELFLOW_TASK_QUEUE: o.taskQueue,
    REELFLOW_SERVICE_URL: o.serviceUrl,
    REELFLOW_API_KEY: TEST_API_KEY,
    REELFLOW_SERVICE_IDEMPOTENCY: o.idempotency ?? 'honoured',
    // Each run's build is made current (a cluster keeps the versions of earlier runs).
    REELFLOW_SET_CURRENT_VERSION: 'true',
  };
}

/** The route store the workers and bridges of one fault run share: an SQLite file per task queue in the temporary folder. */
export function faultRouteStore(taskQueue: string): string {
  return `sqlite:${path.join(os.tmpdir(), `reelflow-fault-routes-${taskQueue.replace(/[^\w.-]/g, '_')}.sqlite`)}`;
}

/** Environment of a bridge process of a fault run. */
export function faultBridgeEnvironment(o: {
  temporalAddress: string;
  namespace?: string;
  secret: string;
  port: number;
  taskQueue: string;
  /** REELFLOW_ROUTE_STORE shared with the workers; default faultRouteStore(taskQueue). */
  routeStore?: string;
}): NodeJS.ProcessEnv {
  return {
    REELFLOW_ROUTE_STORE: o.routeStore ?? faultRouteStore(o.taskQueue),
    REELFLOW_WEBHOOK_SECRETS: o.secret,
    TEMPORAL_ADDRESS: o.temporalAddress,
    ...(o.namespace ? { TEMPORAL_NAMESPACE: o.namespace } : {}),
    REELFLOW_BRIDGE_PORT: String(o.port),
  };
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Runs the whole fault scenario with `count` pipelines; returns the figures (assertions are the caller's). */
export async function runFaultSuite(options: {
  client: Client;
  temporalAddress: string;
  count: number;
  idempotency?: 'honoured' | 'unknown';
  log?: (line: string) => void;
}): Promise<FaultRunFigures> {
  const started = Date.now();
  const log = options.log ?? (() => undefined);
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'reelflow-faults-'));
  const taskQueue = `faults-${process.pid}-${Date.now()}`;
  const [servicePort, bridgePort] = [await freePort(), await freePort()];
  const serviceUrl = `http://127.0.0.1:${servicePort}`;
  const logs = { text: '' };
  const children = new Set<Child>();
  const restarts = { worker: 0, bridge: 0, service: 0 };
  const kills: Kill[] = [];
  const running: Partial<Record<Kill['what'], Child>> = {};
  /** SIGKILLs a child, keeps it down `downMs`, starts its replacement and records the kill's instants. */
  const killAndRestart = async (
    what: Kill['what'],
    downMs: number,
    start: () => Promise<Child>,
    minInFlight = 1,
  ): Promise<void> => {
    // A kill must hit work: wait (bounded) until the service reports jobs rendering for open pipelines.
    const inFlight = await waitForJobsInFlight(run, serviceUrl, minInFlight);
    log(`killing the ${what} (${inFlight} job(s) live at the service)`);
    const at = Date.now();
    await running[what]?.kill();
    restarts[what] += 1;
    if (downMs > 0) await sleep(downMs);
    running[what] = await start();
    kills.push({ what, at, back: Date.now() });
  };

  const serviceArgs = [
    path.join(ROOT, 'bin', 'reelflow.js'),
    'service',
    '--data-dir',
    dataDir,
    '--port',
    String(servicePort),
    '--api-key',
    TEST_API_KEY,
    '--admin-key',
    TEST_ADMIN_KEY,
    '--allow-private-webhooks',
    '--concurrency',
    '4',
    '--log',
  ];
  const startService = async () => {
    const c = await spawnChild(serviceArgs, {}, /listening on/, logs, 'service');
    children.add(c);
    const response = await api(serviceUrl, 'PUT', '/v1/admin/faults', { body: FAULTS, key: TEST_ADMIN_KEY });
    if (response.status !== 200)
      throw new Error(`setting faults: HTTP ${response.status} ${JSON.stringify(response.body)}`);
    return c;
  };
  running.service = await startService();
  const registered = await api(serviceUrl, 'POST', '/v1/webhooks/endpoints', {
    body: { url: `http://127.0.0.1:${bridgePort}/webhooks` },
  });
  if (registered.status !== 201)
    throw new Error(`webhook registration: HTTP ${registered.status} ${JSON.stringify(registered.body)}`);
  const secret = String(registered.body.secret);

  const startBridge = async () => {
    const c = await spawnChild(
      ['-r', 'tsx/cjs', path.join(ROOT, 'src', 'workers', 'bridge.ts')],
      faultBridgeEnvironment({ temporalAddress: options.temporalAddress, secret, port: bridgePort, taskQueue }),
      /listening on/,
      logs,
      'bridge',
    );
    children.add(c);
    return c;
  };
  const startWorker = async () => {
    const c = await spawnChild(
      ['-r', 'tsx/cjs', path.join(ROOT, 'src', 'workers', 'worker.ts')],
      faultWorkerEnvironment({
        temporalAddress: options.temporalAddress,
        taskQueue,
        serviceUrl,
        ...(options.idempotency ? { idempotency: options.idempotency } : {}),
      }),
      /reelflow worker: task queue/,
      logs,
      'worker',
    );
    children.add(c);
    return c;
  };
  [running.bridge, running.worker] = await Promise.all([startBridge(), startWorker()]);

  let run: FaultPipelines | undefined;
  let resolving: { stop(): Promise<Resolutions> } | undefined;
  let resolutions: Resolutions = { adopted: 0, resubmitted: 0 };
  try {
    run = await startFaultPipelines({ client: options.client, taskQueue, serviceUrl, count: options.count });
    if (options.idempotency === 'unknown') resolving = resolveAmbiguousSteps(run, serviceUrl);
    // The chaos schedule: each kill waits until jobs are live (not a fixed time, so a short run
    // is not over before its kills), and is checked afterwards to have hit work in flight by the
    // service's records at its instant. Kills are SIGKILL: no graceful shutdown. The worker's
    // restarts come last: a new worker takes seconds to start, in which the run would drain.
    await sleep(3_000);
    // Several live jobs at the kill, so some end (and are delivered, 30 % are dropped) while the bridge is down.
    await killAndRestart('bridge', 3_000, startBridge, 3);
    await killAndRestart('service', 2_000, startService);
    // 429s after the restart (503s before).
    await api(serviceUrl, 'PUT', '/v1/admin/faults', { body: { submitErrorStatus: 429 }, key: TEST_ADMIN_KEY });
    await killAndRestart('worker', 0, startWorker);
    await killAndRestart('worker', 0, startWorker);

    await run.settled;
    if (resolving) resolutions = await resolving.stop();
  } finally {
    for (const c of children) await c.kill();
  }
  return collectFaultFigures({
    client: options.client,
    dataDir,
    serviceUrl,
    run,
    logs: logs.text,
    restarts,
    kills,
    secrets: [secret, TEST_API_KEY, TEST_ADMIN_KEY],
    started,
    resolutions,
    idempotency: options.idempotency ?? 'honoured',
  });
}

/**
 * Waits (at most a minute) until at least `min` jobs of open pipelines are live (queued or rendering) at the
 * service, by its status endpoint for the request ids the pipelines' progress names; returns how many
 * were. The kill then follows at once; the suite checks afterwards, from the service's records, that
 * it really hit work.
 */
async function waitForJobsInFlight(run: FaultPipelines | undefined, serviceUrl: string, min: number): Promise<number> {
  if (!run) return 0;
  const deadline = Date.now() + 60_000;
  let best = 0;
  while (Date.now() < deadline) {
    const open = run.handles.filter((_, i) => !run.results.some((r) => r.name === run.names[i]));
    const progress = await Promise.all(open.map((h) => h.query(pipelineProgressQuery).catch(() => null)));
    const live = progress.flatMap(
      (p) =>
        p?.steps.flatMap((s) =>
          (s.attemptLog ?? []).filter((a) => a.requestId && !a.outcome).map((a) => a.requestId!),
        ) ?? [],
    );
    const states = await Promise.all(
      live.map((id) =>
        api(serviceUrl, 'GET', `/v1/queue/requests/${id}/status`).then(
          (r) => r.body?.status as string | undefined,
          () => undefined,
        ),
      ),
    );
    best = states.filter((s) => s === 'IN_PROGRESS' || s === 'IN_QUEUE').length;
    if (best >= min || open.length === 0) return best;
    await sleep(200);
  }
  return best;
}

/** Updates the operator stand-in sent. */
export interface Resolutions {
  adopted: number;
  resubmitted: number;
}

/**
 * An operator stand-in (unknown mode): every second, each open pipeline with an ambiguous step
 * waiting gets the `resolveAmbiguousStep` update — adopt the job its key created (the local
 * service's key lookup), or resubmit when the key created nothing.
 */
export function resolveAmbiguousSteps(run: FaultPipelines, serviceUrl: string): { stop(): Promise<Resolutions> } {
  const counts: Resolutions = { adopted: 0, resubmitted: 0 };
  const decided = new Set<string>();
  let going = true;
  const resolveOne = async (handle: FaultPipelines['handles'][number]) => {
    const progress = await handle.query(pipelineProgressQuery).catch(() => null);
    const waiting =
      progress?.status === 'running' ? progress.recovery?.ambiguous.find((a) => a.state === 'waiting') : undefined;
    // One decision per ambiguity: after a resubmit the same key may become ambiguous again (a new record).
    const ambiguity = `${waiting?.idempotencyKey}|${waiting?.since}`;
    if (!waiting || decided.has(ambiguity)) return;
    const found = await api(
      serviceUrl,
      'GET',
      `/v1/queue/requests?idempotency_key=${encodeURIComponent(waiting.idempotencyKey)}`,
    ).catch(() => null);
    if (!found || found.status !== 200) return;
    const requestId = found.body.requests[0]?.request_id as string | undefined;
    const decision = requestId
      ? { step: waiting.step, action: 'adopt' as const, requestId }
      : { step: waiting.step, action: 'resubmit' as const };
    try {
      await handle.executeUpdate(resolveAmbiguousUpdate, { args: [decision] });
      decided.add(ambiguity);
      counts[requestId ? 'adopted' : 'resubmitted'] += 1;
    } catch {
      // Rejected (already resolved) or no worker right now: the next round looks again.
    }
  };
  const loop = (async () => {
    while (going) {
      await sleep(1_000);
      await Promise.all(
        run.handles.filter((_, i) => !run.results.some((r) => r.name === run.names[i])).map(resolveOne),
      );
    }
  })();
  return {
    stop: async () => {
      going = false;
      await loop;
      return counts;
    },
  };
}

/** One pipeline's end: its summary (from the result, the failure's details or a query) and failure text. */
export interface PipelineOutcome {
  name: string;
  summary: PipelineSummary | null;
  error: string | null;
  /** When the outcome was seen (ms since epoch). */
  at: number;
}

/** Pipelines started by `startFaultPipelines`; `settled` resolves when every one has ended. */
export interface FaultPipelines {
  names: string[];
  handles: WorkflowHandle[];
  results: PipelineOutcome[];
  settled: Promise<void>;
}

/**
 * Starts `count` two-step pipelines (long-form generate, then upscale of its output) on `taskQueue`,
 * each step allowed 3 resubmits, and collects how each ends. Used by the fault suite and by the
 * cluster run (test/cluster), so both drive reelflow the same way.
 */
export async function startFaultPipelines(options: {
  client: Client;
  taskQueue: string;
  serviceUrl: string;
  count: number;
}): Promise<FaultPipelines> {
  const { serviceUrl, taskQueue } = options;
  const names = Array.from({ length: options.count }, (_, i) => `faults-${taskQueue}-${i}`);
  const results: PipelineOutcome[] = [];
  const handles = await Promise.all(
    names.map((name) => {
      const spec = pipeline(name)
        .step(
          'generate',
          LONG_FORM,
          { image_urls: [PIXEL_PNG], duration: '4', resolution: '480p' },
          { maxResubmits: FAULT_MAX_RESUBMITS },
        )
        .step(
          'upscale',
          'service-upscale-video-fast',
          { video_url: from('generate') },
          { maxResubmits: FAULT_MAX_RESUBMITS },
        )
        .build({ allowedOrigins: [serviceUrl] });
      return options.client.workflow.start('pipelineWorkflow', {
        taskQueue,
        workflowId: pipelineWorkflowId(name),
        args: [
          {
            spec,
            uriRules: { allowedOrigins: [serviceUrl] },
            defaultPacing: { firstPollSeconds: 2, factor: 2, capSeconds: 4 },
            submitTimeoutSeconds: 5,
          },
        ],
      });
    }),
  );
  const outcomes = handles.map((handle, i) =>
    handle.result().then(
      (summary: PipelineSummary) => results.push({ name: names[i]!, summary, error: null, at: Date.now() }),
      async (error: unknown) => {
        const cause =
          error instanceof WorkflowFailedError
            ? `${error.cause?.message ?? ''} ${(error.cause?.cause as Error | undefined)?.message ?? ''}`
            : String(error);
        // The pipeline's failure carries its summary; a query of the closed workflow needs a live
        // worker to replay it, which the chaos schedule may have just killed.
        const carried =
          error instanceof WorkflowFailedError && error.cause instanceof ApplicationFailure
            ? (error.cause.details?.[0] as PipelineSummary | undefined)
            : undefined;
        const summary = carried?.steps ? carried : await handle.query(pipelineProgressQuery).catch(() => null);
        results.push({ name: names[i]!, summary, error: cause, at: Date.now() });
      },
    ),
  );

  return { names, handles, results, settled: Promise.all(outcomes).then(() => undefined) };
}

/**
 * Reads the service's books from its data directory (the service process must be stopped) and
 * checks them against the pipelines' own ledgers: duplicates, credits, orphans, outputs.
 */
export async function collectFaultFigures(input: {
  /** Temporal, for the pipelines' claims `reelflow orphans` compares the ledger with. */
  client: Client;
  dataDir: string;
  serviceUrl: string;
  run: FaultPipelines;
  logs: string;
  restarts: Record<string, number>;
  /** The kills of the run with their instants (checked to have hit work in flight). */
  kills?: Kill[];
  secrets: string[];
  started: number;
  resolutions?: Resolutions;
  idempotency?: 'honoured' | 'unknown';
}): Promise<FaultRunFigures> {
  const { dataDir, serviceUrl, restarts, started } = input;
  const results = input.run.results;
  const logs = { text: input.logs };

  // Read the service's books from its data directory.
  const books = await startLocalService({
    dataDir,
    apiKeys: [TEST_API_KEY],
    adminKey: TEST_ADMIN_KEY,
    allowPrivateWebhooks: true,
    port: 0,
  });
  let jobs: JobView[];
  let injected: InjectedFault[];
  let deliveries: ReturnType<typeof books.deliveries>;
  let ledgerNet: number;
  const missingOutputs: string[] = [];
  let orphanReport: Awaited<ReturnType<typeof findOrphans>>;
  try {
    jobs = books.jobs();
    // What an operator runs afterwards: `reelflow orphans` over the whole run.
    const booksClient = createServiceClient({ baseUrl: books.url, apiKey: TEST_API_KEY });
    try {
      const since = new Date(started - 60_000);
      orphanReport = await findOrphans(booksClient, await listPipelineClaims(input.client, since), since);
    } finally {
      await booksClient.close();
    }
    deliveries = books.deliveries();
    // The faults it injected, as the service reports them over HTTP (journalled as each fired).
    const reported = await api(books.url, 'GET', '/v1/admin/faults/injected', { key: TEST_ADMIN_KEY });
    if (reported.status !== 200)
      throw new Error(`injected faults: HTTP ${reported.status} ${JSON.stringify(reported.body)}`);
    injected = reported.body.faults as InjectedFault[];
    ledgerNet = -books
      .ledger()
      .filter((e) => e.kind !== 'seed' && e.requestId !== null)
      .reduce((sum, e) => sum + e.amount, 0);
    for (const r of results) {
      if (r.summary?.status !== 'completed') continue;
      for (const output of Object.values(r.summary.outputs)) {
        for (const video of 'videos' in output ? output.videos : []) {
          const url = video.url.replace(serviceUrl, books.url);
          const response = await request(url);
          await response.body.dump();
          if (response.statusCode !== 200) missingOutputs.push(`${r.name}: ${video.url} → ${response.statusCode}`);
        }
      }
    }
  } finally {
    await books.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }

  const byKey = new Map<string, JobView[]>();
  const byStep = new Map<string, JobView[]>();
  for (const job of jobs) {
    const key = job.idempotencyKey ?? `none:${job.id}`;
    byKey.set(key, [...(byKey.get(key) ?? []), job]);
    const step = /^reelflow:(.+):[^:]+:\d+$/.exec(key)?.[1] ?? key;
    byStep.set(step, [...(byStep.get(step) ?? []), job]);
  }
  const billed = (j: JobView) => j.creditsCharged - j.creditsRefunded > 0;
  const serviceCharged = jobs.reduce((s, j) => s + j.creditsCharged, 0);
  const serviceRefunded = jobs.reduce((s, j) => s + j.creditsRefunded, 0);
  const completedJobsPrice = jobs.filter((j) => j.status === 'COMPLETED').reduce((s, j) => s + j.creditsCharged, 0);
  const reelflowNet = results.reduce((s, r) => s + (r.summary?.ledger.net ?? 0), 0);
  const namedKeys = new Set(
    results.flatMap((r) => [...`${r.error ?? ''}`.matchAll(/Idempotency-Key (reelflow:\S+)/g)].map((m) => m[1]!)),
  );
  const known = new Set(results.flatMap((r) => r.summary?.steps.flatMap((s) => s.requestIds) ?? []));
  const orphanJobs = jobs.filter((j) => !known.has(j.id));
  const orphanedNet = orphanJobs.reduce((s, j) => s + j.creditsCharged - j.creditsRefunded, 0);
  const kills = input.kills ?? [];
  const serviceBooks = { jobs, deliveries, faults: injected };
  const explanation = explainOutcomes(results, serviceBooks, {
    maxResubmits: FAULT_MAX_RESUBMITS,
    idempotency: input.idempotency ?? 'honoured',
    kills,
  });
  // Pipelines that never ended are unexplained too.
  const unexplained = [
    ...explanation.unexplained,
    ...input.run.names.filter((n) => !results.some((r) => r.name === n)).map((n) => `${n}: never ended`),
  ];
  const injectedByKind: Record<string, number> = {};
  for (const f of injected) injectedByKind[f.kind] = (injectedByKind[f.kind] ?? 0) + 1;

  return {
    pipelines: input.run.names.length,
    completed: results.filter((r) => r.summary?.status === 'completed').length,
    failed: results.filter((r) => r.summary?.status !== 'completed').length,
    failureReasons: results
      .filter((r) => r.error)
      .map((r) => `${r.name.replace(/^faults-[^-]+-\d+-\d+-/, '#')}: ${r.error!.trim()}`),
    faults: {
      jobsFailedByFault: jobs.filter((j) => j.error?.code === 'generation_failed').length,
      jobsFailedByRestart: jobs.filter((j) => j.error?.code === 'service_restarted').length,
      deliveriesDropped: deliveries.filter((d) => d.state === 'dropped').length,
      deliveriesDuplicated: deliveries.filter((d) => d.duplicate).length,
      // Counted from the service's request log (every injected answer is a 503 or 429 there).
      submitsAnswered5xxOr429: (logs.text.match(/"statusCode":(503|429)/g) ?? []).length,
      // Each dropped answer ends its step as AmbiguousSubmission (the workflow does not resubmit it).
      submitAnswersDroppedSeen: results.filter((r) => /AmbiguousSubmission/.test(r.error ?? '')).length,
      // Counted from the service's log: each dropped answer is logged when the fault fires.
      submitAnswersDropped: (logs.text.match(/fault injection: submit answer dropped/g) ?? []).length,
    },
    restarts,
    injected: injectedByKind,
    explained: explanation.explained,
    workAtKills: workAtKills(kills, serviceBooks),
    killsWithoutWork: killsWithoutWork(kills, serviceBooks),
    duplicatesFound: [...byStep.values()].filter((group) => group.filter(billed).length > 1).length,
    keysWithTwoJobs: [...byKey.values()].filter((group) => group.length > 1).length,
    serviceJobs: jobs.length,
    credits: {
      serviceCharged,
      serviceRefunded,
      completedJobsPrice,
      reelflowNet,
      ledgerNet,
      orphanedNet,
      off:
        Math.abs(serviceCharged - serviceRefunded - completedJobsPrice) +
        Math.abs(reelflowNet + orphanedNet - completedJobsPrice) +
        Math.abs(ledgerNet - completedJobsPrice),
    },
    orphans: {
      jobs: orphanJobs.length,
      named: orphanJobs.filter((j) => j.idempotencyKey !== null && namedKeys.has(j.idempotencyKey)).length,
      completed: orphanJobs.filter((j) => j.status === 'COMPLETED').length,
    },
    missingOutputs,
    unexplained,
    ambiguous: {
      ...(input.resolutions ?? { adopted: 0, resubmitted: 0 }),
      waited: results.reduce((n, r) => n + (r.summary?.recovery?.ambiguous.length ?? 0), 0),
    },
    abandoned: results.reduce((n, r) => n + (r.summary?.recovery?.abandoned.length ?? 0), 0),
    orphansReported: orphanReport.orphans.length,
    orphansNotReported: orphanJobs
      .filter((j) => !orphanReport.orphans.some((o) => o.request_id === j.id))
      .map((j) => j.id),
    seconds: Math.round((Date.now() - started) / 1000),
    logs: logs.text,
    secrets: input.secrets,
  };
}

/**
 * The books balance to the credit: the service's charges less refunds = the price of its completed
 * jobs = its ledger = reelflow's ledgers + the orphaned jobs. Jobs reelflow does not know by request id
 * are exactly those behind an AmbiguousSubmission failure, each named by its Idempotency-Key in that
 * failure so an operator can reconcile it. (Jest assertions: for the fault suite and the cluster run.)
 */
export function expectLedgersAgree(figures: FaultRunFigures): void {
  const c = figures.credits;
  expect(c.serviceCharged - c.serviceRefunded).toBe(c.completedJobsPrice);
  expect(c.ledgerNet).toBe(c.completedJobsPrice);
  expect(figures.orphans.named).toBe(figures.orphans.jobs);
  expect(c.reelflowNet + c.orphanedNet).toBe(c.completedJobsPrice);
  expect(c.off).toBe(0);
}
