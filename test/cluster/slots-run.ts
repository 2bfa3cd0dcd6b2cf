import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client, Connection, WorkflowFailedError, TerminatedFailure, type WorkflowHandle } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { startLocalService, type JobView } from '../../src/local-service';
import { from, pipeline } from '../../src/pipeline-spec';
import { openPostgresRouteStore, type RouteStore } from '../../src/routing';
import { SLOT_STATE, type SlotLogEntry, type SlotSnapshot, type SlotStore } from '../../src/routing/slot-store';
import { freePort } from '../../src/stack/stack-state';
import { pipelineWorkflowId } from '../../src/workflows/definitions';
import { SLOT_REAPER_EVERY_MS } from '../../src/workers/worker';
import { faultBridgeEnvironment, faultWorkerEnvironment, sleep, type Child } from '../faults/fault-run';
import { maxJobsInFlight } from '../helpers/jobs-in-flight';
import { api, LONG_FORM, PIXEL_PNG, TEST_ADMIN_KEY, TEST_API_KEY } from '../helpers/local-service';
import { startProxy } from '../helpers/round-robin-proxy';
import { processGroup, type Entry, type ProcessGroup } from './processes';

/**
 * The account's slots across processes: the local service (stub renders held 1 s, many jobs at once
 * per model, so reelflow's caps are the only limit), two `reelflow worker` and two bridge processes on
 * one PostgreSQL route store, the same caps on both workers. Two-step pipelines keep waiters queued;
 * one worker is SIGKILLed (not restarted) while it runs activities of pipelines holding slots, and a
 * pipeline holding a slot is terminated, so its slot leaks until a reaper frees it. The figures come
 * from the service's own job records and the route store's slot tables; assertions are the caller's.
 */

export const UPSCALE = 'service-upscale-video-fast';
/** The caps told to both workers: the account's (3) binds below the two models' together (2 + 2). */
export const SLOTS_CAPS = { account: 3, perModel: 2 } as const;
/** A slot granted this long ago is looked at by the reaper (AccountSlots' default). */
export const REAP_AFTER_MS = 30_000;
/** Answer delay of the service's API: submits stay in flight long enough for the kill to hit one. */
const RESPONSE_DELAY_MS = 300;

export interface SlotsRunOptions {
  temporalAddress: string;
  namespace: string;
  /** REELFLOW_ROUTE_STORE of every worker and bridge: one PostgreSQL database. */
  routeStore: string;
  /** Compiled processes (dist/) or the TypeScript through tsx. */
  entry: Entry;
  /** REELFLOW_WORKFLOW_BUNDLE of the workers. */
  workflowBundle: string;
  /** Two-step pipelines started at once (default 16). */
  pipelines?: number;
  log?: (line: string) => void;
}

/** The SIGKILLed worker. */
export interface KillFigures {
  atSeconds: number;
  /** Slots in use and jobs waiting for one (the store) at the kill. */
  slotsHeld: number;
  waiting: number;
  /** Activities of open pipelines running on the killed worker at the kill (Temporal's describe). */
  activitiesOnWorker: number;
  /** Jobs in flight at the service at the kill (its records). */
  jobsInFlight: number;
  restarted: false;
}

/**
 * The slot leaked on purpose: a pipeline holding one is terminated (no settle gives it back; its job's
 * terminal webhook lets a bridge free it), and a slot its run took for a submit that never went out (a
 * worker that died between the two) — no job names that one: only the reaper frees it.
 */
export interface LeakFigures {
  workflowId: string;
  /** The slot of the submit that never went out. */
  holder: string;
  grantedAt: number;
  closedAt: number;
  /** The slot was still held once the run was closed: the leak was real. */
  heldAfterClose: boolean;
  /** From the slot log; null: never freed. */
  releasedAt: number | null;
  /** The reaper's bound: the later of grant + 30 s and the close, plus one sweep. */
  boundAt: number;
}

/** How the slot tables emptied after the last run closed. */
export interface DrainFigures {
  lastCloseAt: number;
  /** First instant seen with nothing held and nothing waiting; null: not within the wait. */
  emptyAt: number | null;
  /** The bound for every slot: the later of the last grant + 30 s and the last close, plus one sweep. */
  boundAt: number;
  snapshot: SlotSnapshot;
}

