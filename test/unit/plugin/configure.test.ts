import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { ReplayWorkerOptions, WorkerOptions } from '@temporalio/worker';
import { openMediaStore } from '../../../src/media/store';
import { openSqliteRouteStore } from '../../../src/routing';
import { reelflowPlugin, reelflowWorkflowsPath } from '../../../src/plugin/plugin';
import { defaultBuildId } from '../../../src/workers/worker-deployment';
import { ReelflowPluginOptionsError } from '../../../src/plugin/errors';

/** What the plugin's configure step adds for Worker Versioning, and its replay-worker hook (configureReplayWorker). */

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reelflow-plugin-versioning-'));
const media = openMediaStore({ kind: 'file', dir, urlLifetimeSeconds: 60 });
const routeStore = openSqliteRouteStore(':memory:');
afterAll(() => routeStore.close());
const given = { service: { url: 'http://127.0.0.1:9/', apiKey: 'key_1' }, routeStore, media, limits: false as const };
const BUNDLE = { code: 'globalThis.__reelflowTestBundle = 1;' };

function configure(options: Parameters<typeof reelflowPlugin>[0], worker: Partial<WorkerOptions> = {}) {
  return reelflowPlugin(options).configureWorker!({ taskQueue: 'team-queue', ...worker } as WorkerOptions);
}

describe('reelflowPlugin({ versioning })', () => {
  it('leaves the worker unversioned unless asked', async () => {
    expect((await configure(given, { workflowBundle: BUNDLE })).workerDeploymentOptions).toBeUndefined();
  });

  it('makes the worker a pinned version of the deployment and build id it is given', async () => {
    const configured = await configure({ ...given, versioning: { deploymentName: 'team', buildId: 'b-7' } });
    expect(configured.workerDeploymentOptions).toEqual({
      useWorkerVersioning: true,
      version: { deploymentName: 'team', buildId: 'b-7' },
      defaultVersioningBehavior: 'PINNED',
    });
  });

  it("takes unset fields from REELFLOW_DEPLOYMENT_NAME, else `reelflow`, and the bundle's build id", async () => {
    const fromEnv = await configure(
      { ...given, versioning: true, env: { REELFLOW_DEPLOYMENT_NAME: 'from-env' } },
      { workflowBundle: BUNDLE },
    );
    expect(fromEnv.workerDeploymentOptions?.version).toEqual({
      deploymentName: 'from-env',
      buildId: defaultBuildId(BUNDLE.code),
    });
    const defaults = await configure({ ...given, versioning: true, env: { REELFLOW_BUILD_ID: 'env-build' } });
    expect(defaults.workerDeploymentOptions?.version).toEqual({ deploymentName: 'reelflow', buildId: 'env-build' });
  });

  it('refuses what it cannot version, naming the option', async () => {
    await expect(configure({ ...given, versioning: true, env: {} })).rejects.toThrow(
      /^reelflowPlugin option "versioning.buildId": is needed when the worker has no workflowBundle/,
    );
    await expect(
      configure(
        { ...given, versioning: { buildId: 'b' } },
        { workerDeploymentOptions: { useWorkerVersioning: false } as WorkerOptions['workerDeploymentOptions'] },
      ),
    ).rejects.toThrow('reelflowPlugin option "versioning": the worker already sets workerDeploymentOptions');
    for (const [versioning, option] of [
      [{ deploymentName: 'a.b' }, 'versioning.deploymentName'],
      [{ buildId: '' }, 'versioning.buildId'],
      [{ build: 'x' }, 'versioning.build'],
      ['yes', 'versioning'],
    ] as const) {
      const start = configure({ ...given, versioning: versioning as never });
      await expect(start).rejects.toThrow(ReelflowPluginOptionsError);
      await expect(configure({ ...given, versioning: versioning as never })).rejects.toThrow(
        `reelflowPlugin option "${option}"`,
      );
    }
  });
});

describe('reelflowPlugin().configureReplayWorker', () => {
  const replay = (options: Parameters<typeof reelflowPlugin>[0], worker: Partial<ReplayWorkerOptions> = {}) =>
    reelflowPlugin(options).configureReplayWorker!(worker as ReplayWorkerOptions);

  it("adds reelflow's workflow types when asked, and nothing else: no activities, no service, no environment", async () => {
    // No service URL anywhere: a replay never needs one.
    const configured = await replay({ workflows: true, env: {} }, { replayName: 'team-replay' });
    expect(configured).toEqual({ replayName: 'team-replay', workflowsPath: reelflowWorkflowsPath() });
  });

  it("leaves the replay worker's options as they are without workflows: true", async () => {
    const worker = { workflowBundle: BUNDLE };
    expect(await replay({ env: {} }, worker)).toBe(worker);
  });

  it('refuses a bad option, naming it', () => {
    expect(() => replay({ workflows: 'yes' as never })).toThrow(
      'reelflowPlugin option "workflows": must be true or false',
    );
  });
});
