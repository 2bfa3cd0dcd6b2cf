import type * as Pg from 'pg';
import { requireOptional } from '../config/optional-packages';
import { migratePostgres, ROUTE_STORE_MIGRATIONS } from './migrations';
import { subscriptionOf } from './sqlite-store';
import {
  answers,
  INBOX_STATE,
  PREPARED_STATE,
  type ClaimedDelivery,
  type InboxMethods,
  type RouteStore,
} from './store';
import { RouteStoreSchemaError, RouteStoreUnavailableError } from './errors';
import { traceLinksOver, type TraceLinks } from './trace-links';
import { purgeProgram, slotStoreOver, type SlotProgram, type SlotProgramKind, type SlotRow } from './slot-programs';

/** Options of the PostgreSQL store. */
export interface PostgresRouteStoreOptions {
  /** Connections in the pool. Default 8. */
  maxConnections?: number;
  /** How long a statement may wait for a connection or run before the call fails. Default 5 s. */
  statementTimeoutMs?: number;
}

const S = INBOX_STATE;
const P = PREPARED_STATE;

/** Serialises the slot transactions of every worker (a grant counts the slots in use, then takes one). */
const SLOT_LOCK_KEY = 7_265_727_002;

/** The pool and the one way the store's methods use it. */
interface Postgres {
  readonly pool: Pg.Pool;
  open: boolean;
  /** Runs `sql` once the schema exists, turning a database failure into RouteStoreUnavailableError. */
  query: (what: string, sql: string, values?: unknown[]) => Promise<Pg.QueryResult>;
  /** Runs a slot program on one connection: a write in a transaction behind the slot lock. */
  slots: <T>(kind: SlotProgramKind, what: string, program: SlotProgram<T>) => Promise<T>;
}

/**
 * The route store in PostgreSQL, for bridges and workers on several machines. The pool connects
 * lazily: a bridge starts while the database is down and answers 503 until it is back.
 */
export function openPostgresRouteStore(url: string, options: PostgresRouteStoreOptions = {}): RouteStore {
  const postgres = connect(url, options);
  return {
    backend: 'postgres',
    ...subscriptionMethods(postgres),
    ...inboxMethods(postgres),
    traceLinks: postgresTraceLinks(postgres),
    slots: slotStoreOver(postgres.slots),
    ping: () => answers(() => postgres.query('ping', 'SELECT 1')),
    async close() {
      if (!postgres.open) return;
      postgres.open = false;
      await postgres.pool.end();
    },
  };
}

/** A lazily connecting pool; the schema is migrated on the first query (./migrations). */
function connect(url: string, options: PostgresRouteStoreOptions): Postgres {
  const timeoutMs = options.statementTimeoutMs ?? 5_000;
  // pg is an optional peer, loaded here: a SQLite route store (the default) never needs it.
  const { Pool } = requireOptional<typeof Pg>('pg');
  const config: Pg.PoolConfig = {
    connectionString: url,
    max: options.maxConnections ?? 8,
    connectionTimeoutMillis: timeoutMs,
    statement_timeout: timeoutMs,
    query_timeout: timeoutMs + 1_000,
    idleTimeoutMillis: 30_000,
  };
  const pool = new Pool(config);
  // An idle client whose server went away emits 'error' on the pool; the next query reconnects.
  pool.on('error', () => undefined);
  let schema: Promise<void> | null = null;

  const ensureSchema = (): Promise<void> => {
    schema ??= (async () => {
      const client = await pool.connect();
      try {
        await migratePostgres(client, redactedUrl(url), ROUTE_STORE_MIGRATIONS);
      } finally {
        client.release();
      }
    })().catch((error: unknown) => {
      schema = null;
      throw error;
    });
    return schema;
  };
  const postgres: Postgres = {
    pool,
    open: true,
    query: async (what, sql, values = []) => {
      if (!postgres.open) throw new RouteStoreUnavailableError('route store is closed');
      try {
        await ensureSchema();
        return await pool.query(sql, values);
      } catch (error) {
        // A schema this reelflow must not touch stays itself: retrying cannot help.
        if (error instanceof RouteStoreSchemaError) throw error;
        throw new RouteStoreUnavailableError(`route store ${what} failed: ${(error as Error).message}`, {
          cause: error,
        });
      }
    },
    slots: async (kind, what, program) => {
      if (!postgres.open) throw new RouteStoreUnavailableError('route store is closed');
      try {
        await ensureSchema();
        return await runSlotProgram(pool, kind, program);
      } catch (error) {
        throw new RouteStoreUnavailableError(`route store ${what} failed: ${(error as Error).message}`, {
          cause: error,
        });
      }
    },
  };
  return postgres;
}

