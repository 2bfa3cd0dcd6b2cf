import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client, Connection, type WorkflowHandle } from '@temporalio/client';
import { pipeline } from '../../src/pipeline-spec';
import { freePort } from '../../src/stack/stack-state';
import { pipelineWorkflowId } from '../../src/workflows/definitions';
import { openExecutionsOn } from '../../src/workers/worker-deployment';
import { routeStoreUrl, startCluster, stopCluster, type Cluster } from '../../scripts/cluster/index';
import { faultBridgeEnvironment, faultWorkerEnvironment, sleep, spawnChild, type Child } from '../faults/fault-run';
import { runCli, type CliResult } from '../integration/cli-process';
import { api, LONG_FORM, PIXEL_PNG, TEST_ADMIN_KEY, TEST_API_KEY } from '../helpers/local-service';

/**
 * The rolling upgrade behind `npm run test:cluster:upgrade`, on the cluster harness (scripts/cluster:
 * PostgreSQL, four Temporal roles): the local service, one bridge, build A's worker current with
 * pipelines in flight; build B's worker started beside it; `reelflow deploy --to B --ramp 50
 * --retire "kill -TERM <A>"` run as the operator runs it; new pipelines started once B is current.
 * Build B is the same code under another build id (a workflow change would give it one by itself).
 */

const ROOT = path.join(__dirname, '..', '..');
const DIST = path.join(ROOT, 'dist');
const DEPLOYMENT = 'reelflow';

/** Which build ran each workflow task of a pipeline, and which worker process. */
export interface PipelineRun {
  name: string;
  status: string;
  /** Build ids of its completed workflow tasks, in order. */
  buildIds: string[];
  /** Identities (`<pid>@<host>`) of the workers that completed its workflow tasks. */
  identities: string[];
}

export interface UpgradeRunFigures {
  buildA: string;
  buildB: string;
  pidA: number;
  pidB: number;
  /** Pipelines started while A was current, still open when B was deployed. */
  startedOnA: PipelineRun[];
  /** Pipelines started after `reelflow deploy` made B current. */
  startedOnB: PipelineRun[];
  /** Open executions pinned to A when `reelflow deploy` had retired A's worker. */
  pinnedToAAtRetire: number;
  /** A's worker exited after `reelflow deploy` retired it (its exit code: 0 is a graceful stop); B's still ran. */
  aExited: boolean;
  aExitCode: number | null;
  bStillRunning: boolean;
  /** Open A pipelines when B's worker started, and when `reelflow deploy` had made B current. */
  openOnAWhenBDeployed: number;
  openOnAWhenBCurrent: number;
  deploy: CliResult;
  seconds: { clusterStart: number; upgrade: number };
}

/** Build ids and worker identities of `handle`'s completed workflow tasks, from its history. */
async function runOf(name: string, handle: WorkflowHandle): Promise<PipelineRun> {
  const history = await handle.fetchHistory();
  const buildIds: string[] = [];
  const identities: string[] = [];
  for (const event of history.events ?? []) {
    const done = event.workflowTaskCompletedEventAttributes;
    if (!done) continue;
    buildIds.push(done.deploymentVersion?.buildId ?? done.workerDeploymentVersion ?? '');
    identities.push(done.identity ?? '');
  }
  const status = (await handle.describe()).status.name;
  return { name, status, buildIds, identities };
}

/** Starts `count` one-step pipelines named `<prefix>-<i>`. */
async function startPipelines(
  client: Client,
  taskQueue: string,
  serviceUrl: string,
  prefix: string,
  count: number,
): Promise<{ name: string; handle: WorkflowHandle }[]> {
  return Promise.all(
    Array.from({ length: count }, async (_, i) => {
      const name = `${prefix}-${i}`;
      const spec = pipeline(name)
        .step('generate', LONG_FORM, { image_urls: [PIXEL_PNG], duration: '4', resolution: '480p' })
        .build({ allowedOrigins: [serviceUrl] });
      const handle = await client.workflow.start('pipelineWorkflow', {
        taskQueue,
        workflowId: pipelineWorkflowId(name),
        args: [{ spec, uriRules: { allowedOrigins: [serviceUrl] }, submitTimeoutSeconds: 5 }],
      });
      return { name, handle };
    }),
  );
}

