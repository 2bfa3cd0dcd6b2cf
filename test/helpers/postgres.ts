import { mkdtempSync, rmSync, chmodSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { initPostgres, startPostgres, stopPostgres, type PostgresServer } from '../../scripts/cluster/postgres';
import { debianPostgresBin } from '../../src/routing/backup/postgres-tools';
import { freePort } from '../../src/stack/stack-state';

/** A throwaway PostgreSQL server for one test file. */
export interface TestPostgres {
  /** `postgres://…` of its database. */
  url: string;
  /** Stops the server (fast: open transactions roll back); `start` brings it back with its data. */
  stop(): void;
  start(): Promise<void>;
  /** Stops it and deletes its data. */
  close(): void;
}

/** The newest PostgreSQL server bin directory of the Debian layout (the one `npm run cluster` uses). */
function postgresBin(): string {
  const bin = debianPostgresBin('pg_ctl');
  if (!bin) throw new Error('PostgreSQL server binaries not found under /usr/lib/postgresql/<version>/bin');
  return bin;
}

/**
 * Starts a PostgreSQL server on a free loopback port with initdb/pg_ctl, as `scripts/cluster` does
 * (as the `postgres` system user when the tests run as root), its data in a temporary folder.
 */
export async function startTestPostgres(): Promise<TestPostgres> {
  const home = mkdtempSync(join(tmpdir(), 'reelflow-pg-'));
  // The server's user must reach its folder.
  chmodSync(home, 0o755);
  const server: PostgresServer = {
    bin: postgresBin(),
    home: join(home, 'pg'),
    port: await freePort(),
    user: 'reelflow',
    password: 'reelflow-test-password',
  };
  initPostgres(server);
  await startPostgres(server);
  return {
    url: `postgres://${server.user}:${server.password}@127.0.0.1:${server.port}/postgres`,
    stop: () => stopPostgres(server),
    start: () => startPostgres(server),
    close: () => {
      stopPostgres(server);
      rmSync(home, { recursive: true, force: true });
    },
  };
}
