import { mkdtempSync, writeFileSync } from 'node:fs';
import { DatabaseSync } from 'node:sqlite';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { Client as PgClient } from 'pg';
import { createBridgeApp } from '../../src/bridge';
import { Inbox, openPostgresRouteStore, openSqliteRouteStore, type RouteStore } from '../../src/routing';
import { migrateSqlite, ROUTE_STORE_MIGRATIONS, ROUTE_STORE_SCHEMA_VERSION } from '../../src/routing/migrations';
import { freePort } from '../../src/stack/stack-state';
import { startTestPostgres, type TestPostgres } from '../helpers/postgres';
import { deliver, makeEvent } from './bridge-fixtures';
import { jsonOf, runCli } from './cli-process';

/**
 * `reelflow route-store backup` taken while a bridge acknowledges real signed deliveries, then the
 * store lost and `reelflow route-store restore` into a fresh one, on SQLite and PostgreSQL. The
 * sender follows the service's delivery rules (docs/service-api.md: retried after 1, 2, 4, 8, 16 s,
 * 6 attempts): every delivery acknowledged before the backup began is in the restored store, every
 * one sent while the bridge was down is delivered by a retry once it is back, and the only ones
 * missing were acknowledged between the backup and the loss (the window docs/operations.md bounds).
 */

const SECRETS = ['whsec_backup_0123456789'];
const RETRY_DELAYS_MS = [1_000, 2_000, 4_000, 8_000, 16_000];

/** One delivery as the sender saw it. */
interface Sent {
  eventId: string;
  /** When the bridge acknowledged it (2xx), if it did. */
  ackedAt?: number;
  /** Attempts refused or unanswered before the acknowledgement. */
  failedAttempts: number;
}

/** A sender that keeps delivering new events on `lanes` lanes until stopped, retrying as the service does. */
function startSender(url: string, lanes: number) {
  const sent: Sent[] = [];
  let stopping = false;
  const deliverOne = async () => {
    const event = makeEvent();
    const record: Sent = { eventId: event.event_id, failedAttempts: 0 };
    sent.push(record);
    for (let attempt = 0; ; attempt += 1) {
      const status = await deliver(url, event, SECRETS).then(
        (answer) => answer.status,
        () => 0,
      );
      if (status >= 200 && status < 300) {
        record.ackedAt = Date.now();
        return;
      }
      record.failedAttempts += 1;
      const delay = RETRY_DELAYS_MS[attempt];
      if (delay === undefined) return;
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
  };
  const running = Promise.all(
    Array.from({ length: lanes }, async () => {
      while (!stopping) await deliverOne();
    }),
  );
  return {
    sent,
    acked: () => sent.filter((s) => s.ackedAt !== undefined).length,
    /** Stops starting new deliveries and waits until each one is acknowledged or given up. */
    stop: async () => {
      stopping = true;
      await running;
    },
  };
}

async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 20));
}

/** A bridge (real HTTP, real signatures) whose inbox is `store`, on `port`. */
async function startBridge(store: RouteStore, port: number): Promise<FastifyInstance> {
  const app = await createBridgeApp({
    secrets: SECRETS,
    sink: new Inbox({ store, backlogLimit: 1_000_000 }),
    logger: false,
  });
  await app.listen({ host: '127.0.0.1', port });
  return app;
}

let postgres: TestPostgres;
let databases = 0;

beforeAll(async () => {
  postgres = await startTestPostgres();
}, 120_000);

afterAll(() => postgres?.close());

/** A store location per backend: a new SQLite file, or a new database on the test server. */
const backends: [string, () => Promise<{ location: string; open: () => RouteStore }>][] = [
  [
    'sqlite',
    async () => {
      const file = join(mkdtempSync(join(tmpdir(), 'route-backup-')), 'routes.sqlite');
      return { location: `sqlite:${file}`, open: () => openSqliteRouteStore(file) };
    },
  ],
  [
    'postgres',
    async () => {
      const name = `routes_${(databases += 1)}`;
      const admin = new PgClient({ connectionString: postgres.url });
      await admin.connect();
      await admin.query(`CREATE DATABASE ${name}`);
      await admin.end();
      const url = postgres.url.replace(/\/postgres$/, `/${name}`);
      return { location: url, open: () => openPostgresRouteStore(url) };
    },
  ],
];

/** Event ids in a store's inbox. */
async function storedIds(store: RouteStore): Promise<Set<string>> {
  // Nothing forwarded them, so every row is pending: claiming them all (far in the future, past any due time) lists them.
  const claimed = await store.claim(1_000_000, Date.now() + 86_400_000, 3_600_000);
  return new Set(claimed.map((row) => row.eventId));
}

