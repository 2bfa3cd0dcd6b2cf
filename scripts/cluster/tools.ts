import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { debianPostgresBin } from '../../src/routing/backup/postgres-tools';

/**
 * The Temporal server and temporal-sql-tool of one pinned version, built with `go install` through
 * the Go module proxy into `.tools/temporal-cluster/<version>/bin` (cached: a second run builds nothing).
 * The compose file pins the same version (test/repo/compose-file.test.ts keeps them equal).
 */
export const TEMPORAL_SERVER_VERSION = '1.32.0';

const ROOT = resolve(__dirname, '..', '..');
const MODULE = 'go.temporal.io/server';

export interface ClusterTools {
  server: string;
  sqlTool: string;
  /** `schema/postgresql/v12` of the same module version (holds `temporal/` and `visibility/`). */
  schemaDir: string;
  /** PostgreSQL's bin directory (initdb, pg_ctl, postgres). */
  postgresBin: string;
}

function goEnv(name: string): string {
  return execFileSync('go', ['env', name], { encoding: 'utf8' }).trim();
}

/** Builds whichever of the two binaries is missing; prints what it does (a cold build takes minutes). */
function ensureTemporalBinaries(log: (line: string) => void): { server: string; sqlTool: string; schemaDir: string } {
  const binDir = join(ROOT, '.tools', 'temporal-cluster', TEMPORAL_SERVER_VERSION, 'bin');
  const server = join(binDir, 'server');
  const sqlTool = join(binDir, 'sql');
  if (!existsSync(server) || !existsSync(sqlTool)) {
    if (spawnSync('go', ['version']).status !== 0)
      throw new Error('Go is needed to build the Temporal server (`go install`); install Go 1.24 or later');
    mkdirSync(binDir, { recursive: true });
    log(
      `building Temporal server and temporal-sql-tool v${TEMPORAL_SERVER_VERSION} with go install into ${binDir} (minutes on a cold cache)`,
    );
    const built = spawnSync(
      'go',
      [
        'install',
        `${MODULE}/cmd/server@v${TEMPORAL_SERVER_VERSION}`,
        `${MODULE}/cmd/tools/sql@v${TEMPORAL_SERVER_VERSION}`,
      ],
      {
        env: { ...process.env, GOBIN: binDir, GOFLAGS: `${process.env.GOFLAGS ?? ''} -buildvcs=false`.trim() },
        stdio: ['ignore', 'inherit', 'inherit'],
      },
    );
    if (built.status !== 0)
      throw new Error(`go install of Temporal v${TEMPORAL_SERVER_VERSION} failed (exit ${built.status})`);
  }
  const schemaDir = join(goEnv('GOMODCACHE'), `${MODULE}@v${TEMPORAL_SERVER_VERSION}`, 'schema', 'postgresql', 'v12');
  if (!existsSync(join(schemaDir, 'temporal', 'versioned'))) {
    // The module cache was cleaned since the build: fetch the module again (source only).
    execFileSync('go', ['mod', 'download', `${MODULE}@v${TEMPORAL_SERVER_VERSION}`], { stdio: 'inherit' });
  }
  return { server, sqlTool, schemaDir };
}

/** The newest PostgreSQL bin directory of the Debian layout, installing the package when missing and root. */
function ensurePostgres(log: (line: string) => void): string {
  const find = () => debianPostgresBin('pg_ctl');
  let bin = find();
  if (!bin && process.getuid?.() === 0 && spawnSync('apt-get', ['--version']).status === 0) {
    log('PostgreSQL not found: apt-get install postgresql');
    spawnSync('apt-get', ['install', '-y', '--no-install-recommends', 'postgresql'], { stdio: 'inherit' });
    bin = find();
  }
  if (!bin)
    throw new Error(
      'PostgreSQL server binaries not found under /usr/lib/postgresql/<version>/bin; install the `postgresql` package',
    );
  return bin;
}

/** Everything the cluster runs, installed when missing. */
export function ensureClusterTools(log: (line: string) => void = console.log): ClusterTools {
  return { ...ensureTemporalBinaries(log), postgresBin: ensurePostgres(log) };
}
