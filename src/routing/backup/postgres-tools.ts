import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { RouteStoreBackupError } from '../errors';

/**
 * The newest `/usr/lib/postgresql/<version>/bin` holding `program` (Debian's layout, where PostgreSQL 15's
 * are on this machine), or null: the one lookup of the backup commands, the test servers and `npm run cluster`.
 */
export function debianPostgresBin(program: string): string | null {
  const base = '/usr/lib/postgresql';
  if (!existsSync(base)) return null;
  const versions = readdirSync(base)
    .map(Number)
    .filter((v) => Number.isInteger(v) && existsSync(join(base, String(v), 'bin', program)));
  return versions.length > 0 ? join(base, String(Math.max(...versions)), 'bin') : null;
}

/**
 * The directory of `pg_dump` and `pg_restore`: `explicit` (`--pg-bin`), else the newest Debian one (above),
 * else whatever `PATH` has (null). pg_dump must be at least the server's version.
 */
export function postgresBinDir(explicit?: string): string | null {
  return explicit ?? debianPostgresBin('pg_dump');
}

/**
 * libpq's view of `url`: the URL without its password (safe on a command line, which `ps` shows)
 * and the password for PGPASSWORD.
 */
export function connectionOf(url: string): { dbname: string; env: NodeJS.ProcessEnv } {
  const parsed = new URL(url);
  const password = decodeURIComponent(parsed.password);
  parsed.password = '';
  return { dbname: parsed.toString(), env: password ? { PGPASSWORD: password } : {} };
}

/** Runs one of PostgreSQL's client tools; returns its stdout, throws with its stderr. */
export function runPostgresTool(
  tool: 'pg_dump' | 'pg_restore',
  args: string[],
  options: { binDir?: string | null; env?: NodeJS.ProcessEnv; what: string },
): string {
  const command = options.binDir ? join(options.binDir, tool) : tool;
  const result = spawnSync(command, args, {
    // The tool inherits this process's environment (PATH, PGSSLROOTCERT, …) plus the password; nothing is read from it here.
    // eslint-disable-next-line no-restricted-properties
    env: { ...process.env, ...options.env },
    encoding: 'utf8',
    maxBuffer: 256 * 1024 * 1024,
    timeout: 3_600_000,
  });
  if (result.error)
    throw new RouteStoreBackupError(
      `${options.what}: cannot run ${command} (${result.error.message}); install PostgreSQL's client tools or pass --pg-bin <dir>`,
      { cause: result.error },
    );
  if (result.status !== 0)
    throw new RouteStoreBackupError(`${options.what}: ${tool} exited ${result.status}: ${result.stderr.trim()}`);
  return result.stdout;
}