/** `url` without its password, for messages. */
function redactedUrl(url: string): string {
  try {
    const { protocol, username, host, pathname } = new URL(url);
    return `${protocol}//${username ? `${username}@` : ''}${host}${pathname}`;
  } catch {
    return 'postgres://…';
  }
}

/** `?` placeholders numbered for PostgreSQL (the slot programs' statements hold no `?` in text). */
function numbered(sql: string): string {
  let n = 0;
  return sql.replace(/\?/g, () => `$${(n += 1)}`);
}

/** Drives a slot program on one pooled connection; a write runs in a transaction holding the slot lock. */
async function runSlotProgram<T>(pool: Pg.Pool, kind: SlotProgramKind, program: SlotProgram<T>): Promise<T> {
  const client = await pool.connect();
  try {
    if (kind === 'write') {
      await client.query('BEGIN');
      await client.query('SELECT pg_advisory_xact_lock($1)', [SLOT_LOCK_KEY]);
    }
    let step = program.next([]);
    while (!step.done) {
      const result = await client.query(numbered(step.value.sql), step.value.params);
      step = program.next(result.rows as SlotRow[]);
    }
    if (kind === 'write') await client.query('COMMIT');
    return step.value;
  } catch (error) {
    if (kind === 'write') await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}

/** The worker's half: subscriptions and the prepared submits written with them. */
function subscriptionMethods({
  query,
}: Postgres): Pick<RouteStore, 'subscribe' | 'takePrepared' | 'settlePrepared' | 'revokePrepared'> {
  return {
    async subscribe(subscription, now, prepared) {
      // One statement: the subscription, its prepared submit and the hand-over of what came first commit together.
      const result = await query(
        'subscribe',
        `WITH prepared AS (
           INSERT INTO reelflow_prepared (request_id, workflow_id, chain, created_at)
           SELECT $1, $2, $6::text, $5 WHERE $6::text IS NOT NULL
           ON CONFLICT (request_id) DO NOTHING),
         route AS (
           INSERT INTO reelflow_routes (request_id, workflow_id, signal_name, step_key, created_at)
           VALUES ($1, $2, $3, $4, $5)
           ON CONFLICT (request_id) DO UPDATE SET workflow_id = EXCLUDED.workflow_id,
             signal_name = EXCLUDED.signal_name, step_key = EXCLUDED.step_key
           RETURNING request_id)
         UPDATE reelflow_inbox SET state = ${S.taken}
         WHERE request_id = (SELECT request_id FROM route) AND state <> ${S.forwarded}
         RETURNING seq, body`,
        [
          subscription.requestId,
          subscription.workflowId,
          subscription.signalName,
          subscription.stepKey ?? null,
          now,
          prepared ?? null,
        ],
      );
      return result.rows.sort((a, b) => Number(a.seq) - Number(b.seq)).map((row) => String(row.body));
    },
    async takePrepared(requestId, now, leaseMs) {
      const result = await query(
        'take',
        `UPDATE reelflow_prepared SET state = CASE state WHEN ${P.ready} THEN ${P.taken} ELSE state END, taken_at = $2
         WHERE request_id = $1 AND (state = ${P.ready}
           OR (state IN (${P.taken}, ${P.revokedWhileTaken}) AND taken_at < $3))
         RETURNING workflow_id, chain`,
        [requestId, now, now - leaseMs],
      );
      const row = result.rows[0];
      return row ? { workflowId: String(row.workflow_id), chain: String(row.chain) } : null;
    },
    async settlePrepared(requestId, answer) {
      const result = await query(
        'settle',
        `UPDATE reelflow_prepared SET answer = COALESCE($2::text, answer), state = CASE state
           WHEN ${P.revokedWhileTaken} THEN ${P.cancelledByBridge} WHEN ${P.taken} THEN $3::smallint ELSE state END
         WHERE request_id = $1 RETURNING state`,
        [requestId, answer, answer === null ? P.givenUp : P.submitted],
      );
      const row = result.rows[0];
      return row ? Number(row.state) : P.revoked;
    },
    async revokePrepared(requestId) {
      const result = await query(
        'revoke',
        `UPDATE reelflow_prepared SET state = CASE state
           WHEN ${P.ready} THEN ${P.revoked} WHEN ${P.taken} THEN ${P.revokedWhileTaken} ELSE state END
         WHERE request_id = $1 RETURNING state, answer`,
        [requestId],
      );
      const row = result.rows[0];
      return row ? { state: Number(row.state), answer: row.answer === null ? null : String(row.answer) } : null;
    },
  };
}

/** The bridge's half: the inbox of deliveries, and the purge of both halves. */
function inboxMethods({ query, slots }: Postgres): InboxMethods {
  return {
    async append(entries, now) {
      if (entries.length === 0) return 0;
      const result = await query(
        'append',
        `INSERT INTO reelflow_inbox (event_id, request_id, body, received_at, due_at)
         SELECT e, r, b, $4, $4 FROM unnest($1::text[], $2::text[], $3::text[]) AS t(e, r, b)
         ON CONFLICT (event_id) DO NOTHING`,
        [
          entries.map((entry) => entry.eventId),
          entries.map((entry) => entry.requestId),
          entries.map((e) => e.body),
          now,
        ],
      );
      return result.rowCount ?? 0;
    },
    async claim(limit, now, leaseMs) {
      const result = await query(
        'claim',
        `WITH due AS (
           SELECT seq FROM reelflow_inbox WHERE state = ${S.pending} AND due_at <= $1
           ORDER BY due_at, seq LIMIT $2 FOR UPDATE SKIP LOCKED),
         claimed AS (
           UPDATE reelflow_inbox i SET due_at = $3 FROM due WHERE i.seq = due.seq
           RETURNING i.seq, i.event_id, i.request_id, i.body, i.received_at)
         SELECT c.seq, c.event_id, c.request_id, c.body, c.received_at, r.workflow_id, r.signal_name, r.step_key
         FROM claimed c LEFT JOIN reelflow_routes r ON r.request_id = c.request_id ORDER BY c.seq`,
        [now, limit, now + leaseMs],
      );
      return result.rows.map((row): ClaimedDelivery => ({
        seq: Number(row.seq),
        eventId: String(row.event_id),
        requestId: String(row.request_id),
        body: String(row.body),
        receivedAt: Number(row.received_at),
        subscription: row.workflow_id === null ? null : subscriptionOf(row),
      }));
    },
    async markForwarded(seqs) {
      if (seqs.length === 0) return;
      await query(
        'update',
        `UPDATE reelflow_inbox SET state = ${S.forwarded} WHERE state = ${S.pending} AND seq = ANY($1::bigint[])`,
        [seqs],
      );
    },
    async retryAt(seqs, dueAt) {
      if (seqs.length === 0) return;
      await query(
        'update',
        `UPDATE reelflow_inbox SET due_at = $2 WHERE state = ${S.pending} AND seq = ANY($1::bigint[])`,
        [seqs, dueAt],
      );
    },
    async park(seqs) {
      if (seqs.length === 0) return 0;
      const result = await query(
        'park',
        `UPDATE reelflow_inbox i SET state = ${S.parked}
         WHERE i.state = ${S.pending} AND i.seq = ANY($1::bigint[])
           AND NOT EXISTS (SELECT 1 FROM reelflow_routes r WHERE r.request_id = i.request_id)`,
        [seqs],
      );
      return result.rowCount ?? 0;
    },
    async pendingCount() {
      const result = await query('count', `SELECT count(*) AS n FROM reelflow_inbox WHERE state = ${S.pending}`);
      return Number(result.rows[0]?.n ?? 0);
    },
    async oldestPendingAt() {
      const result = await query(
        'oldest',
        `SELECT min(received_at) AS t FROM reelflow_inbox WHERE state = ${S.pending}`,
      );
      const t = result.rows[0]?.t;
      return t === null || t === undefined ? null : Number(t);
    },
    async purge(deliveriesBefore, subscriptionsBefore) {
      const deliveries = await query(
        'purge',
        `DELETE FROM reelflow_inbox WHERE received_at < $1 AND state <> ${S.pending}`,
        [deliveriesBefore],
      );
      const subscriptions = await query('purge', 'DELETE FROM reelflow_routes WHERE created_at < $1', [
        subscriptionsBefore,
      ]);
      const prepared = await query('purge', 'DELETE FROM reelflow_prepared WHERE created_at < $1', [
        subscriptionsBefore,
      ]);
      // The slot log's released grants age out with the subscriptions of their jobs, idle keys' shares with
      // them: behind the slot lock, so no key starts waiting between the check and the delete.
      await slots('write', 'purge', purgeProgram(subscriptionsBefore));
      return {
        deliveries: deliveries.rowCount ?? 0,
        subscriptions: subscriptions.rowCount ?? 0,
        prepared: prepared.rowCount ?? 0,
      };
    },
  };
}

/** The store's trace links (./trace-links.ts). */
function postgresTraceLinks(postgres: Postgres): TraceLinks {
  return traceLinksOver(
    async (sql, values) => {
      const result = await postgres.query('trace link', sql, values);
      return { rows: result.rows as Record<string, unknown>[], changes: result.rowCount ?? 0 };
    },
    (n) => `$${n}`,
    (param) => `SELECT jsonb_array_elements_text(${param}::jsonb)`,
  );
}
