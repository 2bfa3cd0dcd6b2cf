import * as path from 'node:path';
import { Worker } from '@temporalio/worker';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { openMediaStore } from '../../src/media/store';
import { openSqliteRouteStore } from '../../src/routing';
import { reelflowPlugin } from '../../src/plugin';
import { pipeline } from '../../src/pipeline-spec';
import type { PipelineSummary } from '../../src/workflows/pipeline-types';
import { pipelineWorkflowId, SEARCH_ATTRIBUTE_KEYS } from '../../src/workflows/definitions';
import { startDevServer } from '../helpers/temporal';
import { LONG_FORM, PIXEL_PNG, startTestService, TEST_API_KEY, type TestService } from '../helpers/local-service';

/**
 * reelflowPlugin on a real worker (the SDK's plugin interface, a real dev server): the team's own
 * workflows and activities next to reelflow's on one task queue, and the starts it refuses.
 */

let env: TestWorkflowEnvironment;
let service: TestService;
// The submit activity subscribes here; with no bridge, the pipeline learns its outcome by polling.
const routeStore = openSqliteRouteStore(':memory:');
const TEAM_WORKFLOWS = path.join(__dirname, 'worker-plugin.workflows.ts');

beforeAll(async () => {
  [env, service] = await Promise.all([startDevServer({ searchAttributes: SEARCH_ATTRIBUTE_KEYS }), startTestService()]);
}, 120_000);

afterAll(async () => {
  await routeStore.close();
  await service?.close();
  await env?.teardown();
});

function plugin(options: Parameters<typeof reelflowPlugin>[0] = {}) {
  return reelflowPlugin({
    service: { url: service.url, apiKey: TEST_API_KEY, idempotency: 'honoured' },
    routeStore,
    media: openMediaStore({ kind: 'file', dir: path.join(service.dataDir, 'media'), urlLifetimeSeconds: 600 }),
    limits: false,
    ...options,
  });
}

it("runs the team's workflow and activity and reelflow's pipeline on one task queue, neither replacing the other", async () => {
  const taskQueue = 'plugin-team-queue';
  const worker = await Worker.create({
    connection: env.nativeConnection,
    taskQueue,
    workflowsPath: TEAM_WORKFLOWS,
    activities: { quoteJob: async (what: string) => `the team's own quote of ${what}` },
    plugins: [plugin({ workflows: true })],
  });
  const spec = pipeline('plugin-pipeline')
    .step('generate', LONG_FORM, { image_urls: [PIXEL_PNG] })
    .build();
  const [own, summary] = await worker.runUntil(
    Promise.all([
      env.client.workflow.execute('teamWorkflow', { taskQueue, workflowId: 'plugin-team', args: ['a teaser'] }),
      env.client.workflow.execute('pipelineWorkflow', {
        taskQueue,
        workflowId: pipelineWorkflowId(spec.name),
        args: [{ spec, defaultPacing: { firstPollSeconds: 1, factor: 2, capSeconds: 2 } }],
      }) as Promise<PipelineSummary>,
    ]),
  );
  expect(own).toBe("the team's own quote of a teaser");
  expect(summary.status).toBe('completed');
  expect(summary.steps[0]?.status).toBe('completed');
  const history = await env.client.workflow.getHandle(pipelineWorkflowId(spec.name)).fetchHistory();
  const types = (history.events ?? []).flatMap((e) => e.activityTaskScheduledEventAttributes?.activityType?.name ?? []);
  expect(types.length).toBeGreaterThan(0);
  expect(types.every((type) => type.startsWith('reelflow.'))).toBe(true);

  // The same plugin on a replay worker (configureReplayWorker): the team's workflows and reelflow's replay
  // the pipeline's history with no service, store or environment.
  await Worker.runReplayHistory(
    { workflowsPath: TEAM_WORKFLOWS, plugins: [reelflowPlugin({ workflows: true, env: {} })] },
    history,
    pipelineWorkflowId(spec.name),
  );
}, 180_000);

it('stops the worker at start on a bad option, naming it', async () => {
  await expect(
    Worker.create({
      connection: env.nativeConnection,
      taskQueue: 'plugin-bad-options',
      workflowsPath: TEAM_WORKFLOWS,
      plugins: [plugin({ limits: true as never })],
    }),
  ).rejects.toThrow('reelflowPlugin option "limits": must be AccountLimits or false');
});

it("stops the worker at start when one of the team's activities takes a reelflow. type", async () => {
  await expect(
    Worker.create({
      connection: env.nativeConnection,
      taskQueue: 'plugin-collision',
      workflowsPath: TEAM_WORKFLOWS,
      activities: { 'reelflow.quoteJob': async () => 'mine' },
      plugins: [plugin()],
    }),
  ).rejects.toThrow(/"reelflow\.quoteJob" is reelflow's own activity type/);
});