export interface SlotsRunFigures {
  pipelines: number;
  completed: number;
  terminated: number;
  /** Pipelines that ended otherwise, with why. */
  other: string[];
  jobs: number;
  /** Most jobs in flight at once at the service: in all, and by model. */
  maxInFlight: { all: number; byModel: Record<string, number> };
  keysSubmittedTwice: string[];
  /** Grants the slot log recorded during the run. */
  grants: number;
  kill: KillFigures;
  leak: LeakFigures;
  drain: DrainFigures;
  seconds: number;
  /** Every line the processes printed. */
  logs: string;
}

const modelCaps = () => `${LONG_FORM}=${SLOTS_CAPS.perModel},${UPSCALE}=${SLOTS_CAPS.perModel}`;

/** Runs the scenario on the Temporal server at `options.temporalAddress`; returns its figures. */
export async function runSlotsScenario(options: SlotsRunOptions): Promise<SlotsRunFigures> {
  const log = options.log ?? (() => undefined);
  const count = options.pipelines ?? 16;
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'reelflow-slots-service-'));
  const group = processGroup(options.entry);
  const started = Date.now();
  const connection = await Connection.connect({ address: options.temporalAddress });
  let store: RouteStore | null = null;
  let proxy: Awaited<ReturnType<typeof startProxy>> | null = null;
  try {
    const client = new Client({ connection, namespace: options.namespace });
    const taskQueue = `slots-${process.pid}-${Date.now()}`;
    const stack = await startStack(group, options, taskQueue, dataDir);
    proxy = stack.proxy;
    log('service, two bridges and two workers up');
    store = openPostgresRouteStore(options.routeStore);
    const slots = store.slots;
    const firstSeq = await lastSeq(slots);
    const pipelinesStarted = Date.now();
    const handles = await startSlotPipelines(client, taskQueue, stack.serviceUrl, count);
    const ends = handles.map((handle) => outcomeOf(handle));
    const killed = await killBusyWorker(slots, handles, stack.workers, log);
    const leak = await leakSlot(slots, handles, log);
    const outcomes = await Promise.all(ends);
    const lastCloseAt = Math.max(...outcomes.map((o) => o.at));
    log(`all ${count} pipelines ended; waiting for the slot tables to empty`);
    const lastGrantAt = Math.max(...(await logAfter(slots, firstSeq)).map((g) => g.grantedAt));
    const drain = await waitForEmpty(slots, lastCloseAt, lastGrantAt);
    const grants = await logAfter(slots, firstSeq);
    leak.releasedAt = grants.find((g) => g.holder === leak.holder)?.releasedAt ?? null;
    const since = (from: number, to: number | null) => (to === null ? 'never' : `${((to - from) / 1000).toFixed(1)} s`);
    log(
      `leaked slot freed ${since(leak.grantedAt, leak.releasedAt)} after its grant (bound ${since(leak.grantedAt, leak.boundAt)}); ` +
        `tables empty ${since(lastCloseAt, drain.emptyAt)} after the last close (bound ${since(lastCloseAt, drain.boundAt)})`,
    );
    await group.stopAll();
    const jobs = await readJobs(dataDir);
    const { at, ...kill } = killed;
    return {
      pipelines: count,
      completed: outcomes.filter((o) => o.status === 'completed').length,
      terminated: outcomes.filter((o) => o.status === 'terminated').length,
      other: outcomes.filter((o) => o.status !== 'completed' && o.status !== 'terminated').map((o) => o.status),
      ...jobFigures(jobs),
      grants: grants.length,
      kill: {
        ...kill,
        atSeconds: Math.round((at - pipelinesStarted) / 100) / 10,
        jobsInFlight: jobs.filter((j) => j.submittedAt <= at && (j.completedAt ?? Infinity) > at).length,
        restarted: false,
      },
      leak,
      drain,
      seconds: Math.round((Date.now() - started) / 1000),
      logs: group.logs.text,
    };
  } catch (error) {
    // What the processes printed says why a run went wrong; the figures that carry it are not returned.
    log(`failed; the processes printed:\n${group.logs.text.slice(-20_000)}`);
    throw error;
  } finally {
    await group.stopAll();
    await proxy?.close();
    await store?.close();
    await connection.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

/** The service, two bridges behind one webhook address, and two workers with the same caps. */
async function startStack(group: ProcessGroup, options: SlotsRunOptions, taskQueue: string, dataDir: string) {
  const [servicePort, ...bridgePorts] = [await freePort(), await freePort(), await freePort()];
  const serviceUrl = `http://127.0.0.1:${servicePort}`;
  await group.start(
    'local-service',
    {
      REELFLOW_SERVICE_PORT: String(servicePort),
      REELFLOW_SERVICE_DATA_DIR: dataDir,
      REELFLOW_SERVICE_API_KEYS: TEST_API_KEY,
      REELFLOW_SERVICE_ADMIN_KEY: TEST_ADMIN_KEY,
      REELFLOW_SERVICE_ALLOW_PRIVATE_WEBHOOKS: 'true',
      // Far above reelflow's caps: the service never queues, so what it shows in flight is what reelflow sent.
      REELFLOW_SERVICE_CONCURRENCY: '16',
      REELFLOW_SERVICE_RENDER: 'stub',
      REELFLOW_SERVICE_STUB_HOLD_MS: '1000',
    },
    'service',
  );
  const faults = await api(serviceUrl, 'PUT', '/v1/admin/faults', {
    body: { responseDelayMs: RESPONSE_DELAY_MS },
    key: TEST_ADMIN_KEY,
  });
  if (faults.status !== 200) throw new Error(`setting faults: HTTP ${faults.status} ${JSON.stringify(faults.body)}`);
  const proxy = await startProxy(() => bridgePorts.map((port) => `http://127.0.0.1:${port}`));
  const registered = await api(serviceUrl, 'POST', '/v1/webhooks/endpoints', { body: { url: proxy.url } });
  if (registered.status !== 201)
    throw new Error(`webhook registration: HTTP ${registered.status} ${JSON.stringify(registered.body)}`);
  const common = { temporalAddress: options.temporalAddress, namespace: options.namespace, taskQueue };
  // Every worker and bridge is told the same caps, as docker-compose.yml tells them: the bridges free a
  // finished job's slot at its webhook, the workers at the pipeline's settle.
  const caps = { REELFLOW_ACCOUNT_CONCURRENCY: String(SLOTS_CAPS.account), REELFLOW_MODEL_CONCURRENCY: modelCaps() };
  const bridge = (index: number) =>
    group.start(
      'bridge',
      {
        ...faultBridgeEnvironment({
          ...common,
          secret: String(registered.body.secret),
          port: bridgePorts[index]!,
          routeStore: options.routeStore,
        }),
        ...caps,
      },
      `bridge-${index + 1}`,
    );
  const worker = (index: number) =>
    group.start(
      'worker',
      {
        ...faultWorkerEnvironment({ ...common, serviceUrl, routeStore: options.routeStore }),
        REELFLOW_WORKFLOW_BUNDLE: options.workflowBundle,
        ...caps,
      },
      `worker-${index + 1}`,
    );
  await Promise.all([bridge(0), bridge(1)]);
  const workers = await Promise.all([worker(0), worker(1)]);
  return { serviceUrl, proxy, workers };
}

/** `count` two-step pipelines (long-form, then upscale), started at once. */
async function startSlotPipelines(
  client: Client,
  taskQueue: string,
  serviceUrl: string,
  count: number,
): Promise<WorkflowHandle[]> {
  return Promise.all(
    Array.from({ length: count }, (_, i) => {
      const name = `slots-${taskQueue}-${i}`;
      const spec = pipeline(name)
        .step('generate', LONG_FORM, { image_urls: [PIXEL_PNG], duration: '4', resolution: '480p' })
        .step('upscale', UPSCALE, { video_url: from('generate') })
        .build({ allowedOrigins: [serviceUrl] });
      return client.workflow.start('pipelineWorkflow', {
        taskQueue,
        workflowId: pipelineWorkflowId(name),
        args: [{ spec, uriRules: { allowedOrigins: [serviceUrl] }, submitTimeoutSeconds: 5 }],
      });
    }),
  );
}

interface Outcome {
  status: string;
  at: number;
}

/** How a pipeline ended: `completed`, `terminated`, or the failure's message. */
async function outcomeOf(handle: WorkflowHandle): Promise<Outcome> {
  try {
    const summary = (await handle.result()) as { status: string };
    return { status: summary.status, at: Date.now() };
  } catch (error) {
    if (error instanceof WorkflowFailedError && error.cause instanceof TerminatedFailure)
      return { status: 'terminated', at: Date.now() };
    return { status: `${handle.workflowId}: ${String(error)}`, at: Date.now() };
  }
}

const STARTED = temporal.api.enums.v1.PendingActivityState.PENDING_ACTIVITY_STATE_STARTED;

/** Activities of the open pipelines running now, by the identity of the worker running them. */
async function activitiesByWorker(handles: WorkflowHandle[]): Promise<Map<string, number>> {
  const described = await Promise.all(handles.map((handle) => handle.describe().catch(() => null)));
  const running = new Map<string, number>();
  for (const d of described) {
    if (d?.status.name !== 'RUNNING') continue;
    for (const a of d.raw.pendingActivities ?? [])
      if (a.state === STARTED && a.lastWorkerIdentity)
        running.set(a.lastWorkerIdentity, (running.get(a.lastWorkerIdentity) ?? 0) + 1);
  }
  return running;
}

/**
 * SIGKILLs one of `workers` once the caps are full with jobs waiting: the one Temporal lists running the
 * most activities of the pipelines, if one is seen within 2 s of the caps filling, else the first. Waits
 * at most 60 s for full caps, then kills anyway: the figures then show what was missing.
 */
async function killBusyWorker(
  slots: SlotStore,
  handles: WorkflowHandle[],
  workers: Child[],
  log: (line: string) => void,
): Promise<Pick<KillFigures, 'slotsHeld' | 'waiting' | 'activitiesOnWorker'> & { at: number }> {
  const identities = workers.map((worker) => `${worker.child.pid}@${os.hostname()}`);
  const deadline = Date.now() + 60_000;
  let patience = Infinity;
  let figures = { slotsHeld: 0, waiting: 0, activitiesOnWorker: 0 };
  let victim = 0;
  while (Date.now() < deadline) {
    const snapshot = await slots.snapshot();
    const slotsHeld = Object.values(snapshot.heldByModel).reduce((a, b) => a + b, 0);
    const waiting = snapshot.waiting.reduce((a, w) => a + w.count, 0);
    if (slotsHeld >= SLOTS_CAPS.account && waiting > 0) {
      patience = Math.min(patience, Date.now() + 2_000);
      const running = await activitiesByWorker(handles);
      const counts = identities.map((identity) => running.get(identity) ?? 0);
      victim = counts.indexOf(Math.max(...counts));
      figures = { slotsHeld, waiting, activitiesOnWorker: counts[victim]! };
      // Submits and settles are often local activities (inside a workflow task, unseen by describe()): a
      // worker with none listed may be as busy, so the kill waits for one only while the caps stay full.
      if (figures.activitiesOnWorker > 0 || Date.now() > patience) break;
    }
    await sleep(50);
  }
  const at = Date.now();
  await workers[victim]!.kill('SIGKILL');
  log(`SIGKILLed worker-${victim + 1} (${JSON.stringify(figures)}); not restarted`);
  return { ...figures, at };
}

/**
 * Terminates the pipeline that took a slot last (no settle gives it back; its job's terminal webhook lets a
 * bridge free it), and leaves a slot of its run that names no job, as a worker killed between taking a slot
 * and sending the submit leaves it: only the reaper can free that one.
 */
async function leakSlot(
  slots: SlotStore,
  handles: WorkflowHandle[],
  log: (line: string) => void,
): Promise<LeakFigures> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const held = (await slots.heldSince(Date.now() + 1, 500)).filter((s) => s.state === SLOT_STATE.held);
    const newest = held.sort((a, b) => b.grantedAt - a.grantedAt)[0];
    const handle = newest && handles.find((h) => h.workflowId === newest.workflowId);
    if (newest && handle) {
      await handle.terminate('its slot leaked on purpose');
      const closedAt = (await handle.describe()).closeTime?.getTime() ?? Date.now();
      const holder = `${newest.holder}/submit-never-sent`;
      const lost = { holder, workflowId: newest.workflowId, runId: newest.runId, model: UPSCALE, priority: 3 };
      // Taken whatever the caps (none passed): the dead worker had taken it while there was room.
      await slots.acquire({ ...lost, fairnessKey: 'leak', weight: 1 }, { models: {} }, Date.now());
      const grantedAt = Date.now();
      const stillHeld = (await slots.heldSince(Date.now() + 1, 500)).some((s) => s.holder === holder);
      log(`terminated ${newest.workflowId}, holding a slot granted ${closedAt - newest.grantedAt} ms before`);
      return {
        workflowId: newest.workflowId,
        holder,
        grantedAt,
        closedAt,
        heldAfterClose: stillHeld,
        releasedAt: null,
        boundAt: Math.max(grantedAt + REAP_AFTER_MS, closedAt) + SLOT_REAPER_EVERY_MS,
      };
    }
    if (Date.now() > deadline) throw new Error('no pipeline held a slot to terminate');
    await sleep(100);
  }
}

