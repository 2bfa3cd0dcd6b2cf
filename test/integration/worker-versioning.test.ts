import * as fs from 'node:fs';
import * as path from 'node:path';
import * as zlib from 'node:zlib';
import type { WorkflowHandle } from '@temporalio/client';
import type { WorkerDeploymentVersion } from '@temporalio/common';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { Worker, WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { startDevServer } from '../helpers/temporal';
import { LONG_FORM, PIXEL_PNG, TEST_API_KEY, startTestService, type TestService } from '../helpers/local-service';
import { createServiceClient } from '../../src/client/service-client';
import type { CallKind } from '../../src/client/types';
import { createActivities } from '../../src/activities';
import { createReelflowWorker, mediaDeps } from '../../src/workers/worker';
import {
  currentVersion,
  openExecutionsOn,
  setCurrentVersion,
  setCurrentWhenDrained,
} from '../../src/workers/worker-deployment';
import { from, pipeline } from '../../src/pipeline-spec';
import { SEARCH_ATTRIBUTE_KEYS, pipelineWorkflowId, routeWorkflowId } from '../../src/workflows/definitions';
import { subscribeToRoute } from '../../src/routing';
import { testRouteStore } from '../helpers/route-store';
import type { PipelineSummary } from '../../src/workflows/pipeline-types';
import { bundleReelflowWorkflows, eventually, startTestBridge } from './workflow-harness';

/**
 * Worker Versioning on a real dev server (docs/safe-deploys.md): pinned pipelines finish on the
 * build they started on while a newer build becomes current, and the drain-first upgrade from 0.1.0,
 * whose workers ran unversioned (its workflow bundle: test/fixtures/workflow-bundle-v1.js.gz).
 * Each generation step holds a few seconds at the local service, so a pipeline is mid-run when the
 * version changes; the checks are on which worker ran what, never on how long anything took.
 */

let bundle: WorkflowBundleWithSourceMap;
let env: TestWorkflowEnvironment;
let service: TestService;
const serviceClients: { close(): Promise<void> }[] = [];
const workers: { worker: Worker; running: Promise<void> }[] = [];

/** The 0.1.0 release's workflow bundle (as its unversioned workers ran it). */
function releaseBundle010(): { code: string } {
  const file = path.join(__dirname, '..', 'fixtures', 'workflow-bundle-v1.js.gz');
  return { code: zlib.gunzipSync(fs.readFileSync(file)).toString() };
}

beforeAll(async () => {
  [bundle, env, service] = await Promise.all([
    bundleReelflowWorkflows(),
    startDevServer({ searchAttributes: SEARCH_ATTRIBUTE_KEYS }),
    startTestService({ faults: { modelDurationMs: { [LONG_FORM]: 5_000 } } }),
  ]);
}, 120_000);

afterAll(async () => {
  for (const { worker, running } of workers) {
    if (worker.getState() === 'RUNNING') worker.shutdown();
    await running.catch(() => undefined);
  }
  for (const client of serviceClients) await client.close();
  await service?.close();
  await env?.teardown();
});

/** A running worker on `taskQueue`: versioned with `deployment`, or unversioned without. Counts its submits. */
async function startWorker(
  taskQueue: string,
  options: {
    deployment?: WorkerDeploymentVersion;
    /** A 0.1.0 worker: its release bundle, its activities under their unprefixed types, route workflows. */
    release010?: boolean;
    /** The subscription of builds before the route store (route workflows); default the current one. */
    routeWorkflows?: boolean;
  },
): Promise<{ submits: () => number; stop: () => Promise<void> }> {
  const client = createServiceClient({ baseUrl: service.url, apiKey: TEST_API_KEY });
  serviceClients.push(client);
  let submits = 0;
  const onCall = (kind: CallKind) => {
    if (kind === 'submit') submits += 1;
  };
  const routes = {
    subscribe: (requestId: string, subscriber: string) =>
      subscribeToRoute({ client: env.client, taskQueue }, requestId, subscriber),
  };
  const worker = await createReelflowWorker({
    connection: env.nativeConnection,
    client: env.client,
    taskQueue,
    service: client,
    workflowBundle: options.release010 ? releaseBundle010() : bundle,
    onCall,
    ...(options.deployment ? { deployment: options.deployment } : {}),
    ...(options.routeWorkflows || options.release010 ? { routes } : { routeStore: testRouteStore(taskQueue) }),
    // 0.1.0's workflow code schedules the activities by their names before the `reelflow.` prefix.
    ...(options.release010 ? { worker: { activities: release010Activities(client, routes, onCall) } } : {}),
  });
  const entry = { worker, running: worker.run() };
  workers.push(entry);
  return {
    submits: () => submits,
    stop: async () => {
      worker.shutdown();
      await entry.running;
    },
  };
}

/**
 * The activities a 0.1.0 worker registered: today's, plus `validatePipeline`, which 0.1.0's pipeline
 * schedules as a local activity and 0.3.0 folded into `checkPipeline` (the spec check without preflight).
 */
function release010Activities(
  client: ReturnType<typeof createServiceClient>,
  routes: Parameters<typeof createActivities>[0]['routes'],
  onCall: (kind: CallKind) => void,
) {
  const activities = createActivities({ client, routes, onCall, media: mediaDeps() });
  return {
    ...activities,
    async validatePipeline(spec: unknown, uriRules?: Parameters<typeof activities.checkPipeline>[1]) {
      const checked = await activities.checkPipeline(spec, uriRules, []);
      return checked.ok ? { ok: true } : checked;
    },
  };
}

/** A two-step pipeline: a held generation step, then an upscale of its output. */
function twoSteps(name: string) {
  return pipeline(name)
    .step('generate', LONG_FORM, { image_urls: [PIXEL_PNG] })
    .step('upscale', 'service-upscale-video-fast', { video_url: from('generate') })
    .build();
}

async function start(taskQueue: string, name: string): Promise<WorkflowHandle> {
  return env.client.workflow.start('pipelineWorkflow', {
    taskQueue,
    workflowId: pipelineWorkflowId(name),
    args: [{ spec: twoSteps(name) }],
  });
}

/** Waits until the service runs the first job of each named pipeline. */
async function firstJobsRunning(names: string[]): Promise<void> {
  await eventually(
    () =>
      names.every((name) =>
        service.service
          .jobs()
          .some((j) => j.idempotencyKey?.includes(`${name}/job/generate`) && j.status === 'IN_PROGRESS'),
      ),
    `the first jobs of ${names.join(', ')} running`,
  );
}

/** The build ids of the workers that completed the execution's workflow tasks ('' for an unversioned worker). */
async function buildIdsOf(handle: WorkflowHandle): Promise<string[]> {
  const history = await handle.fetchHistory();
  const ids = (history.events ?? []).flatMap((e) =>
    e.workflowTaskCompletedEventAttributes
      ? [e.workflowTaskCompletedEventAttributes.deploymentVersion?.buildId ?? '']
      : [],
  );
  return [...new Set(ids)];
}

it('pipelines started on build A finish on A while build B becomes current; new ones run on B; then none is left on A', async () => {
  const queue = 'versioning-pinned';
  const buildA = { deploymentName: 'reelflow-pinned-test', buildId: 'build-a' };
  const buildB = { deploymentName: 'reelflow-pinned-test', buildId: 'build-b' };
  const bridge = await startTestBridge(service, env, queue);
  try {
    const a = await startWorker(queue, { deployment: buildA });
    await setCurrentVersion(env.client, buildA);
    const onA = [await start(queue, 'pinned-a1'), await start(queue, 'pinned-a2')];
    await firstJobsRunning(['pinned-a1', 'pinned-a2']);

    const b = await startWorker(queue, { deployment: buildB });
    await setCurrentVersion(env.client, buildB);
    expect(await currentVersion(env.client, buildA.deploymentName)).toEqual(buildB);
    // Still mid-run, and still pinned to A: B is current now, but not theirs.
    for (const handle of onA) {
      const description = await handle.describe();
      expect(description.status.name).toBe('RUNNING');
      expect(description.raw.workflowExecutionInfo?.versioningInfo?.deploymentVersion?.buildId).toBe('build-a');
    }
    await eventually(
      async () => (await openExecutionsOn(env.client, buildA, queue)) === 2,
      'visibility counting both open pipelines on A',
    );
    const onB = await start(queue, 'pinned-b1');

    const results = (await Promise.all([...onA, onB].map((h) => h.result()))) as PipelineSummary[];
    expect(results.map((r) => r.status)).toEqual(['completed', 'completed', 'completed']);
    // Every step of A's pipelines, the ones after the switch included, was submitted by A's worker.
    expect([a.submits(), b.submits()]).toEqual([4, 2]);
    for (const handle of onA) expect(await buildIdsOf(handle)).toEqual(['build-a']);
    expect(await buildIdsOf(onB)).toEqual(['build-b']);
    // Nothing is left on A: its workers can go.
    await eventually(async () => (await openExecutionsOn(env.client, buildA, queue)) === 0, 'no execution left on A');
    await a.stop();
    await b.stop();
  } finally {
    await bridge.stop();
  }
}, 240_000);

it('a delivery to a pipeline pinned to the previous build (which subscribed through route workflows) still arrives after the bridge is upgraded', async () => {
  const queue = 'versioning-bridge-upgrade';
  const previous = { deploymentName: 'reelflow-upgrade-test', buildId: 'before-route-store' };
  const current = { deploymentName: 'reelflow-upgrade-test', buildId: 'route-store' };
  // The bridge is the upgraded one: its inbox and forwarder, with the route-workflow fallback.
  const bridge = await startTestBridge(service, env, queue);
  try {
    const old = await startWorker(queue, { deployment: previous, routeWorkflows: true });
    await setCurrentVersion(env.client, previous);
    const pinned = await start(queue, 'upgrade-pinned');
    await firstJobsRunning(['upgrade-pinned']);
    // The current build becomes current while the pipeline runs; it stays pinned to the previous one.
    const next = await startWorker(queue, { deployment: current });
    await setCurrentVersion(env.client, current);
    const summary = (await pinned.result()) as PipelineSummary;
    expect(summary.status).toBe('completed');
    expect(await buildIdsOf(pinned)).toEqual([previous.buildId]);
    // Each step subscribed through a route workflow naming the pipeline, and the upscale step (a
    // quick job, long before its first fallback poll) learned its outcome from the webhook the
    // upgraded bridge forwarded through that route.
    for (const step of summary.steps) {
      const route = await env.client.workflow.getHandle(routeWorkflowId(step.requestIds[0]!)).describe();
      expect(route.memo?.subscriber).toBe(pinned.workflowId);
    }
    const upscale = summary.steps.find((step) => step.id === 'upscale');
    expect(upscale?.attemptLog?.map((attempt) => attempt.learnedBy)).toEqual(['webhook']);
    await old.stop();
    await next.stop();
  } finally {
    await bridge.stop();
  }
}, 240_000);

it('drain-first from 0.1.0: its open executions finish on the unversioned worker before 0.2.0 becomes current', async () => {
  const queue = 'versioning-drain-first';
  const release020 = { deploymentName: 'reelflow-drain-test', buildId: '0.2.0-test' };
  const bridge = await startTestBridge(service, env, queue);
  try {
    const old = await startWorker(queue, { release010: true });
    const started = [await start(queue, 'drain-old-1'), await start(queue, 'drain-old-2')];
    await firstJobsRunning(['drain-old-1', 'drain-old-2']);
    await eventually(
      async () => (await openExecutionsOn(env.client, 'unversioned', queue)) === 2,
      'visibility counting both 0.1.0 pipelines',
    );

    // 0.2.0 workers start beside 0.1.0's; the version is made current only once nothing unversioned is open.
    const next = await startWorker(queue, { deployment: release020 });
    const waited: string[] = [];
    await setCurrentWhenDrained(env.client, release020, queue, { pollMs: 250, log: (line) => waited.push(line) });
    expect(waited[0]).toMatch(/^drain-first: 2 executions/);

    const deployment = await env.client.workflowService.describeWorkerDeployment({
      namespace: env.client.options.namespace,
      deploymentName: release020.deploymentName,
    });
    const changed = deployment.workerDeploymentInfo?.routingConfig?.currentVersionChangedTime;
    const madeCurrentMs = Number(changed?.seconds) * 1000 + Math.floor((changed?.nanos ?? 0) / 1e6);
    for (const handle of started) {
      const description = await handle.describe();
      expect(description.status.name).toBe('COMPLETED');
      // Closed before 0.2.0 became current (both times from the server's clock).
      expect(description.closeTime!.getTime()).toBeLessThanOrEqual(madeCurrentMs);
      expect(await buildIdsOf(handle)).toEqual(['']);
    }
    expect([old.submits(), next.submits()]).toEqual([4, 0]);

    // From now on new pipelines run on 0.2.0.
    const fresh = await start(queue, 'drain-new-1');
    expect(((await fresh.result()) as PipelineSummary).status).toBe('completed');
    expect(await buildIdsOf(fresh)).toEqual(['0.2.0-test']);
    expect(next.submits()).toBe(2);
    await old.stop();
    await next.stop();
  } finally {
    await bridge.stop();
  }
}, 240_000);
