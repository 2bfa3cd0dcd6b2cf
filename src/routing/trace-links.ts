/**
 * Trace links: the trace context of the submit that started a job, kept by request id, so the bridge's
 * spans for that job's webhook (receive → commit → signal) join the pipeline's trace although the
 * service's delivery carries no context (docs/observability.md, "Tracing"). Written only while the
 * worker traces, read only while the bridge does; a missing link only starts a trace of its own.
 *
 * Its own table (route-store schema 2, ./migrations/002-trace-links.ts), purged with the subscriptions.
 */

import { currentTraceparent } from '../tracing';

/** A W3C `traceparent` (version 00): what a link may hold, checked before it is stored or used. */
export const TRACEPARENT_PATTERN = /^00-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$/;

/** A route store's trace links. */
export interface TraceLinks {
  /** Keeps `traceparent` as the context of `requestId`'s job (replacing an earlier one: a retried submit). */
  save(requestId: string, traceparent: string, now: number): Promise<void>;
  /** The links of the requests that have one. */
  find(requestIds: readonly string[]): Promise<Map<string, string>>;
  /** Deletes links made before `before` (ms); returns how many. */
  purge(before: number): Promise<number>;
}

/** Runs a statement with positional values; the backend's own placeholders (`?` or `$n`) are in the SQL. */
type Execute = (sql: string, values: unknown[]) => Promise<{ rows: Record<string, unknown>[]; changes: number }>;

/**
 * Trace links over `execute`; `placeholder(n)` is the backend's n-th parameter (`?` or `$n`), `list` the
 * SQL that reads a JSON array parameter as rows of `value`.
 */
export function traceLinksOver(
  execute: Execute,
  placeholder: (n: number) => string,
  list: (param: string) => string,
): TraceLinks {
  const p = placeholder;
  return {
    async save(requestId, traceparent, now) {
      if (!TRACEPARENT_PATTERN.test(traceparent)) return;
      await execute(
        `INSERT INTO reelflow_trace_links (request_id, traceparent, created_at) VALUES (${p(1)}, ${p(2)}, ${p(3)})
         ON CONFLICT (request_id) DO UPDATE SET traceparent = excluded.traceparent`,
        [requestId, traceparent, now],
      );
    },
    async find(requestIds) {
      if (requestIds.length === 0) return new Map();
      const { rows } = await execute(
        `SELECT request_id, traceparent FROM reelflow_trace_links WHERE request_id IN (${list(p(1))})`,
        [JSON.stringify([...new Set(requestIds)])],
      );
      return new Map(rows.map((row) => [String(row.request_id), String(row.traceparent)]));
    },
    async purge(before) {
      return (await execute(`DELETE FROM reelflow_trace_links WHERE created_at < ${p(1)}`, [before])).changes;
    },
  };
}

/**
 * Links `requestId`'s job to the active trace (the submit's span) when the process traces; a no-op
 * otherwise. Never fails the submit: a link that could not be written only leaves the bridge's spans
 * of that job in a trace of their own.
 */
export async function linkActiveTrace(
  store: { readonly traceLinks?: TraceLinks },
  requestId: string,
  now: number,
): Promise<void> {
  const traceparent = currentTraceparent();
  if (traceparent === undefined || !store.traceLinks) return;
  await store.traceLinks.save(requestId, traceparent, now).catch(() => undefined);
}