async function until(what: string, condition: () => Promise<boolean>, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(250);
  }
}

/**
 * Runs the scenario; everything it started is stopped before it returns. `temporalAddress` runs it
 * against a server already running (namespace `default`, the route store an SQLite file) instead of
 * a new cluster.
 */
export async function runUpgradeScenario(options: {
  count: number;
  temporalAddress?: string;
  log?: (line: string) => void;
}) {
  const log = options.log ?? (() => undefined);
  for (const file of [
    'workers/local-service.js',
    'workers/worker.js',
    'workers/bridge.js',
    'workflow-bundle.js',
    'cli/main.js',
  ])
    if (!fs.existsSync(path.join(DIST, file))) throw new Error(`dist/${file} is missing: run \`npm run build\` first`);
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'reelflow-upgrade-'));
  fs.chmodSync(scratch, 0o755);
  const clusterDir = path.join(scratch, 'cluster');
  const children: Child[] = [];
  const logs = { text: '' };
  let cluster: Cluster | null = null;
  let connection: Connection | null = null;
  try {
    const t0 = Date.now();
    if (!options.temporalAddress)
      cluster = await startCluster({ dir: clusterDir, log: (line) => log(`cluster: ${line}`) });
    const theCluster = cluster
      ? { address: cluster.address, namespace: cluster.record.namespace, routeStore: routeStoreUrl(cluster) }
      : {
          address: options.temporalAddress!,
          namespace: 'default',
          routeStore: `sqlite:${path.join(scratch, 'routes.sqlite')}`,
        };
    const clusterStart = (Date.now() - t0) / 1000;
    connection = await Connection.connect({ address: theCluster.address });
    const client = new Client({ connection, namespace: theCluster.namespace });
    const taskQueue = `upgrade-${process.pid}-${Date.now()}`;
    const [servicePort, bridgePort] = [await freePort(), await freePort()];
    const serviceUrl = `http://127.0.0.1:${servicePort}`;
    const spawnTracked = async (...args: Parameters<typeof spawnChild>) => {
      const child = await spawnChild(...args);
      children.push(child);
      return child;
    };

    await spawnTracked(
      [path.join(DIST, 'workers', 'local-service.js')],
      {
        REELFLOW_SERVICE_PORT: String(servicePort),
        REELFLOW_SERVICE_DATA_DIR: path.join(scratch, 'service'),
        REELFLOW_SERVICE_API_KEYS: TEST_API_KEY,
        REELFLOW_SERVICE_ADMIN_KEY: TEST_ADMIN_KEY,
        REELFLOW_SERVICE_ALLOW_PRIVATE_WEBHOOKS: 'true',
        REELFLOW_SERVICE_CONCURRENCY: '8',
      },
      /listening on/,
      logs,
      'service',
    );
    // Jobs long enough that A's pipelines are still open when B is deployed and made current.
    await api(serviceUrl, 'PUT', '/v1/admin/faults', { body: { modelDurationMs: 20_000 }, key: TEST_ADMIN_KEY });
    const registered = await api(serviceUrl, 'POST', '/v1/webhooks/endpoints', {
      body: { url: `http://127.0.0.1:${bridgePort}/webhooks` },
    });
    const secret = String(registered.body.secret);
    const { routeStore } = theCluster;
    await spawnTracked(
      [path.join(DIST, 'workers', 'bridge.js')],
      faultBridgeEnvironment({
        temporalAddress: theCluster.address,
        namespace: theCluster.namespace,
        secret,
        port: bridgePort,
        taskQueue,
        routeStore,
      }),
      /listening on/,
      logs,
      'bridge',
    );
    const startWorker = (buildId: string, setCurrent: boolean) =>
      spawnTracked(
        [path.join(DIST, 'workers', 'worker.js')],
        {
          ...faultWorkerEnvironment({
            temporalAddress: theCluster.address,
            namespace: theCluster.namespace,
            taskQueue,
            serviceUrl,
            routeStore,
          }),
          REELFLOW_WORKFLOW_BUNDLE: path.join(DIST, 'workflow-bundle.js'),
          REELFLOW_DEPLOYMENT_NAME: DEPLOYMENT,
          REELFLOW_BUILD_ID: buildId,
          REELFLOW_SET_CURRENT_VERSION: String(setCurrent),
        },
        /reelflow worker: task queue/,
        logs,
        `worker-${buildId}`,
      );

    const stamp = Date.now().toString(36);
    const buildA = `upgrade-a-${stamp}`;
    const buildB = `upgrade-b-${stamp}`;
    const versionA = { deploymentName: DEPLOYMENT, buildId: buildA };
    const workerA = await startWorker(buildA, true);
    await until('build A to be current', async () => {
      const answer = await client.workflowService
        .describeWorkerDeployment({ namespace: client.options.namespace, deploymentName: DEPLOYMENT })
        .catch(() => null);
      return answer?.workerDeploymentInfo?.routingConfig?.currentDeploymentVersion?.buildId === buildA;
    });
    log(`build ${buildA} current (worker pid ${workerA.child.pid})`);
    const onA = await startPipelines(client, taskQueue, serviceUrl, `upgrade-a-${stamp}`, options.count);
    await until(
      `${options.count} pipelines pinned to A`,
      async () => (await openExecutionsOn(client, versionA)) === options.count,
    );

    const t1 = Date.now();
    const workerB = await startWorker(buildB, false);
    const openOnAWhenBDeployed = await openExecutionsOn(client, versionA);
    log(
      `build ${buildB} polling beside A (worker pid ${workerB.child.pid}); ${openOnAWhenBDeployed} pipelines open on A`,
    );
    const deploying = runCli(
      [
        'deploy',
        '--to',
        buildB,
        '--ramp',
        '50',
        '--ramp-for',
        '2s',
        '--poll',
        '2s',
        '--retire',
        `kill -TERM ${workerA.child.pid}`,
      ],
      {
        TEMPORAL_ADDRESS: theCluster.address,
        TEMPORAL_NAMESPACE: theCluster.namespace,
        REELFLOW_DEPLOYMENT_NAME: DEPLOYMENT,
      },
    );
    await until('build B to be current', async () => {
      const answer = await client.workflowService.describeWorkerDeployment({
        namespace: client.options.namespace,
        deploymentName: DEPLOYMENT,
      });
      return answer.workerDeploymentInfo?.routingConfig?.currentDeploymentVersion?.buildId === buildB;
    });
    const openOnAWhenBCurrent = await openExecutionsOn(client, versionA);
    log(`build ${buildB} current; ${openOnAWhenBCurrent} pipelines still open on A`);
    const onB = await startPipelines(client, taskQueue, serviceUrl, `upgrade-b-${stamp}`, options.count);
    const deploy = await deploying;
    const pinnedToAAtRetire = await openExecutionsOn(client, versionA);
    // The retire command sent SIGTERM: A's worker shuts down gracefully, with nothing left to run.
    await Promise.race([workerA.exited, sleep(60_000)]);
    const aExited = workerA.child.exitCode !== null || workerA.child.signalCode !== null;
    log(`reelflow deploy exited ${deploy.code}:\n${deploy.stdout}${deploy.stderr}`);
    for (const { handle } of onB) await handle.result();
    const upgrade = (Date.now() - t1) / 1000;
    const bStillRunning = workerB.child.exitCode === null && workerB.child.signalCode === null;
    return {
      buildA,
      buildB,
      pidA: workerA.child.pid!,
      pidB: workerB.child.pid!,
      startedOnA: await Promise.all(onA.map(({ name, handle }) => runOf(name, handle))),
      startedOnB: await Promise.all(onB.map(({ name, handle }) => runOf(name, handle))),
      pinnedToAAtRetire,
      aExited,
      aExitCode: workerA.child.exitCode,
      bStillRunning,
      openOnAWhenBDeployed,
      openOnAWhenBCurrent,
      deploy,
      seconds: { clusterStart, upgrade },
    } satisfies UpgradeRunFigures;
  } catch (error) {
    log(`process output:\n${logs.text.slice(-4_000)}`);
    throw error;
  } finally {
    for (const child of children.reverse()) await child.kill('SIGTERM');
    await connection?.close();
    if (cluster) await stopCluster(clusterDir, (line) => log(`cluster: ${line}`));
    if (process.env.REELFLOW_KEEP_CLUSTER !== '1') fs.rmSync(scratch, { recursive: true, force: true });
  }
}
