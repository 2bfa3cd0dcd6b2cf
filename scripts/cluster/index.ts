import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { createServer } from 'node:net';
import { initPostgres, postmasterPid, startPostgres, stopPostgres, type PostgresServer } from './postgres';
import {
  isAlive,
  ROLES,
  rolePort,
  runsBinary,
  spawnRole,
  stopPid,
  waitForPort,
  type ClusterPorts,
  type ClusterTls,
  type Role,
  type RoleSettings,
} from './roles';
import { ensureClusterTools, TEMPORAL_SERVER_VERSION, type ClusterTools } from './tools';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const { resolveTemporalBinary } = require('../temporal-tools') as {
  resolveTemporalBinary(kind: 'cli', options?: { install?: boolean }): { path: string } | null;
};

/**
 * A self-hosted Temporal cluster on PostgreSQL: one PostgreSQL server, the four server roles as
 * separate processes, reelflow's namespace and search attributes. State lives under `dir`
 * (default `.reelflow/cluster`, git-ignored):
 *
 *   cluster.json               ports, history shards, pids (no secrets)
 *   secrets/postgres-password  the database password (0600)
 *   postgres/                  PostgreSQL's data directory, log and socket (owned by `postgres` when run as root)
 *   logs/temporal-<role>.log   each role's output
 */

/** History shards of the cluster: more than one, so work really spreads over shards (fixed once created). */
export const HISTORY_SHARDS = 4;
export const DATABASE_USER = 'temporal';
export const DEFAULT_NAMESPACE = 'default';
const ROOT = resolve(__dirname, '..', '..');

export interface ClusterRecord {
  version: string;
  namespace: string;
  historyShards: number;
  ports: ClusterPorts;
  pids: Partial<Record<Role, number>>;
  tools: ClusterTools;
  /** Frontend TLS with client certificates required (fixed when the cluster is created). */
  tls?: ClusterTls;
}

/** A cluster's state folder and what runs from it. */
export interface Cluster {
  dir: string;
  record: ClusterRecord;
  /** host:port of the frontend, what TEMPORAL_ADDRESS is set to. */
  address: string;
  postgres: PostgresServer;
}

const paths = (dir: string) => ({
  record: join(dir, 'cluster.json'),
  password: join(dir, 'secrets', 'postgres-password'),
  postgres: join(dir, 'postgres'),
  logs: join(dir, 'logs'),
});

/** `REELFLOW_CLUSTER_DIR`, else `.reelflow/cluster` under the repository. */
export function defaultClusterDir(env: NodeJS.ProcessEnv = process.env): string {
  return resolve(env.REELFLOW_CLUSTER_DIR ?? join(ROOT, '.reelflow', 'cluster'));
}

function save(cluster: Cluster): void {
  writeFileSync(paths(cluster.dir).record, `${JSON.stringify(cluster.record, null, 2)}\n`);
}

/** Opens the cluster whose state is in `dir`, or null if none was ever created there. */
export function openCluster(dir: string = defaultClusterDir()): Cluster | null {
  const p = paths(dir);
  if (!existsSync(p.record) || !existsSync(p.password)) return null;
  const record = JSON.parse(readFileSync(p.record, 'utf8')) as ClusterRecord;
  const password = readFileSync(p.password, 'utf8').trim();
  return {
    dir,
    record,
    address: `127.0.0.1:${record.ports.frontend}`,
    postgres: {
      bin: record.tools.postgresBin,
      home: p.postgres,
      port: record.ports.postgres,
      user: DATABASE_USER,
      password,
    },
  };
}

/** Resolves true if 127.0.0.1:`port` can be bound right now. */
function canListen(port: number): Promise<boolean> {
  return new Promise((done) => {
    const server = createServer();
    server.once('error', () => done(false));
    server.listen(port, '127.0.0.1', () => server.close(() => done(true)));
  });
}

/**
 * A free port below 32768: Temporal stores membership ports in a smallint column, and staying out
 * of Linux's ephemeral range (32768+) keeps outgoing connections from taking them while the role is down.
 */
async function freeClusterPort(taken: Set<number>): Promise<number> {
  for (;;) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    if (!taken.has(port) && (await canListen(port))) return port;
  }
}

async function choosePorts(): Promise<ClusterPorts> {
  const names: Array<keyof ClusterPorts> = [
    'postgres',
    'frontend',
    'frontendHttp',
    'frontendMembership',
    'history',
    'historyMembership',
    'matching',
    'matchingMembership',
    'worker',
    'workerMembership',
  ];
  const ports = {} as ClusterPorts;
  const taken = new Set<number>();
  for (const name of names) {
    const port = await freeClusterPort(taken);
    taken.add(port);
    ports[name] = port;
  }
  return ports;
}

