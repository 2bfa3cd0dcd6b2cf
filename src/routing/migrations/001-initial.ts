import type { RouteStoreMigration } from './migration';

/**
 * Schema 1: the tables of reelflow 0.3.0, the last release without a schema version. Frozen: a
 * store that release made is recognised as this version, so this text never changes; later
 * changes are later migrations. `reelflow_routes`: one row per subscribed request. `reelflow_inbox`:
 * one row per verified delivery, unique on the service's `event_id`; `due_at` orders the
 * forwarder's work and carries its lease. `reelflow_prepared`: the next submit a pipeline prepared
 * behind a request (PREPARED_STATE).
 */
function tables(sequence: 'INTEGER PRIMARY KEY AUTOINCREMENT' | 'BIGSERIAL PRIMARY KEY'): string[] {
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
  ];
}

export const initial: RouteStoreMigration = {
  version: 1,
  name: 'routes, inbox and prepared submits (0.3.0)',
  sqlite: tables('INTEGER PRIMARY KEY AUTOINCREMENT'),
  postgres: tables('BIGSERIAL PRIMARY KEY'),
};
