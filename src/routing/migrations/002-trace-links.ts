import type { RouteStoreMigration } from './migration';

/**
 * Schema 2: `reelflow_trace_links`, the trace context of the submit that started a job, by request id
 * (src/routing/trace-links.ts), so the bridge's spans of that job's webhook join the pipeline's trace.
 * The same DDL in both dialects.
 */
const TABLE = [
  `CREATE TABLE IF NOT EXISTS reelflow_trace_links (
    request_id TEXT PRIMARY KEY,
    traceparent TEXT NOT NULL,
    created_at BIGINT NOT NULL
  )`,
  'CREATE INDEX IF NOT EXISTS reelflow_trace_links_created ON reelflow_trace_links (created_at)',
];

export const traceLinks: RouteStoreMigration = { version: 2, name: 'trace links', sqlite: TABLE, postgres: TABLE };
