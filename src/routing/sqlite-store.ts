import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { DatabaseSync, type StatementSync } from 'node:sqlite';
import { migrateSqlite, ROUTE_STORE_MIGRATIONS } from './migrations';
import {
  answers,
  INBOX_STATE,
  PREPARED_STATE,
  type ClaimedDelivery,
  type InboxEntry,
  type InboxMethods,
  type RouteStore,
  type Subscription,
} from './store';
import { RouteStoreSchemaError, RouteStoreUnavailableError } from './errors';
import { traceLinksOver, type TraceLinks } from './trace-links';
import { purgeProgram, slotStoreOver, type SlotProgram, type SlotRow } from './slot-programs';

/** Options of the embedded store. */
export interface SqliteRouteStoreOptions {
  /**
   * `normal` (default; WAL mode): a commit is in the operating system's hands when it returns, so an
   * acknowledged delivery survives a killed process (-9), not a power cut, and a commit does not
   * block the event loop on a disk sync. `full` syncs every commit to disk (survives a power cut),
   * at about half the bridge's acknowledgement rate on the machine measured (docs/decisions/bridge.md).
   */
  synchronous?: 'full' | 'normal';
  /** How long a statement waits for another process's write lock. Default 5 s. */
  busyTimeoutMs?: number;
  /**
   * `auto` (default): SQLite checkpoints the WAL into the database when a commit takes it past 1,000
   * pages, inside that commit. `caller`: commits never do; the caller runs `checkpoint()` when it has
   * time. The bridge's store is `caller`: a checkpoint syncs to disk on the event loop, and taken
   * inside a burst's group commits it stalled acknowledgements for 6–9 ms and doubled a delivery's
   * share of the commits (docs/decisions/bridge.md, "Checkpoints off the commit path").
   */
  checkpoints?: 'auto' | 'caller';
}

interface Row {
  [key: string]: unknown;
}

const S = INBOX_STATE;
const P = PREPARED_STATE;

/** The open database and the three ways the store's methods use it. */
interface Sqlite {
  readonly db: DatabaseSync;
  open: boolean;
  /** The statement for `sql`, prepared once. */
  statement: (sql: string) => StatementSync;
  /** Runs `work` in one write transaction (BEGIN IMMEDIATE takes the write lock up front: no upgrade deadlock). */
  transaction: <T>(work: () => T) => T;
  /** Runs `work`, turning a database failure into RouteStoreUnavailableError. */
  run: <T>(what: string, work: () => T) => Promise<T>;
}

/**
 * The embedded route store: one SQLite file (WAL mode) that the worker and the bridge of one machine
 * share. node:sqlite is synchronous; every call here is one short transaction (the bridge batches
 * its appends, so one commit carries many deliveries).
 */
export function openSqliteRouteStore(path: string, options: SqliteRouteStoreOptions = {}): RouteStore {
  const sqlite = connect(path, options);
  const { db, statement, run } = sqlite;
  return {
    backend: 'sqlite',
    ...subscriptionMethods(sqlite),
    ...inboxMethods(sqlite),
    traceLinks: sqliteTraceLinks(sqlite),
    slots: slotStoreOver((kind, what, program) =>
      run(what, () => (kind === 'write' ? sqlite.transaction(() => drive(sqlite, program)) : drive(sqlite, program))),
    ),
    async checkpoint() {
      // PASSIVE: copies what no reader still needs, never waits for one.
      await run('checkpoint', () => db.exec('PRAGMA wal_checkpoint(PASSIVE)'));
    },
    ping: async () => sqlite.open && (await answers(() => statement('SELECT 1').get())),
    async close() {
      if (!sqlite.open) return;
      sqlite.open = false;
      db.close();
    },
  };
}

/** Opens (and creates) the database file with the store's pragmas, migrated to the current schema. */
function connect(path: string, options: SqliteRouteStoreOptions): Sqlite {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  let db: DatabaseSync | undefined;
  try {
    db = new DatabaseSync(path);
    db.exec(`PRAGMA busy_timeout = ${options.busyTimeoutMs ?? 5_000}`);
    db.exec('PRAGMA journal_mode = WAL');
    db.exec(`PRAGMA synchronous = ${options.synchronous === 'full' ? 'FULL' : 'NORMAL'}`);
    if (options.checkpoints === 'caller') db.exec('PRAGMA wal_autocheckpoint = 0');
    migrateSqlite(db, path, ROUTE_STORE_MIGRATIONS);
  } catch (error) {
    db?.close();
    if (error instanceof RouteStoreSchemaError) throw error;
    throw new RouteStoreUnavailableError(`route store ${path} cannot be opened: ${(error as Error).message}`, {
      cause: error,
    });
  }
  const prepared = new Map<string, StatementSync>();
  const sqlite: Sqlite = {
    db,
    open: true,
    statement: (sql) => {
      let found = prepared.get(sql);
      if (!found) {
        found = db.prepare(sql);
        prepared.set(sql, found);
      }
      return found;
    },
    transaction: (work) => {
      db.exec('BEGIN IMMEDIATE');
      try {
        const result = work();
        db.exec('COMMIT');
        return result;
      } catch (error) {
        if (db.isTransaction) db.exec('ROLLBACK');
        throw error;
      }
    },
    run: async (what, work) => {
      if (!sqlite.open) throw new RouteStoreUnavailableError(`route store ${path} is closed`);
      try {
        return work();
      } catch (error) {
        throw new RouteStoreUnavailableError(`route store ${what} failed: ${(error as Error).message}`, {
          cause: error,
        });
      }
    },
  };
  return sqlite;
}

