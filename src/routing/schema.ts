/**
 * The tables of the route store, the same in both backends (SQLite and PostgreSQL accept this DDL).
 * `reelflow_routes`: one row per subscribed request. `reelflow_inbox`: one row per verified delivery,
 * unique on the service's `event_id`; `due_at` orders the forwarder's work and carries its lease.
 * `reelflow_prepared`: the next submit a pipeline prepared behind a request (PREPARED_STATE).
 * `reelflow_slots`, `reelflow_slot_shares`, `reelflow_slot_log`: the account's slots (./slot-store.ts).
 */
export function routeStoreSchema(sequence: 'INTEGER PRIMARY KEY AUTOINCREMENT' | 'BIGSERIAL PRIMARY KEY'): string[] {
  return [
    `CREATE TABLE IF NOT EXISTS reelflow_routes (
      request_id TEXT PRIMARY KEY,
      workflow_id TEXT NOT NULL,
      signal_name TEXT NOT NULL,
      step_key TEXT,
      created_at BIGINT NOT NULL
    )`,
    'CREATE INDEX IF NOT EXISTS reelflow_routes_created ON reelflow_routes (created_at)',
    `CREATE TABLE IF NOT EXISTS reelflow_inbox (
      seq ${sequence},
      event_id TEXT NOT NULL UNIQUE,
      request_id TEXT NOT NULL,
      body TEXT NOT NULL,
      received_at BIGINT NOT NULL,
      due_at BIGINT NOT NULL,
      state SMALLINT NOT NULL DEFAULT 0
    )`,
    'CREATE INDEX IF NOT EXISTS reelflow_inbox_due ON reelflow_inbox (due_at, seq) WHERE state = 0',
    'CREATE INDEX IF NOT EXISTS reelflow_inbox_request ON reelflow_inbox (request_id)',
    'CREATE INDEX IF NOT EXISTS reelflow_inbox_received ON reelflow_inbox (received_at)',
    `CREATE TABLE IF NOT EXISTS reelflow_prepared (
      request_id TEXT PRIMARY KEY,
      workflow_id TEXT NOT NULL,
      chain TEXT NOT NULL,
      state SMALLINT NOT NULL DEFAULT 0,
      answer TEXT,
      taken_at BIGINT,
      created_at BIGINT NOT NULL
    )`,
    'CREATE INDEX IF NOT EXISTS reelflow_prepared_created ON reelflow_prepared (created_at)',
    ...slotSchema(sequence),
  ];
}

/**
 * The slots: one row per submission holding or waiting for a slot (SLOT_STATE), the share each
 * fairness key was served (grants, in virtual time), and the log of grants (kept for the count of
 * shares and the time a slot stood free; purged with the inbox).
 */
function slotSchema(sequence: string): string[] {
  return [
    `CREATE TABLE IF NOT EXISTS reelflow_slots (
      holder TEXT PRIMARY KEY,
      workflow_id TEXT NOT NULL,
      run_id TEXT NOT NULL,
      model TEXT NOT NULL,
      priority SMALLINT NOT NULL,
      fairness_key TEXT NOT NULL,
      weight DOUBLE PRECISION NOT NULL,
      state SMALLINT NOT NULL,
      enqueued_at BIGINT NOT NULL,
      granted_at BIGINT
    )`,
    'CREATE INDEX IF NOT EXISTS reelflow_slots_queue ON reelflow_slots (state, priority, fairness_key, enqueued_at)',
    `CREATE TABLE IF NOT EXISTS reelflow_slot_shares (
      fairness_key TEXT PRIMARY KEY,
      served DOUBLE PRECISION NOT NULL,
      weight DOUBLE PRECISION NOT NULL
    )`,
    `CREATE TABLE IF NOT EXISTS reelflow_slot_log (
      seq ${sequence},
      holder TEXT NOT NULL,
      workflow_id TEXT NOT NULL,
      model TEXT NOT NULL,
      priority SMALLINT NOT NULL,
      fairness_key TEXT NOT NULL,
      granted_at BIGINT NOT NULL,
      released_at BIGINT
    )`,
    'CREATE INDEX IF NOT EXISTS reelflow_slot_log_holder ON reelflow_slot_log (holder)',
    'CREATE INDEX IF NOT EXISTS reelflow_slot_log_granted ON reelflow_slot_log (granted_at)',
  ];
}
