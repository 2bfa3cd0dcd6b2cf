import type { Attributes, Context, Span } from '@opentelemetry/api';
import { activeTracing, type Tracing } from './tracing';

/**
 * reelflow's own spans, on the process's tracing; while it is off each helper runs the work alone.
 * Context travels as W3C `traceparent` text: in HTTP headers to the service, and in the route store
 * from a job's submit to the bridge that later receives its webhook.
 */

/** How a span relates to the work around it (OpenTelemetry's SpanKind, by name). */
export type SpanRole = 'internal' | 'client' | 'consumer';

/** Options of a span. */
export interface SpanOptions {
  role?: SpanRole;
  attributes?: Attributes;
  /** The parent as `traceparent` text; default the active context. An unreadable one starts a new trace. */
  parent?: string;
  /** When the span began (ms since the epoch), for work measured before its trace was known; default now. */
  startTime?: number;
}

const KIND = { internal: 0, client: 2, consumer: 4 } as const;

function parentContext(tracing: Tracing, parent: string | undefined): Context {
  const { api } = tracing;
  return parent === undefined
    ? api.context.active()
    : api.propagation.extract(api.ROOT_CONTEXT, { traceparent: parent });
}

/** The `traceparent` (and `tracestate`) of `context`; empty when it has no span. */
function carrierOf(tracing: Tracing, context: Context): Record<string, string> {
  const carrier: Record<string, string> = {};
  tracing.api.propagation.inject(context, carrier);
  return carrier;
}

/**
 * Runs `work` in a span named `name` (its context active, so spans started inside are its children),
 * ending it when `work` settles: a rejection is recorded on the span and rethrown. `work` gets the span
 * (to add attributes) and the headers that carry its context (`traceparent`) to another process; both
 * are empty while tracing is off.
 */
export async function inSpan<T>(
  name: string,
  options: SpanOptions,
  work: (span: Span | undefined, headers: Record<string, string>) => Promise<T>,
): Promise<T> {
  const tracing = activeTracing();
  if (!tracing) return work(undefined, {});
  const { api, tracer } = tracing;
  const parent = parentContext(tracing, options.parent);
  const span = tracer.startSpan(
    name,
    {
      kind: KIND[options.role ?? 'internal'],
      ...(options.attributes ? { attributes: options.attributes } : {}),
      ...(options.startTime !== undefined ? { startTime: options.startTime } : {}),
    },
    parent,
  );
  const context = api.trace.setSpan(parent, span);
  try {
    return await api.context.with(context, () => work(span, carrierOf(tracing, context)));
  } catch (error) {
    span.recordException(error instanceof Error ? error : String(error));
    span.setStatus({ code: api.SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
    throw error;
  } finally {
    span.end();
  }
}

/**
 * Records a span of work already done (`startTime` to `endTime`, ms since the epoch) under `parent`
 * (`traceparent` text; undefined: the active context); returns its own `traceparent`, the parent of what followed from it. Undefined
 * (nothing recorded) while tracing is off.
 */
export function recordSpan(
  name: string,
  parent: string | undefined,
  times: { startTime: number; endTime: number },
  attributes: Attributes = {},
): string | undefined {
  const tracing = activeTracing();
  if (!tracing) return undefined;
  const { api, tracer } = tracing;
  const parentCtx = parentContext(tracing, parent);
  const span = tracer.startSpan(name, { kind: KIND.internal, attributes, startTime: times.startTime }, parentCtx);
  span.end(Math.max(times.endTime, times.startTime));
  return carrierOf(tracing, api.trace.setSpan(parentCtx, span)).traceparent;
}

/** The active span's context as `traceparent` text (to store for later work of the same trace); undefined when there is none. */
export function currentTraceparent(): string | undefined {
  const tracing = activeTracing();
  if (!tracing) return undefined;
  const span = tracing.api.trace.getSpan(tracing.api.context.active());
  if (!span || !tracing.api.isSpanContextValid(span.spanContext())) return undefined;
  return carrierOf(tracing, tracing.api.context.active()).traceparent;
}

/** Whether the process traces (reelflow's spans and Temporal's interceptors are on). */
export function tracingOn(): boolean {
  return activeTracing() !== undefined;
}
