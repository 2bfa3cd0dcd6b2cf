import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { Client as PgClient } from 'pg';
import {
  openPostgresRouteStore,
  openSqliteRouteStore,
  RouteStoreSchemaError,
  type RouteStore,
} from '../../../../src/routing';
import {
  migratePostgres,
  migrateSqlite,
  pendingMigrations,
  ROUTE_STORE_MIGRATIONS,
  ROUTE_STORE_SCHEMA_VERSION,
  type RouteStoreMigration,
} from '../../../../src/routing/migrations';
import { startTestPostgres, type TestPostgres } from '../../../helpers/postgres';

/**
 * The route store's schema versions on both backends: a store made by 0.3.0 (its DDL frozen in
 * test/fixtures/route-store) is recognised as version 1 and migrated forward with its rows; a store
 * newer than the code is refused untouched; two openers of one PostgreSQL database migrate once.
 */

const FIXTURES = join(__dirname, '..', '..', '..', 'fixtures', 'route-store');
/** The previous release's DDL in `dialect`, one statement per entry. */
const previousSchema = (dialect: 'sqlite' | 'postgres') =>
  readFileSync(join(FIXTURES, `schema-0.3.0.${dialect}.sql`), 'utf8')
    .replace(/^--.*$/gm, '')
    .split(';')
    .map((s) => s.trim())
    .filter(Boolean);

/** A later release's migration, as a test stands in for one: a column and an index, both dialects. */
const laterMigration: RouteStoreMigration = {
  version: ROUTE_STORE_SCHEMA_VERSION + 1,
  name: 'test: routes remember their pipeline step',
  sqlite: [
    'ALTER TABLE reelflow_routes ADD COLUMN note TEXT',
    'CREATE INDEX reelflow_routes_note ON reelflow_routes (note)',
  ],
  postgres: [
    'ALTER TABLE reelflow_routes ADD COLUMN note TEXT',
    'CREATE INDEX reelflow_routes_note ON reelflow_routes (note)',
  ],
};
const withLater = [...ROUTE_STORE_MIGRATIONS, laterMigration];
/** Versions 1 … n. */
const upTo = (n: number) => Array.from({ length: n }, (_, i) => i + 1);
const CURRENT = ROUTE_STORE_SCHEMA_VERSION;
const LATER = CURRENT + 1;
/** A version no release of this code knows. */
const FUTURE = LATER + 1;

/** What 0.3.0 left behind: a subscribed request, a delivery for another request, a prepared submit. */
const OLD_ROWS = [
  `INSERT INTO reelflow_routes (request_id, workflow_id, signal_name, step_key, created_at)
   VALUES ('req-old', 'pipeline-old', 'jobEvent', 'hero/job/0', 1000)`,
  `INSERT INTO reelflow_inbox (event_id, request_id, body, received_at, due_at, state)
   VALUES ('evt-old', 'req-early', '{"event_id":"evt-old"}', 1000, 1000, 0)`,
  `INSERT INTO reelflow_prepared (request_id, workflow_id, chain, created_at)
   VALUES ('req-old', 'pipeline-old', '{"chain":1}', 1000)`,
];

describe('migration list', () => {
  it('is numbered 1, 2, 3, … in order; a gap is refused before any DDL runs', () => {
    ROUTE_STORE_MIGRATIONS.forEach((m, i) => expect(m.version).toBe(i + 1));
    const gap = [...ROUTE_STORE_MIGRATIONS, { ...laterMigration, version: ROUTE_STORE_SCHEMA_VERSION + 2 }];
    expect(() => pendingMigrations('x', 0, gap)).toThrow(
      new RegExp(`has version ${CURRENT + 2} at position ${CURRENT + 1}`),
    );
  });

  it('a store newer than the code is refused with both versions and what to do', () => {
    expect(() => pendingMigrations('routes.sqlite', FUTURE, withLater)).toThrow(
      `route store schema ${FUTURE} is newer than this reelflow (knows ${LATER}): upgrade reelflow or restore a backup taken before the upgrade (routes.sqlite)`,
    );
  });
});

describe('SQLite route store schema', () => {
  const file = () => join(mkdtempSync(join(tmpdir(), 'route-migrate-')), 'routes.sqlite');
  const versions = (path: string) => {
    const db = new DatabaseSync(path);
    try {
      return (
        db.prepare('SELECT version FROM reelflow_schema_version ORDER BY version').all() as { version: number }[]
      ).map((r) => Number(r.version));
    } finally {
      db.close();
    }
  };

  it("recognises 0.3.0's store as version 1, keeps its rows, and migrates it forward", async () => {
    const path = file();
    const old = new DatabaseSync(path);
    for (const statement of [...previousSchema('sqlite'), ...OLD_ROWS]) old.exec(statement);
    old.close();

    const store = openSqliteRouteStore(path);
    expect(versions(path)).toEqual(upTo(CURRENT));
    // The early delivery is handed to the subscribe that comes now; the prepared submit is still there.
    expect(await store.subscribe({ requestId: 'req-early', workflowId: 'p', signalName: 's' }, 2_000)).toEqual([
      '{"event_id":"evt-old"}',
    ]);
    expect(await store.takePrepared('req-old', 2_000, 60_000)).toEqual({
      workflowId: 'pipeline-old',
      chain: '{"chain":1}',
    });
    await store.close();

    const db = new DatabaseSync(path);
    expect(migrateSqlite(db, path, withLater)).toEqual([LATER]);
    expect(migrateSqlite(db, path, withLater)).toEqual([]);
    expect(db.prepare("SELECT workflow_id, note FROM reelflow_routes WHERE request_id = 'req-old'").get()).toEqual({
      workflow_id: 'pipeline-old',
      note: null,
    });
    db.close();
    expect(versions(path)).toEqual(upTo(LATER));
  });

  it('refuses a store a later release migrated, and leaves it as it was', () => {
    const path = file();
    const db = new DatabaseSync(path);
    migrateSqlite(db, path, withLater);
    db.close();
    expect(() => openSqliteRouteStore(path)).toThrow(RouteStoreSchemaError);
    expect(() => openSqliteRouteStore(path)).toThrow(
      `route store schema ${LATER} is newer than this reelflow (knows ${CURRENT})`,
    );
    expect(versions(path)).toEqual(upTo(LATER));
  });

  it('a new file gets every migration once', () => {
    const path = file();
    const db = new DatabaseSync(path);
    expect(migrateSqlite(db, path, ROUTE_STORE_MIGRATIONS)).toEqual(upTo(CURRENT));
    expect(migrateSqlite(db, path, ROUTE_STORE_MIGRATIONS)).toEqual([]);
    db.close();
  });
});