/** Waits (up to 30 s past the bound) until nothing is held and nothing waits. */
async function waitForEmpty(slots: SlotStore, lastCloseAt: number, lastGrantAt: number): Promise<DrainFigures> {
  const boundAt = Math.max(lastGrantAt + REAP_AFTER_MS, lastCloseAt) + SLOT_REAPER_EVERY_MS;
  for (;;) {
    const snapshot = await slots.snapshot();
    if (Object.keys(snapshot.heldByModel).length === 0 && snapshot.waiting.length === 0)
      return { lastCloseAt, emptyAt: Date.now(), boundAt, snapshot };
    if (Date.now() > boundAt + 30_000) return { lastCloseAt, emptyAt: null, boundAt, snapshot };
    await sleep(250);
  }
}

async function lastSeq(slots: SlotStore): Promise<number> {
  let seq = 0;
  for (;;) {
    const page = await slots.log(seq, 1_000);
    if (page.length === 0) return seq;
    seq = page[page.length - 1]!.seq;
  }
}

async function logAfter(slots: SlotStore, seq: number): Promise<SlotLogEntry[]> {
  const entries: SlotLogEntry[] = [];
  for (;;) {
    const page = await slots.log(entries.at(-1)?.seq ?? seq, 1_000);
    if (page.length === 0) return entries;
    entries.push(...page);
  }
}

/** The service's job records, read from its data directory (the service process stopped). */
async function readJobs(dataDir: string): Promise<JobView[]> {
  const books = await startLocalService({
    dataDir,
    apiKeys: [TEST_API_KEY],
    adminKey: TEST_ADMIN_KEY,
    allowPrivateWebhooks: true,
    port: 0,
  });
  try {
    return books.jobs();
  } finally {
    await books.close();
  }
}

/** Jobs in flight at once (in all and by model) and keys that created more than one job. */
function jobFigures(jobs: JobView[]): Pick<SlotsRunFigures, 'jobs' | 'maxInFlight' | 'keysSubmittedTwice'> {
  const byKey = new Map<string, number>();
  for (const job of jobs) byKey.set(job.idempotencyKey ?? job.id, (byKey.get(job.idempotencyKey ?? job.id) ?? 0) + 1);
  return {
    jobs: jobs.length,
    maxInFlight: {
      all: maxJobsInFlight(jobs),
      byModel: Object.fromEntries(
        [LONG_FORM, UPSCALE].map((model) => [model, maxJobsInFlight(jobs.filter((j) => j.model === model))]),
      ),
    },
    keysSubmittedTwice: [...byKey].filter(([, n]) => n > 1).map(([key]) => key),
  };
}
