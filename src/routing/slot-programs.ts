import type { GenerationRequest } from '../contract';
import {
  SLOT_STATE,
  type HeldSlot,
  type SlotCaps,
  type SlotGrant,
  type SlotLogEntry,
  type SlotRelease,
  type SlotRequest,
  type SlotSnapshot,
  type WaiterAhead,
  type WaiterSubmit,
  waiterSubmitValid,
} from './slot-store';

/** A row as either driver returns it (PostgreSQL gives BIGINT as text: read every number with Number()). */
export type SlotRow = Record<string, unknown>;

/** One statement: `?` placeholders (the PostgreSQL runner numbers them). */
export interface SlotQuery {
  sql: string;
  params: unknown[];
}

/**
 * A slot operation as a sequence of statements: it yields each statement and is handed back its rows.
 * The SQLite runner drives it synchronously inside BEGIN IMMEDIATE (nothing else on the connection can
 * slip in between); the PostgreSQL runner inside a transaction behind an advisory lock. One program,
 * so both backends decide the same way.
 */
export type SlotProgram<T> = Generator<SlotQuery, T, SlotRow[]>;

/** Whether a program only reads (no transaction needed). */
export type SlotProgramKind = 'read' | 'write';

const W = SLOT_STATE.waiting;
const G = SLOT_STATE.granted;
const H = SLOT_STATE.held;
/**
 * Rows whose job counts against the caps: granted or held, and not `spent` (the job submitted ahead for
 * it ended before its pipeline adopted it: its room went on, the row stays so the pipeline finds the job).
 */
const IN_USE = `state <> ${W} AND spent = 0`;

function* query(sql: string, ...params: unknown[]): SlotProgram<SlotRow[]> {
  return yield { sql, params };
}

/** Slots in use by model. */
function* heldByModel(): SlotProgram<Map<string, number>> {
  const rows = yield* query(`SELECT model, count(*) AS n FROM reelflow_slots WHERE ${IN_USE} GROUP BY model`);
  return new Map(rows.map((row) => [String(row.model), Number(row.n)]));
}

function total(held: Map<string, number>): number {
  let sum = 0;
  for (const n of held.values()) sum += n;
  return sum;
}

/** Models at their cap (their waiters cannot be granted now). */
function blockedModels(held: Map<string, number>, caps: SlotCaps): string[] {
  return Object.entries(caps.models)
    .filter(([model, cap]) => (held.get(model) ?? 0) >= cap)
    .map(([model]) => model);
}

function hasRoom(held: Map<string, number>, caps: SlotCaps, model: string): boolean {
  if (caps.account !== undefined && total(held) >= caps.account) return false;
  const cap = caps.models[model];
  return cap === undefined || (held.get(model) ?? 0) < cap;
}

/** Counts a grant to `key` in its share (and records the key's weight). */
function* countGrant(key: string, weight: number): SlotProgram<void> {
  yield* query(
    `INSERT INTO reelflow_slot_shares (fairness_key, served, weight) VALUES (?, 1, ?)
     ON CONFLICT (fairness_key) DO UPDATE SET served = reelflow_slot_shares.served + 1, weight = excluded.weight`,
    key,
    weight,
  );
}

function* logGrant(holder: string, workflowId: string, model: string, priority: number, key: string, now: number) {
  yield* query(
    `INSERT INTO reelflow_slot_log (holder, workflow_id, model, priority, fairness_key, granted_at)
     VALUES (?, ?, ?, ?, ?, ?)`,
    holder,
    workflowId,
    model,
    priority,
    key,
    now,
  );
}

/**
 * A key that starts waiting (none of its jobs waited) joins at the least share of the keys already
 * waiting, scaled by its weight: a newcomer neither takes every slot until it caught up with keys
 * served for hours, nor is it charged for what it used before it went idle (virtual-time fair queueing).
 */
function* joinQueue(key: string, weight: number): SlotProgram<void> {
  const waiting = yield* query(
    `SELECT 1 AS x FROM reelflow_slots WHERE state = ${W} AND fairness_key = ? LIMIT 1`,
    key,
  );
  if (waiting.length > 0) return;
  const [least] = yield* query(
    `SELECT min(served / weight) AS r FROM reelflow_slot_shares
     WHERE fairness_key IN (SELECT DISTINCT fairness_key FROM reelflow_slots WHERE state = ${W})`,
  );
  const start = least?.r === null || least?.r === undefined ? 0 : Number(least.r) * weight;
  yield* query(
    `INSERT INTO reelflow_slot_shares (fairness_key, served, weight) VALUES (?, ?, ?)
     ON CONFLICT (fairness_key) DO UPDATE SET weight = excluded.weight, served = CASE
       WHEN reelflow_slot_shares.served < excluded.served THEN excluded.served ELSE reelflow_slot_shares.served END`,
    key,
    start,
    weight,
  );
}

