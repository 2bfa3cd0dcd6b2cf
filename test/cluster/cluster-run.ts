import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { freePort } from '../../src/stack/stack-state';
import {
  killPostgres,
  killRole,
  startCluster,
  routeStoreUrl,
  startPostgres,
  startRole,
  stopCluster,
  type Cluster,
} from '../../scripts/cluster/index';
import {
  collectFaultFigures,
  FAULTS,
  faultBridgeEnvironment,
  faultWorkerEnvironment,
  sleep,
  startFaultPipelines,
  type FaultPipelines,
  type FaultRunFigures,
} from '../faults/fault-run';
import { api, TEST_ADMIN_KEY, TEST_API_KEY } from '../helpers/local-service';
import { startProxy } from '../helpers/round-robin-proxy';
import { DIST_WORKFLOW_BUNDLE, processGroup, requireBuild } from './processes';

/**
 * The cluster run behind `npm run test:cluster`: a real Temporal cluster (scripts/cluster: PostgreSQL,
 * four server roles as processes, 4 history shards), the local service, two workers and two bridges
 * as processes started from the compiled production entry points (dist/, `npm run build`), the
 * bridges behind one round-robin webhook address, and N two-step pipelines through the webhook path
 * under the service's faults. While they run, one worker, one bridge, the matching role, the history
 * role and PostgreSQL are each SIGKILLed once, `spacingMs` apart, and restarted.
 */

/** What one kill did to the run. */
export interface KillRecord {
  target: string;
  /** Seconds since the pipelines were started. */
  atSeconds: number;
  /** Pipelines not yet ended when it was killed. */
  inFlight: number;
  /** Seconds from the kill until the restarted process answered again. */
  downSeconds: number;
  /** Pipelines that ended while it was down. */
  endedWhileDown: number;
  /** Seconds from the restart until the next pipeline ended (null: none ended afterwards). */
  nextEndAfterSeconds: number | null;
}

export interface ClusterRunFigures extends FaultRunFigures {
  kills: KillRecord[];
  /** Workflow executions per history shard, read from PostgreSQL at the end. */
  executionsPerShard: Record<string, number>;
  historyShards: number;
  /** Pipelines the cluster's visibility store (PostgreSQL) lists with ReelflowStatus completed / failed. */
  visibility: { completed: number; failed: number };
  /** Processes: Temporal roles, service, workers, bridges. */
  processes: Record<string, number>;
  temporalVersion: string;
  /** Lines of the Temporal roles' logs (scanned for the database password). */
  clusterLogs: string;
}

const seconds = (ms: number) => Math.round(ms / 100) / 10;

/** Rows of `sql` (tab-separated) from the cluster's `temporal` database. */
function query(cluster: Cluster, sql: string): string[][] {
  const pg = cluster.postgres;
  const result = spawnSync(
    path.join(pg.bin, 'psql'),
    ['-h', '127.0.0.1', '-p', String(pg.port), '-U', pg.user, '-d', 'temporal', '-At', '-F', '\t', '-c', sql],
    {
      env: { ...process.env, PGPASSWORD: pg.password },
      encoding: 'utf8',
    },
  );
  if (result.status !== 0) throw new Error(`psql: ${result.stderr}`);
  return result.stdout
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((line) => line.split('\t'));
}

