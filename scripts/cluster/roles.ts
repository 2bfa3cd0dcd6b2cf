import { spawn } from 'node:child_process';
import { closeSync, existsSync, openSync, readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join, resolve } from 'node:path';

/** The four Temporal server roles, each its own process (`temporal-server start --service <role>`). */
export const ROLES = ['history', 'matching', 'frontend', 'worker'] as const;
export type Role = (typeof ROLES)[number];

const ROOT = resolve(__dirname, '..', '..');
/** One config template for every role and for docker-compose.yml; rendered by the server itself. */
export const CONFIG_TEMPLATE = join(ROOT, 'deploy', 'temporal', 'config', 'temporal.yaml');
/** The dynamic config the compose file mounts too. */
export const DYNAMIC_CONFIG = join(ROOT, 'deploy', 'temporal', 'dynamicconfig', 'production.yaml');

/** Ports of one cluster (chosen free on its first start, then kept). */
export interface ClusterPorts {
  postgres: number;
  frontend: number;
  frontendHttp: number;
  frontendMembership: number;
  history: number;
  historyMembership: number;
  matching: number;
  matchingMembership: number;
  worker: number;
  workerMembership: number;
}

/**
 * TLS on the frontend, with client certificates required (files, PEM). The frontend's certificate must
 * carry `serverName` and both serverAuth and clientAuth: the worker role presents it to the frontend.
 */
export interface ClusterTls {
  frontendCert: string;
  frontendKey: string;
  /** CA that signs the clients' certificates (and the frontend's). */
  caCert: string;
  /** Name in the frontend's certificate, which clients must ask for. */
  serverName: string;
}

/** What every role process gets: the database, its shards and everyone's ports (membership needs them). */
export interface RoleSettings {
  server: string;
  ports: ClusterPorts;
  historyShards: number;
  database: { host: string; user: string; password: string };
  logDir: string;
  tls?: ClusterTls;
}

/** Environment of a role process: the variables deploy/temporal/config/temporal.yaml reads. */
export function roleEnvironment(settings: RoleSettings): Record<string, string> {
  const p = settings.ports;
  return {
    LOG_LEVEL: 'info',
    NUM_HISTORY_SHARDS: String(settings.historyShards),
    POSTGRES_SEEDS: settings.database.host,
    DB_PORT: String(p.postgres),
    POSTGRES_USER: settings.database.user,
    POSTGRES_PWD: settings.database.password,
    BIND_ON_IP: '127.0.0.1',
    TEMPORAL_BROADCAST_ADDRESS: '127.0.0.1',
    FRONTEND_GRPC_PORT: String(p.frontend),
    FRONTEND_HTTP_PORT: String(p.frontendHttp),
    FRONTEND_MEMBERSHIP_PORT: String(p.frontendMembership),
    HISTORY_GRPC_PORT: String(p.history),
    HISTORY_MEMBERSHIP_PORT: String(p.historyMembership),
    MATCHING_GRPC_PORT: String(p.matching),
    MATCHING_MEMBERSHIP_PORT: String(p.matchingMembership),
    WORKER_GRPC_PORT: String(p.worker),
    WORKER_MEMBERSHIP_PORT: String(p.workerMembership),
    DYNAMIC_CONFIG_FILE_PATH: DYNAMIC_CONFIG,
    ...(settings.tls
      ? {
          TEMPORAL_TLS_FRONTEND_CERT: settings.tls.frontendCert,
          TEMPORAL_TLS_FRONTEND_KEY: settings.tls.frontendKey,
          TEMPORAL_TLS_REQUIRE_CLIENT_AUTH: 'true',
          TEMPORAL_TLS_CLIENT1_CA_CERT: settings.tls.caCert,
          TEMPORAL_TLS_FRONTEND_SERVER_NAME: settings.tls.serverName,
          TEMPORAL_TLS_FRONTEND_SERVER_ROOT_CA_CERT: settings.tls.caCert,
        }
      : {}),
  };
}

/** The command line of a role (also what docker-compose.yml runs, with the container's paths). */
export function roleArgs(role: Role): string[] {
  return ['--config-file', CONFIG_TEMPLATE, '--allow-no-auth', 'start', '--service', role];
}

/** Starts a role detached (it outlives `npm run cluster`), output appended to logs/<role>.log; returns its pid. */
export function spawnRole(role: Role, settings: RoleSettings): number {
  const log = openSync(join(settings.logDir, `temporal-${role}.log`), 'a');
  try {
    const child = spawn(settings.server, roleArgs(role), {
      detached: true,
      stdio: ['ignore', log, log],
      env: {
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        HOME: process.env.HOME ?? '/tmp',
        ...roleEnvironment(settings),
      },
    });
    child.unref();
    if (child.pid === undefined) throw new Error(`could not start the ${role} role`);
    return child.pid;
  } finally {
    closeSync(log);
  }
}

/** The gRPC port a role answers on once it is up. */
export function rolePort(role: Role, ports: ClusterPorts): number {
  return ports[role];
}

/** True while `pid` runs (a zombie, killed but not yet reaped, counts as gone). */
export function isAlive(pid: number): boolean {
  const stat = `/proc/${pid}/stat`;
  if (existsSync(stat)) {
    try {
      return !/^\d+ \(.*\) Z/.test(readFileSync(stat, 'utf8'));
    } catch {
      return false;
    }
  }
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** True when `pid` is a process of `binary` (guards against a recycled pid before signalling it). */
export function runsBinary(pid: number, binary: string): boolean {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')[0] === binary;
  } catch {
    return false;
  }
}

/** Resolves once something accepts TCP connections on 127.0.0.1:`port`. */
export async function waitForPort(
  port: number,
  label: string,
  timeoutMs = 90_000,
  alive: () => boolean = () => true,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const open = await new Promise<boolean>((done) => {
      const socket = connect({ host: '127.0.0.1', port });
      socket.once('connect', () => {
        socket.destroy();
        done(true);
      });
      socket.once('error', () => done(false));
    });
    if (open) return;
    if (!alive()) throw new Error(`${label} exited before listening on ${port}`);
    if (Date.now() > deadline) throw new Error(`${label} is not listening on ${port} after ${timeoutMs / 1000} s`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** SIGTERM (or `signal`), then waits for the process to be gone; SIGKILL after `graceMs`. */
export async function stopPid(pid: number, signal: NodeJS.Signals = 'SIGTERM', graceMs = 20_000): Promise<void> {
  try {
    process.kill(pid, signal);
  } catch {
    return;
  }
  const deadline = Date.now() + graceMs;
  while (isAlive(pid)) {
    if (Date.now() > deadline) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        return;
      }
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}
