import type { RouteStoreMigration } from './migration';

/**
 * Schema 5: a waiting job's submit beside its slot row (`reelflow_slots.waiter_submit`, JSON of model and
 * input), so the process that frees a slot submits the next job itself instead of waiting for the
 * waiter's workflow task; the job it submitted (`submitted_ahead`, the service's answer as JSON) until
 * the pipeline takes it as its own, so a waiter that left in between has that job cancelled; and `spent`,
 * set when that job ended before its pipeline took it: the room went on, the row stays for the pipeline
 * (docs/decisions/account-slots.md, "Submitting for the waiter"). The same DDL in both dialects.
 */
const COLUMNS = [
  'ALTER TABLE reelflow_slots ADD COLUMN waiter_submit TEXT',
  'ALTER TABLE reelflow_slots ADD COLUMN submitted_ahead TEXT',
  'ALTER TABLE reelflow_slots ADD COLUMN spent SMALLINT NOT NULL DEFAULT 0',
];

export const waiterSubmits: RouteStoreMigration = {
  version: 5,
  name: 'waiter submits',
  sqlite: COLUMNS,
  postgres: COLUMNS,
};