export async function runClusterScenario(options: {
  count: number;
  spacingMs: number;
  downMs?: number;
  log?: (line: string) => void;
}): Promise<ClusterRunFigures> {
  requireBuild();
  const log = options.log ?? (() => undefined);
  const downMs = options.downMs ?? 3_000;
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'reelflow-cluster-'));
  // PostgreSQL runs as its own user: it must be able to walk into its data directory.
  fs.chmodSync(scratch, 0o755);
  const clusterDir = path.join(scratch, 'cluster');
  const dataDir = path.join(scratch, 'service');
  const group = processGroup('dist');
  const restarts: Record<string, number> = {};
  let cluster: Cluster | null = null;
  let connection: Connection | null = null;
  try {
    cluster = await startCluster({ dir: clusterDir, log: (line) => log(`cluster: ${line}`) });
    const theCluster = cluster;
    const started = Date.now();
    connection = await Connection.connect({ address: cluster.address });
    const client = new Client({ connection, namespace: cluster.record.namespace });
    const taskQueue = `cluster-${process.pid}-${Date.now()}`;
    const [servicePort, ...bridgePorts] = [await freePort(), await freePort(), await freePort()];
    const serviceUrl = `http://127.0.0.1:${servicePort}`;
    const namespace = cluster.record.namespace;
    const startService = async () => {
      const c = await group.start(
        'local-service',
        {
          REELFLOW_SERVICE_PORT: String(servicePort),
          REELFLOW_SERVICE_DATA_DIR: dataDir,
          REELFLOW_SERVICE_API_KEYS: TEST_API_KEY,
          REELFLOW_SERVICE_ADMIN_KEY: TEST_ADMIN_KEY,
          REELFLOW_SERVICE_ALLOW_PRIVATE_WEBHOOKS: 'true',
          REELFLOW_SERVICE_CONCURRENCY: '4',
          REELFLOW_SERVICE_LOG: 'true',
        },
        'service',
      );
      const response = await api(serviceUrl, 'PUT', '/v1/admin/faults', { body: FAULTS, key: TEST_ADMIN_KEY });
      if (response.status !== 200)
        throw new Error(`setting faults: HTTP ${response.status} ${JSON.stringify(response.body)}`);
      return c;
    };
    await startService();

    // Two bridges behind one webhook address, as nginx puts them in docker-compose.yml.
    const proxy = await startProxy(() => bridgePorts.map((port) => `http://127.0.0.1:${port}`));
    const registered = await api(serviceUrl, 'POST', '/v1/webhooks/endpoints', { body: { url: proxy.url } });
    if (registered.status !== 201)
      throw new Error(`webhook registration: HTTP ${registered.status} ${JSON.stringify(registered.body)}`);
    const secret = String(registered.body.secret);

    const startBridge = (index: number) =>
      group.start(
        'bridge',
        faultBridgeEnvironment({
          temporalAddress: theCluster.address,
          namespace,
          secret,
          port: bridgePorts[index]!,
          taskQueue,
          routeStore: routeStoreUrl(theCluster),
        }),
        `bridge-${index + 1}`,
      );
    const startWorker = (index: number) =>
      group.start(
        'worker',
        {
          ...faultWorkerEnvironment({
            temporalAddress: theCluster.address,
            namespace,
            taskQueue,
            serviceUrl,
            routeStore: routeStoreUrl(theCluster),
          }),
          REELFLOW_WORKFLOW_BUNDLE: DIST_WORKFLOW_BUNDLE,
        },
        `worker-${index + 1}`,
      );
    const bridges = await Promise.all([startBridge(0), startBridge(1)]);
    const workers = await Promise.all([startWorker(0), startWorker(1)]);

    let run: FaultPipelines | null = null;
    const kills: KillRecord[] = [];
    const restartedAt: number[] = [];
    const pipelinesStarted = Date.now();
    /** SIGKILLs something, keeps it down `downMs`, restarts it and records what the run did meanwhile. */
    const killAndRestart = async (target: string, kill: () => Promise<void>, restart: () => Promise<unknown>) => {
      await sleep(options.spacingMs);
      const ended = run?.results.length ?? 0;
      log(`SIGKILL ${target} (${options.count - ended} pipelines in flight)`);
      const killedAt = Date.now();
      await kill();
      restarts[target] = (restarts[target] ?? 0) + 1;
      await sleep(downMs);
      await restart();
      const back = Date.now();
      restartedAt.push(back);
      kills.push({
        target,
        atSeconds: seconds(killedAt - pipelinesStarted),
        inFlight: options.count - ended,
        downSeconds: seconds(back - killedAt),
        endedWhileDown: (run?.results.length ?? 0) - ended,
        nextEndAfterSeconds: null,
      });
      log(`${target} back after ${seconds(back - killedAt)} s`);
    };

    run = await startFaultPipelines({ client, taskQueue, serviceUrl, count: options.count });
    await killAndRestart(
      'worker',
      () => workers[0]!.kill(),
      async () => (workers[0] = await startWorker(0)),
    );
    await killAndRestart(
      'bridge',
      () => bridges[0]!.kill(),
      async () => (bridges[0] = await startBridge(0)),
    );
    await killAndRestart(
      'temporal-matching',
      () => killRole(theCluster, 'matching'),
      () => startRole(theCluster, 'matching'),
    );
    await killAndRestart(
      'temporal-history',
      () => killRole(theCluster, 'history'),
      () => startRole(theCluster, 'history'),
    );
    await killAndRestart(
      'postgresql',
      () => killPostgres(theCluster),
      () => startPostgres(theCluster.postgres),
    );
    await run.settled;
    const ends = run.results.map((r) => r.at).sort((a, b) => a - b);
    kills.forEach((kill, i) => {
      const back = restartedAt[i]!;
      const next = ends.find((at) => at >= back);
      kill.nextEndAfterSeconds = next === undefined ? null : seconds(next - back);
    });
    log(`all ${options.count} pipelines ended after ${((Date.now() - pipelinesStarted) / 1000).toFixed(0)} s`);

    // What the cluster itself recorded: visibility (PostgreSQL, custom search attributes) and shards.
    const countWhere = async (status: string) =>
      (await client.workflow.count(`TaskQueue = '${taskQueue}' AND ReelflowStatus = '${status}'`)).count;
    const expectedCompleted = run.results.filter((r) => r.summary?.status === 'completed').length;
    let visibility = { completed: -1, failed: -1 };
    for (let i = 0; i < 60; i += 1) {
      visibility = { completed: await countWhere('completed'), failed: await countWhere('failed') };
      if (visibility.completed === expectedCompleted && visibility.completed + visibility.failed === options.count)
        break;
      await sleep(1000);
    }
    const executionsPerShard = Object.fromEntries(
      query(cluster, 'SELECT shard_id, count(*) FROM executions GROUP BY shard_id ORDER BY shard_id').map(
        ([shard, n]) => [shard!, Number(n)],
      ),
    );

    await group.stopAll();
    await proxy.close();
    const figures = await collectFaultFigures({
      client,
      dataDir,
      serviceUrl,
      run,
      logs: group.logs.text,
      restarts,
      secrets: [secret, TEST_API_KEY, TEST_ADMIN_KEY, cluster.postgres.password],
      started,
    });
    const logDir = path.join(clusterDir, 'logs');
    return {
      ...figures,
      kills,
      executionsPerShard,
      historyShards: cluster.record.historyShards,
      visibility,
      processes: {
        'temporal roles': Object.keys(cluster.record.pids).length,
        service: 1,
        workers: workers.length,
        bridges: bridges.length,
      },
      temporalVersion: cluster.record.version,
      clusterLogs: fs
        .readdirSync(logDir)
        .map((f) => fs.readFileSync(path.join(logDir, f), 'utf8'))
        .join('\n'),
    };
  } finally {
    await group.stopAll();
    await connection?.close();
    if (cluster) await stopCluster(clusterDir, (line) => log(`cluster: ${line}`));
    if (process.env.REELFLOW_KEEP_CLUSTER !== '1') fs.rmSync(scratch, { recursive: true, force: true });
    else log(`kept ${scratch}`);
  }
}