describe.each(backends)('route-store backup and restore on %s', (_name, newStore) => {
  it('keeps every delivery acknowledged before the backup and takes the retried ones after the restore', async () => {
    const scratch = mkdtempSync(join(tmpdir(), 'route-backup-file-'));
    const backupFile = join(scratch, 'routes.backup');
    const first = await newStore();
    const port = await freePort();
    let store = first.open();
    let bridge = await startBridge(store, port);
    const sender = startSender(`http://127.0.0.1:${port}/webhooks`, 4);

    await until(() => sender.acked() >= 50);
    const backupStarted = Date.now();
    const backup = await runCli(['route-store', 'backup', backupFile, '--json'], {
      REELFLOW_ROUTE_STORE: first.location,
    });
    expect(backup.stderr).toBe('');
    expect(backup.code).toBe(0);
    expect(jsonOf<{ schemaVersion: number }>(backup).schemaVersion).toBe(ROUTE_STORE_SCHEMA_VERSION);
    expect(backup.stdout).not.toContain('reelflow-test-password');
    // Deliveries go on while the backup runs and after it; then the store is lost with its bridge.
    const ackedByBackupEnd = sender.acked();
    await until(() => sender.acked() >= ackedByBackupEnd + 20);
    await bridge.close();
    await store.close();

    const second = await newStore();
    const restore = await runCli(['route-store', 'restore', backupFile, '--json'], {
      REELFLOW_ROUTE_STORE: second.location,
    });
    expect(restore.stderr).toBe('');
    expect(restore.code).toBe(0);
    store = second.open();
    // Every acknowledgement before this came from the lost store's bridge.
    const restartedAt = Date.now();
    bridge = await startBridge(store, port);
    await until(() => sender.sent.filter((s) => s.failedAttempts > 0 && s.ackedAt !== undefined).length >= 4);
    await sender.stop();
    await bridge.close();

    const stored = await storedIds(store);
    await store.close();
    const ackedBeforeBackup = sender.sent.filter((s) => s.ackedAt! <= backupStarted);
    const retried = sender.sent.filter((s) => s.failedAttempts > 0);
    const missing = sender.sent.filter((s) => !stored.has(s.eventId));
    expect(ackedBeforeBackup.length).toBeGreaterThanOrEqual(50);
    expect(ackedBeforeBackup.filter((s) => !stored.has(s.eventId))).toEqual([]);
    // Sent while the bridge was down: acknowledged on a retry, into the restored store.
    expect(retried.length).toBeGreaterThan(0);
    expect(retried.filter((s) => s.ackedAt === undefined || !stored.has(s.eventId))).toEqual([]);
    // What the restore cannot have: acknowledged by the lost store's bridge after the backup began.
    expect(missing.filter((s) => !(s.ackedAt! >= backupStarted && s.ackedAt! < restartedAt))).toEqual([]);
    expect(missing.length).toBeGreaterThan(0);
  });
});

describe('route-store restore refuses', () => {
  const scratch = () => mkdtempSync(join(tmpdir(), 'route-restore-'));

  it('a backup a later release made, leaving the store as it was', async () => {
    const dir = scratch();
    const later = new DatabaseSync(join(dir, 'later.sqlite'));
    const next = {
      version: ROUTE_STORE_SCHEMA_VERSION + 1,
      name: 'a later release',
      sqlite: ['CREATE TABLE later (x INTEGER)'],
      postgres: [],
    };
    migrateSqlite(later, 'later.sqlite', [...ROUTE_STORE_MIGRATIONS, next]);
    later.close();
    const target = join(dir, 'routes.sqlite');
    await openSqliteRouteStore(target).close();
    const result = await runCli(['route-store', 'restore', join(dir, 'later.sqlite')], {
      REELFLOW_ROUTE_STORE: `sqlite:${target}`,
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(
      `has schema ${ROUTE_STORE_SCHEMA_VERSION + 1}, newer than this reelflow (knows ${ROUTE_STORE_SCHEMA_VERSION}): restore it with the release that made it`,
    );
    const store = openSqliteRouteStore(target);
    expect(await store.ping()).toBe(true);
    await store.close();
  });

  it('a file that is not a route-store backup', async () => {
    const dir = scratch();
    writeFileSync(join(dir, 'notes.txt'), 'not a database');
    const result = await runCli(['route-store', 'restore', join(dir, 'notes.txt')], {
      REELFLOW_ROUTE_STORE: `sqlite:${join(dir, 'routes.sqlite')}`,
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('notes.txt is not a route-store backup');
  });
});