function roleSettings(cluster: Cluster): RoleSettings {
  return {
    server: cluster.record.tools.server,
    ports: cluster.record.ports,
    historyShards: cluster.record.historyShards,
    database: { host: '127.0.0.1', user: DATABASE_USER, password: cluster.postgres.password },
    logDir: paths(cluster.dir).logs,
    ...(cluster.record.tls ? { tls: cluster.record.tls } : {}),
  };
}

/** Starts one role (if it is not running) and waits until its gRPC port answers. */
export async function startRole(cluster: Cluster, role: Role): Promise<void> {
  const running = cluster.record.pids[role];
  if (running !== undefined && isAlive(running) && runsBinary(running, cluster.record.tools.server)) return;
  const pid = spawnRole(role, roleSettings(cluster));
  cluster.record.pids[role] = pid;
  save(cluster);
  await waitForPort(
    rolePort(role, cluster.record.ports),
    `Temporal ${role} (see ${join(paths(cluster.dir).logs, `temporal-${role}.log`)})`,
    90_000,
    () => isAlive(pid),
  );
}

/** SIGKILLs one role (no graceful shutdown): what a crashed machine looks like to the others. */
export async function killRole(cluster: Cluster, role: Role): Promise<void> {
  const pid = cluster.record.pids[role];
  if (pid !== undefined && runsBinary(pid, cluster.record.tools.server)) await stopPid(pid, 'SIGKILL');
}

/** SIGKILLs the PostgreSQL postmaster (its backends exit on their own when they see it gone). */
export async function killPostgres(cluster: Cluster): Promise<void> {
  const pid = postmasterPid(cluster.postgres);
  if (pid !== null) await stopPid(pid, 'SIGKILL');
}

export { startPostgres };

/** deploy/temporal/ scripts run here and by docker-compose.yml's one-shot containers (schemas; namespace + search attributes). */
export const DEPLOY_SCRIPTS = { schema: 'setup-schema.sh', init: 'register-search-attributes.sh' } as const;

/** Runs one of deploy/temporal/*.sh, the scripts the compose file runs in its one-shot containers. */
function runDeployScript(script: string, env: Record<string, string>): void {
  const result = spawnSync('sh', [join(ROOT, 'deploy', 'temporal', script)], {
    env: { ...process.env, ...env },
    encoding: 'utf8',
    // The scripts wait for the frontend in a loop: a frontend that never answers (a TLS mistake) must not hang here.
    timeout: 300_000,
  });
  if (result.status !== 0)
    throw new Error(`deploy/temporal/${script} failed (exit ${result.status}):\n${result.stdout}${result.stderr}`);
}

/** A client certificate the cluster script uses to register the namespace on a frontend that requires one. */
export interface ClusterClientCert {
  cert: string;
  key: string;
}

/**
 * Creates (first time) and starts the cluster in `dir`: tools, PostgreSQL, schemas, the four roles,
 * namespace and search attributes. Starting a running cluster starts only what is not running.
 * `tls` (first start only) puts TLS on the frontend and requires client certificates; `clientCert`
 * is then the certificate the namespace registration presents.
 */