describe('PostgreSQL route store schema', () => {
  let postgres: TestPostgres;
  const opened: RouteStore[] = [];
  const clients: PgClient[] = [];
  let databases = 0;

  beforeAll(async () => {
    postgres = await startTestPostgres();
  }, 120_000);

  afterAll(async () => {
    for (const store of opened) await store.close();
    for (const client of clients) await client.end();
    postgres?.close();
  });

  /** A new empty database on the test server, and its URL. */
  async function freshDatabase(): Promise<string> {
    const name = `routes_${(databases += 1)}`;
    await connect(postgres.url).then((c) => c.query(`CREATE DATABASE ${name}`));
    return postgres.url.replace(/\/postgres$/, `/${name}`);
  }
  async function connect(url: string): Promise<PgClient> {
    const client = new PgClient({ connectionString: url });
    clients.push(client);
    await client.connect();
    return client;
  }
  const open = (url: string) => {
    const store = openPostgresRouteStore(url);
    opened.push(store);
    return store;
  };

  it("recognises 0.3.0's store as version 1, keeps its rows, and migrates it forward", async () => {
    const url = await freshDatabase();
    const sql = await connect(url);
    for (const statement of [...previousSchema('postgres'), ...OLD_ROWS]) await sql.query(statement);

    const store = open(url);
    expect(await store.subscribe({ requestId: 'req-early', workflowId: 'p', signalName: 's' }, 2_000)).toEqual([
      '{"event_id":"evt-old"}',
    ]);
    expect((await sql.query('SELECT version FROM reelflow_schema_version ORDER BY version')).rows).toEqual(
      upTo(CURRENT).map((version) => ({ version })),
    );
    // The sequence 0.3.0 created keeps counting: a new delivery gets the next seq.
    expect(await store.append([{ eventId: 'evt-new', requestId: 'req-x', body: '{}' }], 3_000)).toBe(1);
    expect((await sql.query("SELECT seq FROM reelflow_inbox WHERE event_id = 'evt-new'")).rows).toEqual([{ seq: '2' }]);

    expect(await migratePostgres(sql, url, withLater)).toEqual([LATER]);
    expect((await sql.query("SELECT note FROM reelflow_routes WHERE request_id = 'req-old'")).rows).toEqual([
      { note: null },
    ]);
  });

  it('refuses a database a later release migrated, on every call, and leaves it as it was', async () => {
    const url = await freshDatabase();
    const sql = await connect(url);
    await migratePostgres(sql, url, withLater);
    await sql.query(`INSERT INTO reelflow_schema_version VALUES (${FUTURE}, 'from the future', 0)`);
    const store = open(url);
    const refused = store.append([{ eventId: 'e', requestId: 'r', body: '{}' }], 1);
    await expect(refused).rejects.toBeInstanceOf(RouteStoreSchemaError);
    await expect(refused).rejects.toThrow(
      new RegExp(
        `^route store schema ${FUTURE} is newer than this reelflow \\(knows ${CURRENT}\\): upgrade reelflow or restore a backup taken before the upgrade \\(postgres://reelflow@127\\.0\\.0\\.1:\\d+/routes_\\d+\\)$`,
      ),
    );
    expect(await store.ping()).toBe(false);
    expect((await sql.query('SELECT count(*)::int AS n FROM reelflow_inbox')).rows).toEqual([{ n: 0 }]);
  });

  it('two openers of one new database at once: one migrates, the other finds it done', async () => {
    const url = await freshDatabase();
    const [a, b] = [await connect(url), await connect(url)];
    const applied = await Promise.all([
      migratePostgres(a, url, ROUTE_STORE_MIGRATIONS),
      migratePostgres(b, url, ROUTE_STORE_MIGRATIONS),
    ]);
    expect(applied.map((v) => v.join(',')).sort()).toEqual(['', upTo(CURRENT).join(',')]);
    // Two stores (two workers starting together) on another new database: both answer, one row per version.
    const other = await freshDatabase();
    const stores = [open(other), open(other)];
    expect(await Promise.all(stores.map((s) => s.ping()))).toEqual([true, true]);
    const rows = await (await connect(other)).query('SELECT version FROM reelflow_schema_version ORDER BY version');
    expect(rows.rows).toEqual(upTo(CURRENT).map((version) => ({ version })));
  });
});