/** Runs a slot program's statements one after the other, synchronously (inside the caller's transaction). */
function drive<T>({ statement }: Pick<Sqlite, 'statement'>, program: SlotProgram<T>): T {
  let step = program.next([]);
  while (!step.done) {
    const rows = statement(step.value.sql).all(...(step.value.params as never[])) as SlotRow[];
    step = program.next(rows);
  }
  return step.value;
}

const inList = (seqs: readonly number[]) => JSON.stringify(seqs);

/** The worker's half: subscriptions and the prepared submits written with them. */
function subscriptionMethods({
  statement,
  transaction,
  run,
}: Sqlite): Pick<RouteStore, 'subscribe' | 'takePrepared' | 'settlePrepared' | 'revokePrepared'> {
  return {
    subscribe(subscription: Subscription, now: number, prepared?: string) {
      return run('subscribe', () =>
        transaction(() => {
          if (prepared !== undefined)
            statement(
              `INSERT INTO reelflow_prepared (request_id, workflow_id, chain, created_at) VALUES (?, ?, ?, ?)
               ON CONFLICT (request_id) DO NOTHING`,
            ).run(subscription.requestId, subscription.workflowId, prepared, now);
          statement(
            `INSERT INTO reelflow_routes (request_id, workflow_id, signal_name, step_key, created_at)
             VALUES (?, ?, ?, ?, ?)
             ON CONFLICT (request_id) DO UPDATE SET workflow_id = excluded.workflow_id,
               signal_name = excluded.signal_name, step_key = excluded.step_key`,
          ).run(
            subscription.requestId,
            subscription.workflowId,
            subscription.signalName,
            subscription.stepKey ?? null,
            now,
          );
          const rows = statement(
            `UPDATE reelflow_inbox SET state = ${S.taken} WHERE request_id = ? AND state <> ${S.forwarded}
             RETURNING seq, body`,
          ).all(subscription.requestId) as Row[];
          return rows.sort((a, b) => Number(a.seq) - Number(b.seq)).map((row) => String(row.body));
        }),
      );
    },
    takePrepared(requestId, now, leaseMs) {
      return run('take', () => {
        const row = statement(
          `UPDATE reelflow_prepared SET state = CASE state WHEN ${P.ready} THEN ${P.taken} ELSE state END, taken_at = ?
           WHERE request_id = ? AND (state = ${P.ready}
             OR (state IN (${P.taken}, ${P.revokedWhileTaken}) AND taken_at < ?))
           RETURNING workflow_id, chain`,
        ).get(now, requestId, now - leaseMs) as Row | undefined;
        return row ? { workflowId: String(row.workflow_id), chain: String(row.chain) } : null;
      });
    },
    settlePrepared(requestId, answer) {
      return run('settle', () => {
        const row = statement(
          `UPDATE reelflow_prepared SET answer = COALESCE(?, answer), state = CASE state
             WHEN ${P.revokedWhileTaken} THEN ${P.cancelledByBridge} WHEN ${P.taken} THEN ? ELSE state END
           WHERE request_id = ? RETURNING state`,
        ).get(answer, answer === null ? P.givenUp : P.submitted, requestId) as Row | undefined;
        return row ? Number(row.state) : P.revoked;
      });
    },
    revokePrepared(requestId) {
      return run('revoke', () => {
        const row = statement(
          `UPDATE reelflow_prepared SET state = CASE state
             WHEN ${P.ready} THEN ${P.revoked} WHEN ${P.taken} THEN ${P.revokedWhileTaken} ELSE state END
           WHERE request_id = ? RETURNING state, answer`,
        ).get(requestId) as Row | undefined;
        return row ? { state: Number(row.state), answer: row.answer === null ? null : String(row.answer) } : null;
      });
    },
  };
}