/** Takes a slot for `request` (`granted`) or queues it (`waiting`); a holder asking again learns its row's state (`held`, `waiting`). */
export function* acquireProgram(
  request: SlotRequest,
  caps: SlotCaps,
  now: number,
): SlotProgram<'granted' | 'held' | 'waiting'> {
  const [existing] = yield* query('SELECT state FROM reelflow_slots WHERE holder = ?', request.holder);
  if (existing) return Number(existing.state) === W ? 'waiting' : 'held';
  const held = yield* heldByModel();
  const granted = hasRoom(held, caps, request.model);
  if (!granted) yield* joinQueue(request.fairnessKey, request.weight);
  yield* query(
    `INSERT INTO reelflow_slots (holder, workflow_id, run_id, model, priority, fairness_key, weight, state,
       enqueued_at, granted_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    request.holder,
    request.workflowId,
    request.runId,
    request.model,
    request.priority,
    request.fairnessKey,
    request.weight,
    granted ? H : W,
    now,
    granted ? now : null,
  );
  if (!granted) return 'waiting';
  yield* countGrant(request.fairnessKey, request.weight);
  yield* logGrant(request.holder, request.workflowId, request.model, request.priority, request.fairnessKey, now);
  return 'granted';
}

/** `AND model NOT IN (…)` for the blocked models, with its parameters. */
function eligible(blocked: string[]): { sql: string; params: string[] } {
  if (blocked.length === 0) return { sql: '', params: [] };
  return { sql: ` AND model NOT IN (${blocked.map(() => '?').join(', ')})`, params: blocked };
}

/**
 * The next waiter in order among models with room: the best (lowest) priority first; within it the
 * fairness key with the least share (grants ÷ weight), ties to the key whose head waited longest;
 * within the key, the oldest waiter (ties by holder, so both backends choose alike).
 */
function* nextWaiter(blocked: string[]): SlotProgram<SlotRow | undefined> {
  const where = eligible(blocked);
  const [best] = yield* query(
    `SELECT min(priority) AS p FROM reelflow_slots WHERE state = ${W}${where.sql}`,
    ...where.params,
  );
  if (best?.p === null || best?.p === undefined) return undefined;
  const priority = Number(best.p);
  const [key] = yield* query(
    `SELECT w.fairness_key AS k, min(w.enqueued_at) AS head, coalesce(max(s.served / s.weight), 0) AS share
     FROM reelflow_slots w LEFT JOIN reelflow_slot_shares s ON s.fairness_key = w.fairness_key
     WHERE w.state = ${W} AND w.priority = ?${where.sql.replace('model', 'w.model')}
     GROUP BY w.fairness_key ORDER BY share, head, k LIMIT 1`,
    priority,
    ...where.params,
  );
  if (!key) return undefined;
  const [row] = yield* query(
    `SELECT holder, workflow_id, run_id, model, priority, fairness_key, weight, waiter_submit FROM reelflow_slots
     WHERE state = ${W} AND priority = ? AND fairness_key = ?${where.sql} ORDER BY enqueued_at, holder LIMIT 1`,
    priority,
    String(key.k),
    ...where.params,
  );
  return row;
}

/** Grants the room there is to waiters, in order; the grants made. */
export function* grantProgram(caps: SlotCaps, now: number): SlotProgram<SlotGrant[]> {
  const held = yield* heldByModel();
  const grants: SlotGrant[] = [];
  while (caps.account === undefined || total(held) < caps.account) {
    const row = yield* nextWaiter(blockedModels(held, caps));
    if (!row) break;
    const grant: SlotGrant = {
      holder: String(row.holder),
      workflowId: String(row.workflow_id),
      runId: String(row.run_id),
      fairnessKey: String(row.fairness_key),
    };
    const submit = parseSubmit(row.waiter_submit);
    // One whose media URLs expired is left to the pipeline, which resolves them again.
    if (submit && waiterSubmitValid(submit, now)) grant.submit = submit;
    const model = String(row.model);
    yield* query(`UPDATE reelflow_slots SET state = ${G}, granted_at = ? WHERE holder = ?`, now, grant.holder);
    yield* countGrant(String(row.fairness_key), Number(row.weight));
    yield* logGrant(grant.holder, grant.workflowId, model, Number(row.priority), String(row.fairness_key), now);
    held.set(model, (held.get(model) ?? 0) + 1);
    grants.push(grant);
  }
  return grants;
}

/** Frees `holder`'s slot (or its place in the queue) and hands the room on; with a job submitted ahead that nobody adopted. */
export function* releaseProgram(holder: string, caps: SlotCaps, now: number): SlotProgram<SlotRelease> {
  const [row] = yield* query(
    'DELETE FROM reelflow_slots WHERE holder = ? RETURNING state, spent, submitted_ahead',
    holder,
  );
  // A waiter leaves the queue; a spent row's room was handed on when its job ended (nothing to cancel).
  if (!row || Number(row.state) === W || Number(row.spent) === 1) return { grants: [] };
  const grants = yield* freedRoom(holder, caps, now);
  if (typeof row.submitted_ahead !== 'string') return { grants };
  return { grants, unadopted: JSON.parse(row.submitted_ahead) as GenerationRequest };
}

/** Logs `holder`'s grant released and grants the room it left. */
function* freedRoom(holder: string, caps: SlotCaps, now: number): SlotProgram<SlotGrant[]> {
  yield* query('UPDATE reelflow_slot_log SET released_at = ? WHERE holder = ? AND released_at IS NULL', now, holder);
  return yield* grantProgram(caps, now);
}

/** Names the job a held slot was used for (its pipeline's submit was accepted): a job submitted ahead is adopted. */
export function* attachRequestProgram(holder: string, requestId: string): SlotProgram<void> {
  yield* query(
    `UPDATE reelflow_slots SET request_id = ?, submitted_ahead = NULL, waiter_submit = NULL
     WHERE holder = ? AND state <> ${W}`,
    requestId,
    holder,
  );
}

function parseSubmit(value: unknown): WaiterSubmit | undefined {
  return typeof value === 'string' ? (JSON.parse(value) as WaiterSubmit) : undefined;
}

/** Keeps a waiter's submit beside its place; false when it is no longer waiting. */
export function* keepSubmitProgram(holder: string, submit: WaiterSubmit): SlotProgram<boolean> {
  const rows = yield* query(
    `UPDATE reelflow_slots SET waiter_submit = ? WHERE holder = ? AND state = ${W} RETURNING holder`,
    JSON.stringify(submit),
    holder,
  );
  return rows.length > 0;
}

/** The submit kept for a granted holder and the job submitted ahead with it. */
export function* aheadProgram(holder: string): SlotProgram<WaiterAhead> {
  const [row] = yield* query(
    `SELECT waiter_submit, submitted_ahead FROM reelflow_slots WHERE holder = ? AND state <> ${W}`,
    holder,
  );
  const ahead: WaiterAhead = {};
  const submit = parseSubmit(row?.waiter_submit);
  if (submit) ahead.submit = submit;
  if (typeof row?.submitted_ahead === 'string') ahead.request = JSON.parse(row.submitted_ahead) as GenerationRequest;
  return ahead;
}

/** Names the job submitted ahead for a granted slot's pipeline; false when the slot is gone. */
export function* attachAheadProgram(holder: string, request: GenerationRequest): SlotProgram<boolean> {
  const rows = yield* query(
    `UPDATE reelflow_slots SET request_id = ?, submitted_ahead = ? WHERE holder = ? AND state <> ${W} RETURNING holder`,
    request.request_id,
    JSON.stringify(request),
    holder,
  );
  return rows.length > 0;
}

/**
 * Frees the slot of the job `requestId` (it reached a terminal state) and hands the room on. A job
 * submitted ahead that its pipeline has not adopted yet leaves its row `spent` (its room free), so the
 * pipeline still finds the job instead of taking a slot and submitting again.
 */
export function* releaseRequestProgram(requestId: string, caps: SlotCaps, now: number): SlotProgram<SlotGrant[]> {
  const [row] = yield* query(
    'SELECT holder, spent, submitted_ahead FROM reelflow_slots WHERE request_id = ?',
    requestId,
  );
  if (!row || Number(row.spent) === 1) return [];
  const holder = String(row.holder);
  if (typeof row.submitted_ahead !== 'string') return (yield* releaseProgram(holder, caps, now)).grants;
  yield* query('UPDATE reelflow_slots SET spent = 1 WHERE holder = ?', holder);
  return yield* freedRoom(holder, caps, now);
}

/** Marks signalled grants held. */
export function* markSignalledProgram(holders: readonly string[]): SlotProgram<void> {
  if (holders.length === 0) return;
  yield* query(
    `UPDATE reelflow_slots SET state = ${H} WHERE state = ${G} AND holder IN (${holders.map(() => '?').join(', ')})`,
    ...holders,
  );
}

/** Slots in use granted before `before`. */
export function* heldSinceProgram(before: number, limit: number): SlotProgram<HeldSlot[]> {
  const rows = yield* query(
    `SELECT holder, workflow_id, run_id, state, granted_at FROM reelflow_slots
     WHERE state <> ${W} AND granted_at < ? ORDER BY granted_at, holder LIMIT ?`,
    before,
    limit,
  );
  return rows.map((row) => ({
    holder: String(row.holder),
    workflowId: String(row.workflow_id),
    runId: String(row.run_id),
    state: Number(row.state),
    grantedAt: Number(row.granted_at),
  }));
}

/** The slots in use and the queue, counted. */
export function* snapshotProgram(): SlotProgram<SlotSnapshot> {
  const held = yield* query(
    `SELECT model, fairness_key, count(*) AS n FROM reelflow_slots WHERE ${IN_USE} GROUP BY model, fairness_key`,
  );
  const waiting = yield* query(
    `SELECT priority, fairness_key, count(*) AS n FROM reelflow_slots WHERE state = ${W}
     GROUP BY priority, fairness_key ORDER BY priority, fairness_key`,
  );
  const snapshot: SlotSnapshot = { heldByModel: {}, heldByKey: {}, waiting: [] };
  for (const row of held) {
    const model = String(row.model);
    const key = String(row.fairness_key);
    snapshot.heldByModel[model] = (snapshot.heldByModel[model] ?? 0) + Number(row.n);
    snapshot.heldByKey[key] = (snapshot.heldByKey[key] ?? 0) + Number(row.n);
  }
  snapshot.waiting = waiting.map((row) => ({
    priority: Number(row.priority),
    fairnessKey: String(row.fairness_key),
    count: Number(row.n),
  }));
  return snapshot;
}

/**
 * What the slots keep after their jobs ages out (the route store's purge, with the subscriptions):
 * grants released before `releasedBefore` leave the log, then the shares of fairness keys left with
 * nothing (no row waiting or in use, no grant in the log), one row per batch ever run otherwise. A
 * forgotten key that waits again joins at the least share of the keys waiting then (joinQueue),
 * uncharged for what it was served before it went idle. The shares purged.
 */
export function* purgeProgram(releasedBefore: number): SlotProgram<number> {
  yield* query('DELETE FROM reelflow_slot_log WHERE released_at < ?', releasedBefore);
  const purged = yield* query(
    `DELETE FROM reelflow_slot_shares WHERE fairness_key NOT IN (SELECT fairness_key FROM reelflow_slots)
       AND fairness_key NOT IN (SELECT fairness_key FROM reelflow_slot_log) RETURNING fairness_key`,
  );
  return purged.length;
}

/** Grants logged after `afterSeq`. */
export function* logProgram(afterSeq: number, limit: number): SlotProgram<SlotLogEntry[]> {
  const rows = yield* query(
    `SELECT seq, holder, workflow_id, model, priority, fairness_key, granted_at, released_at FROM reelflow_slot_log
     WHERE seq > ? ORDER BY seq LIMIT ?`,
    afterSeq,
    limit,
  );
  return rows.map((row) => ({
    seq: Number(row.seq),
    holder: String(row.holder),
    workflowId: String(row.workflow_id),
    model: String(row.model),
    priority: Number(row.priority),
    fairnessKey: String(row.fairness_key),
    grantedAt: Number(row.granted_at),
    releasedAt: row.released_at === null || row.released_at === undefined ? null : Number(row.released_at),
  }));
}

/**
 * The SlotStore over a driver that runs a program: `run(kind, what, program)`, `what` naming the call
 * in errors. Both backends build theirs with this.
 */
export function slotStoreOver(
  run: <T>(kind: SlotProgramKind, what: string, program: SlotProgram<T>) => Promise<T>,
): import('./slot-store').SlotStore {
  return {
    acquire: (request, caps, now) => run('write', 'slot acquire', acquireProgram(request, caps, now)),
    release: (holder, caps, now) => run('write', 'slot release', releaseProgram(holder, caps, now)),
    attachRequest: (holder, requestId) => run('write', 'slot attach', attachRequestProgram(holder, requestId)),
    attachAhead: (holder, request) => run('write', 'slot attach', attachAheadProgram(holder, request)),
    keepSubmit: (holder, submit) => run('write', 'slot keep', keepSubmitProgram(holder, submit)),
    ahead: (holder) => run('read', 'slot ahead', aheadProgram(holder)),
    releaseRequest: (requestId, caps, now) => run('write', 'slot release', releaseRequestProgram(requestId, caps, now)),
    grantWaiting: (caps, now) => run('write', 'slot grant', grantProgram(caps, now)),
    markSignalled: (holders) => run('write', 'slot mark', markSignalledProgram(holders)),
    heldSince: (before, limit) => run('read', 'slot list', heldSinceProgram(before, limit)),
    snapshot: () => run('read', 'slot snapshot', snapshotProgram()),
    log: (afterSeq, limit) => run('read', 'slot log', logProgram(afterSeq, limit)),
  };
}
