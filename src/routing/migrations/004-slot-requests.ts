import type { RouteStoreMigration } from './migration';

/**
 * Schema 4: a slot's job by request id (`reelflow_slots.request_id`, set once the submit is accepted), so the
 * bridge frees the slot of a job whose terminal webhook it committed and hands it on at once, before the
 * pipeline has even heard of the outcome (docs/decisions/account-slots.md). The same DDL in both dialects.
 */
const COLUMN = [
  'ALTER TABLE reelflow_slots ADD COLUMN request_id TEXT',
  'CREATE INDEX IF NOT EXISTS reelflow_slots_request ON reelflow_slots (request_id)',
];

export const slotRequests: RouteStoreMigration = {
  version: 4,
  name: 'slot request ids',
  sqlite: COLUMN,
  postgres: COLUMN,
};
