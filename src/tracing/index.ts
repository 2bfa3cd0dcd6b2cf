/**
 * src/tracing: OpenTelemetry tracing, off unless a process starts it (docs/observability.md, "Tracing").
 */
export { activeTracing, startTracing, stopTracing, type Tracing } from './tracing';
export { currentTraceparent, inSpan, recordSpan, tracingOn } from './spans';
export { bundleHasTracing, tracingClientInterceptors, tracingWorkflowModules, withTracing } from './temporal';