export async function startCluster(
  options: {
    dir?: string;
    log?: (line: string) => void;
    tls?: ClusterTls;
    clientCert?: ClusterClientCert;
  } = {},
): Promise<Cluster> {
  const dir = resolve(options.dir ?? defaultClusterDir());
  const log = options.log ?? ((line: string) => console.log(line));
  const tools = ensureClusterTools(log);
  const p = paths(dir);
  mkdirSync(p.logs, { recursive: true });
  mkdirSync(dirname(p.password), { recursive: true, mode: 0o700 });
  if (!existsSync(p.password)) writeFileSync(p.password, randomBytes(18).toString('base64url'), { mode: 0o600 });
  if (!existsSync(p.record)) {
    const record: ClusterRecord = {
      version: TEMPORAL_SERVER_VERSION,
      namespace: DEFAULT_NAMESPACE,
      historyShards: HISTORY_SHARDS,
      ports: await choosePorts(),
      pids: {},
      tools,
      ...(options.tls ? { tls: options.tls } : {}),
    };
    writeFileSync(p.record, `${JSON.stringify(record, null, 2)}\n`);
  }
  const cluster = openCluster(dir)!;
  cluster.record.tools = tools;
  if (cluster.record.version !== TEMPORAL_SERVER_VERSION) {
    throw new Error(
      `${dir} holds a cluster of Temporal ${cluster.record.version}; this script runs ${TEMPORAL_SERVER_VERSION} (upgrade its schema or use another REELFLOW_CLUSTER_DIR)`,
    );
  }

  log(`PostgreSQL ${tools.postgresBin} on 127.0.0.1:${cluster.postgres.port}`);
  initPostgres(cluster.postgres);
  if (postmasterPid(cluster.postgres) === null) await startPostgres(cluster.postgres);

  log('schemas: deploy/temporal/setup-schema.sh (temporal-sql-tool)');
  runDeployScript(DEPLOY_SCRIPTS.schema, {
    SQL_TOOL: tools.sqlTool,
    SCHEMA_DIR: tools.schemaDir,
    POSTGRES_SEEDS: '127.0.0.1',
    DB_PORT: String(cluster.postgres.port),
    POSTGRES_USER: DATABASE_USER,
    POSTGRES_PWD: cluster.postgres.password,
  });

  for (const role of ROLES) {
    log(`starting Temporal ${role}`);
    await startRole(cluster, role);
  }

  log(`namespace ${cluster.record.namespace} and search attributes: deploy/temporal/register-search-attributes.sh`);
  const cli = resolveTemporalBinary('cli', { install: true });
  if (!cli) throw new Error('the Temporal CLI is needed to register the namespace: run `npm run setup:temporal`');
  const tls = cluster.record.tls;
  if (tls && !options.clientCert) throw new Error('a TLS cluster needs a client certificate to register its namespace');
  runDeployScript(DEPLOY_SCRIPTS.init, {
    PATH: `${dirname(cli.path)}:${process.env.PATH ?? ''}`,
    TEMPORAL_ADDRESS: cluster.address,
    TEMPORAL_NAMESPACE: cluster.record.namespace,
    // The `temporal` CLI reads Temporal's standard TLS variables, the same ones reelflow reads.
    ...(tls && options.clientCert
      ? {
          TEMPORAL_TLS_CLIENT_CERT_PATH: options.clientCert.cert,
          TEMPORAL_TLS_CLIENT_KEY_PATH: options.clientCert.key,
          TEMPORAL_TLS_SERVER_CA_CERT_PATH: tls.caCert,
          TEMPORAL_TLS_SERVER_NAME: tls.serverName,
        }
      : {}),
  });
  return cluster;
}

/** Stops every role (SIGTERM, graceful), then PostgreSQL. State stays for the next start. */
export async function stopCluster(
  dir: string = defaultClusterDir(),
  log: (line: string) => void = console.log,
): Promise<boolean> {
  const cluster = openCluster(dir);
  if (!cluster) return false;
  for (const role of [...ROLES].reverse()) {
    const pid = cluster.record.pids[role];
    if (pid !== undefined && isAlive(pid) && runsBinary(pid, cluster.record.tools.server)) {
      log(`stopping Temporal ${role} (pid ${pid})`);
      await stopPid(pid);
    }
    delete cluster.record.pids[role];
  }
  save(cluster);
  log('stopping PostgreSQL');
  stopPostgres(cluster.postgres);
  return true;
}

/**
 * The route store in the cluster's PostgreSQL (REELFLOW_ROUTE_STORE for the workers and bridges run
 * against it): the server's default `postgres` database, beside Temporal's own.
 */
export function routeStoreUrl(cluster: Cluster): string {
  return `postgres://${DATABASE_USER}:${encodeURIComponent(cluster.postgres.password)}@127.0.0.1:${cluster.record.ports.postgres}/postgres`;
}

/** Human-readable addresses of a cluster. */
export function describeCluster(cluster: Cluster): string[] {
  const { ports } = cluster.record;
  return [
    `Temporal frontend (TEMPORAL_ADDRESS)  ${cluster.address}`,
    `Temporal HTTP API                     http://127.0.0.1:${ports.frontendHttp}`,
    `namespace (TEMPORAL_NAMESPACE)        ${cluster.record.namespace}`,
    `history / matching / worker gRPC      127.0.0.1:${ports.history} / 127.0.0.1:${ports.matching} / 127.0.0.1:${ports.worker}`,
    `history shards                        ${cluster.record.historyShards}`,
    `PostgreSQL                            127.0.0.1:${ports.postgres} user ${DATABASE_USER} (password in ${paths(cluster.dir).password})`,
    `route store (REELFLOW_ROUTE_STORE)    postgres://${DATABASE_USER}:…@127.0.0.1:${ports.postgres}/postgres`,
    `logs                                  ${paths(cluster.dir).logs}`,
    `Temporal server                       v${cluster.record.version}`,
  ];
}
