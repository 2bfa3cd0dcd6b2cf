import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openPostgresRouteStore } from '../../src/routing/postgres-store';
import type { RouteStore } from '../../src/routing/store';
import { startTestPostgres, type TestPostgres } from '../helpers/postgres';

/**
 * deploy/postgres/init-route-store.sh, the script the compose stack's PostgreSQL runs on its first
 * start, run for real against PostgreSQL 15: it makes the route store's own role and database, the
 * route store works as that role, and the role is no superuser (it cannot reach Temporal's data).
 */

const SCRIPT = join(__dirname, '../../deploy/postgres/init-route-store.sh');
const PASSWORD = 'route-store-test-password-4f9c';

let postgres: TestPostgres;
let dir: string;
let store: RouteStore | undefined;

function runScript(passwordFile: string): string {
  const url = new URL(postgres.url);
  return execFileSync('sh', [SCRIPT], {
    encoding: 'utf8',
    env: {
      PATH: process.env.PATH,
      PGHOST: url.hostname,
      PGPORT: url.port,
      PGPASSWORD: decodeURIComponent(url.password),
      POSTGRES_USER: decodeURIComponent(url.username),
      REELFLOW_ROUTE_STORE_PASSWORD_FILE: passwordFile,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

function psqlAs(user: string, password: string, database: string, sql: string): string {
  const url = new URL(postgres.url);
  return execFileSync(
    'psql',
    ['-tA', '-v', 'ON_ERROR_STOP=1', '-h', url.hostname, '-p', url.port, '-U', user, '-d', database, '-c', sql],
    {
      encoding: 'utf8',
      env: { PATH: process.env.PATH, PGPASSWORD: password },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  ).trim();
}

beforeAll(async () => {
  postgres = await startTestPostgres();
  dir = mkdtempSync(join(tmpdir(), 'route-store-role-'));
});

afterAll(async () => {
  await store?.close();
  postgres?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('the route store role made by deploy/postgres/init-route-store.sh', () => {
  it('makes role and database; the route store works as that role; running it again changes nothing', async () => {
    const passwordFile = join(dir, 'route_store_password');
    writeFileSync(passwordFile, `${PASSWORD}\n`);
    expect(runScript(passwordFile)).toContain('route store ready: role reelflow_routes, database reelflow_routes');
    expect(runScript(passwordFile)).toContain('route store ready');

    const url = new URL(postgres.url);
    store = openPostgresRouteStore(
      `postgres://reelflow_routes:${PASSWORD}@${url.hostname}:${url.port}/reelflow_routes`,
    );
    const requestId = `req-${process.pid}`;
    await store.append([{ eventId: 'evt-1', requestId, body: '{"event_id":"evt-1"}' }], 1_000);
    expect(await store.subscribe({ requestId, workflowId: 'wf-1', signalName: 'jobEvent' }, 2_000)).toEqual([
      '{"event_id":"evt-1"}',
    ]);
  });

  it('the role is no superuser and cannot make roles or databases', () => {
    expect(
      psqlAs(
        'reelflow_routes',
        PASSWORD,
        'reelflow_routes',
        'SELECT rolsuper, rolcreatedb, rolcreaterole FROM pg_roles WHERE rolname = current_user',
      ),
    ).toBe('f|f|f');
    expect(() => psqlAs('reelflow_routes', PASSWORD, 'reelflow_routes', 'CREATE DATABASE stolen')).toThrow(
      /permission denied/,
    );
  });

  it('refuses an empty password file and writes nothing', () => {
    const empty = join(dir, 'empty');
    writeFileSync(empty, '\n');
    expect(() => runScript(empty)).toThrow(/is empty/);
  });
});
