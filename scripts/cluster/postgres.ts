import { execFileSync, spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * One PostgreSQL server for the cluster, its data directory under the cluster's state folder.
 * PostgreSQL refuses to run as root, so when this runs as root every server command runs as the
 * `postgres` system user (runuser); otherwise as the current user.
 */
export interface PostgresServer {
  bin: string;
  /** Folder owned by the server's user: data/, server.log, the socket. */
  home: string;
  port: number;
  user: string;
  password: string;
}

const SYSTEM_USER = 'postgres';
const isRoot = () => process.getuid?.() === 0;
const dataDir = (pg: PostgresServer) => join(pg.home, 'data');

/** Runs a PostgreSQL command as the server's user. */
function run(pg: PostgresServer, command: string, args: string[]): { status: number | null; output: string } {
  const [file, argv] = isRoot()
    ? ['runuser', ['-u', SYSTEM_USER, '--', join(pg.bin, command), ...args]]
    : [join(pg.bin, command), args];
  const result = spawnSync(file, argv as string[], { encoding: 'utf8', cwd: pg.home });
  return { status: result.status, output: `${result.stdout ?? ''}${result.stderr ?? ''}` };
}

/** Creates the data directory (once): superuser = the cluster's database user, password auth on loopback. */
export function initPostgres(pg: PostgresServer): void {
  if (existsSync(join(dataDir(pg), 'PG_VERSION'))) return;
  mkdirSync(pg.home, { recursive: true, mode: 0o700 });
  const passwordFile = join(pg.home, 'initdb-password');
  writeFileSync(passwordFile, `${pg.password}\n`, { mode: 0o600 });
  if (isRoot()) {
    const ids = execFileSync('id', ['-u', SYSTEM_USER], { encoding: 'utf8' }).trim();
    const gid = execFileSync('id', ['-g', SYSTEM_USER], { encoding: 'utf8' }).trim();
    chownSync(pg.home, Number(ids), Number(gid));
    chownSync(passwordFile, Number(ids), Number(gid));
  }
  try {
    const init = run(pg, 'initdb', [
      '-D',
      dataDir(pg),
      '-U',
      pg.user,
      `--pwfile=${passwordFile}`,
      '--auth=scram-sha-256',
      '-E',
      'UTF8',
      '--locale=C',
    ]);
    if (init.status !== 0) throw new Error(`initdb failed:\n${init.output}`);
  } finally {
    rmSync(passwordFile, { force: true });
  }
}

/** pg_ctl start, retried while a SIGKILLed predecessor's backends still hold its shared memory. */
export async function startPostgres(pg: PostgresServer, timeoutMs = 60_000): Promise<void> {
  const options = `-p ${pg.port} -c listen_addresses=127.0.0.1 -k ${pg.home} -c max_connections=300`;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const started = run(pg, 'pg_ctl', [
      '-D',
      dataDir(pg),
      '-l',
      join(pg.home, 'server.log'),
      '-w',
      '-t',
      '60',
      '-o',
      options,
      'start',
    ]);
    if (started.status === 0) return;
    if (Date.now() > deadline)
      throw new Error(`PostgreSQL did not start:\n${started.output}\n${tail(join(pg.home, 'server.log'))}`);
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
}

/** Clean stop (fast mode: open transactions roll back). */
export function stopPostgres(pg: PostgresServer): void {
  if (postmasterPid(pg) === null) return;
  run(pg, 'pg_ctl', ['-D', dataDir(pg), '-m', 'fast', '-w', 'stop']);
}

/** The running postmaster's pid, or null. */
export function postmasterPid(pg: PostgresServer): number | null {
  const file = join(dataDir(pg), 'postmaster.pid');
  if (!existsSync(file)) return null;
  const pid = Number(readFileSync(file, 'utf8').split('\n')[0]);
  if (!Number.isInteger(pid) || pid <= 0) return null;
  try {
    process.kill(pid, 0);
    return pid;
  } catch {
    return null;
  }
}

function tail(file: string): string {
  return existsSync(file) ? readFileSync(file, 'utf8').split('\n').slice(-20).join('\n') : '';
}
