import type { RouteStoreMigration } from './migration';

/**
 * Schema 3: the account's slots (src/routing/slot-programs.ts, docs/decisions/account-slots.md).
 * `reelflow_slots`: one row per submission holding or waiting for a slot (SLOT_STATE);
 * `reelflow_slot_shares`: the share each fairness key was served (grants, in virtual time);
 * `reelflow_slot_log`: the grants (kept for the count of shares and the time a slot stood free;
 * purged with the inbox).
 */
function tables(sequence: 'INTEGER PRIMARY KEY AUTOINCREMENT' | 'BIGSERIAL PRIMARY KEY'): string[] {
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

export const slots: RouteStoreMigration = {
  version: 3,
  name: 'account slots',
  sqlite: tables('INTEGER PRIMARY KEY AUTOINCREMENT'),
  postgres: tables('BIGSERIAL PRIMARY KEY'),
};