/** The bridge's half: the inbox of deliveries, and the purge of both halves. */
function inboxMethods({ statement, transaction, run }: Sqlite): InboxMethods {
  return {
    append(entries, now) {
      return run('append', () =>
        transaction(() => {
          const insert = statement(
            `INSERT INTO reelflow_inbox (event_id, request_id, body, received_at, due_at) VALUES (?, ?, ?, ?, ?)
             ON CONFLICT (event_id) DO NOTHING`,
          );
          let inserted = 0;
          for (const entry of entries as InboxEntry[])
            inserted += Number(insert.run(entry.eventId, entry.requestId, entry.body, now, now).changes);
          return inserted;
        }),
      );
    },
    claim(limit, now, leaseMs) {
      return run('claim', () =>
        transaction(() => {
          const rows = statement(
            `UPDATE reelflow_inbox SET due_at = ? WHERE seq IN (
               SELECT seq FROM reelflow_inbox WHERE state = ${S.pending} AND due_at <= ? ORDER BY due_at, seq LIMIT ?)
             RETURNING seq, event_id, request_id, body, received_at`,
          ).all(now + leaseMs, now, limit) as Row[];
          if (rows.length === 0) return [];
          const routes = statement(
            `SELECT request_id, workflow_id, signal_name, step_key FROM reelflow_routes
             WHERE request_id IN (SELECT value FROM json_each(?))`,
          ).all(JSON.stringify([...new Set(rows.map((row) => String(row.request_id)))])) as Row[];
          const byRequest = new Map(routes.map((route) => [String(route.request_id), route]));
          return rows
            .map((row): ClaimedDelivery => {
              const route = byRequest.get(String(row.request_id));
              return {
                seq: Number(row.seq),
                eventId: String(row.event_id),
                requestId: String(row.request_id),
                body: String(row.body),
                receivedAt: Number(row.received_at),
                subscription: route ? subscriptionOf(route) : null,
              };
            })
            .sort((a, b) => a.seq - b.seq);
        }),
      );
    },
    async markForwarded(seqs) {
      if (seqs.length === 0) return;
      await run('update', () =>
        statement(
          `UPDATE reelflow_inbox SET state = ${S.forwarded}
           WHERE state = ${S.pending} AND seq IN (SELECT value FROM json_each(?))`,
        ).run(inList(seqs)),
      );
    },
    async retryAt(seqs, dueAt) {
      if (seqs.length === 0) return;
      await run('update', () =>
        statement(
          `UPDATE reelflow_inbox SET due_at = ? WHERE state = ${S.pending} AND seq IN (SELECT value FROM json_each(?))`,
        ).run(dueAt, inList(seqs)),
      );
    },
    async park(seqs) {
      if (seqs.length === 0) return 0;
      const result = await run('park', () =>
        statement(
          `UPDATE reelflow_inbox SET state = ${S.parked}
           WHERE state = ${S.pending} AND seq IN (SELECT value FROM json_each(?))
             AND NOT EXISTS (SELECT 1 FROM reelflow_routes r WHERE r.request_id = reelflow_inbox.request_id)`,
        ).run(inList(seqs)),
      );
      return Number(result.changes);
    },
    pendingCount() {
      return run('count', () =>
        Number((statement(`SELECT count(*) AS n FROM reelflow_inbox WHERE state = ${S.pending}`).get() as Row).n),
      );
    },
    oldestPendingAt() {
      return run('oldest', () => {
        const row = statement(
          `SELECT min(received_at) AS t FROM reelflow_inbox WHERE state = ${S.pending}`,
        ).get() as Row;
        return row.t === null || row.t === undefined ? null : Number(row.t);
      });
    },
    purge(deliveriesBefore, subscriptionsBefore) {
      return run('purge', () =>
        transaction(() => {
          const purged = {
            deliveries: Number(
              statement(`DELETE FROM reelflow_inbox WHERE received_at < ? AND state <> ${S.pending}`).run(
                deliveriesBefore,
              ).changes,
            ),
            subscriptions: Number(
              statement('DELETE FROM reelflow_routes WHERE created_at < ?').run(subscriptionsBefore).changes,
            ),
            prepared: Number(
              statement('DELETE FROM reelflow_prepared WHERE created_at < ?').run(subscriptionsBefore).changes,
            ),
          };
          // The slot log's released grants age out with the subscriptions of their jobs, idle keys' shares with them.
          drive({ statement }, purgeProgram(subscriptionsBefore));
          return purged;
        }),
      );
    },
  };
}

/** A subscription from a `reelflow_routes` row (both backends). */
export function subscriptionOf(row: Row): Subscription {
  return {
    requestId: String(row.request_id),
    workflowId: String(row.workflow_id),
    signalName: String(row.signal_name),
    ...(row.step_key !== null && row.step_key !== undefined ? { stepKey: String(row.step_key) } : {}),
  };
}

/** The store's trace links (./trace-links.ts). */
function sqliteTraceLinks({ statement, run }: Sqlite): TraceLinks {
  return traceLinksOver(
    (sql, values) =>
      run('trace link', () => {
        const query = statement(sql) as StatementSync;
        const values_ = values as (string | number)[];
        if (/^\s*SELECT/i.test(sql)) return { rows: query.all(...values_) as Row[], changes: 0 };
        return { rows: [], changes: Number(query.run(...values_).changes) };
      }),
    () => '?',
    (param) => `SELECT value FROM json_each(${param})`,
  );
}
