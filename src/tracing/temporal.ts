import type { ClientInterceptors } from '@temporalio/client';
import type { WorkerOptions } from '@temporalio/worker';
import { activeTracing, type Tracing } from './tracing';

/**
 * Temporal's OpenTelemetry interceptors (@temporalio/interceptors-opentelemetry) where reelflow makes
 * clients and workers: a client's workflow start, signal and update carry the trace context in their
 * headers; a worker's workflows and activities continue it (workflow spans leave the sandbox through the
 * `exporter` sink). Each helper gives nothing while tracing is off.
 */

/** The module of Temporal's workflow interceptors, which a workflow bundle must include for workflow spans. */
export function tracingWorkflowModules(tracing: Tracing | undefined = activeTracing()): string[] {
  return tracing ? [require.resolve('@temporalio/interceptors-opentelemetry/lib/workflow-interceptors')] : [];
}

/** A client's interceptors with tracing on (start, signal, update and query spans; the context in their headers). */
export function tracingClientInterceptors(tracing: Tracing | undefined = activeTracing()): ClientInterceptors {
  if (!tracing) return {};
  return { workflow: [new tracing.temporal.OpenTelemetryWorkflowClientInterceptor({ tracer: tracing.tracer })] };
}

/**
 * `options` with tracing added to what they set: activity spans (continuing the workflow's trace),
 * Temporal's workflow interceptor module (used where the worker bundles its workflows; a prebuilt
 * bundle carries it already, or has no workflow spans) and the sink that exports workflow spans.
 * `tracing` defaults to the process's; `null` adds nothing.
 */
export function withTracing<T extends Partial<WorkerOptions>>(
  options: T,
  tracing: Tracing | null | undefined = activeTracing(),
): T {
  if (!tracing) return options;
  const { temporal, tracer } = tracing;
  const interceptors = options.interceptors ?? {};
  return {
    ...options,
    interceptors: {
      ...interceptors,
      activity: [
        ...(interceptors.activity ?? []),
        (ctx) => ({
          inbound: new temporal.OpenTelemetryActivityInboundInterceptor(ctx, { tracer }),
          outbound: new temporal.OpenTelemetryActivityOutboundInterceptor(ctx),
        }),
      ],
      ...(options.workflowBundle
        ? {}
        : { workflowModules: [...(interceptors.workflowModules ?? []), ...tracingWorkflowModules(tracing)] }),
    },
    sinks: { ...options.sinks, exporter: temporal.makeWorkflowExporter(tracing.processor, tracing.resource) },
  };
}

/** Whether a bundle's code has Temporal's workflow interceptors in it (else its workflows make no spans). */
export function bundleHasTracing(code: string): boolean {
  return code.includes('OpenTelemetryInboundInterceptor');
}
