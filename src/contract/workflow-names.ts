/**
 * Names every process agrees on — task queues, workflow types, workflow ids — as plain data, so that
 * workflows (bundled for the sandbox), the CLI, the bridge and src/config share one spelling without
 * src/config importing src/workflows. No imports: this module lands in every workflow bundle.
 */

/** Task queue names, in one place. */
export const TASK_QUEUES = {
  pipelines: 'reelflow-pipelines',
} as const;

/** Workflow type names, for starting by name from the CLI or other processes. Pinned: running executions have these types. */
export const WORKFLOW_TYPES = {
  pipeline: 'pipelineWorkflow',
  batch: 'batchWorkflow',
} as const;

/**
 * Name of the per-request route workflow type (id `webhook/<request_id>`): it
 * names the subscriber in its memo so the bridge signals the pipeline directly, and parks events
 * that arrive before any subscriber (docs/webhook-routing.md).
 */
export const ROUTE_WORKFLOW_TYPE = 'webhookRouteWorkflow';

/** Memo key of a route workflow naming its subscriber's workflow id. Pinned: route workflows of earlier builds carry it. */
export const ROUTE_SUBSCRIBER_MEMO = 'subscriber';

/** Route workflow id for a service request id. One execution per id is Temporal's guarantee. */
export function routeWorkflowId(requestId: string): string {
  return `webhook/${requestId}`;
}

/** Readable workflow ids: `pipeline/<name>` and `batch/<name>`. */
export function pipelineWorkflowId(pipelineName: string): string {
  return `pipeline/${pipelineName}`;
}
export function batchWorkflowId(batchName: string): string {
  return `batch/${batchName}`;
}

/** Temporal's limit on a fairness key, in UTF-8 bytes: a start with a longer one is refused. */
export const FAIRNESS_KEY_MAX_BYTES = 64;

/**
 * The fairness key a batch's items share when the batch was given none (`--fairness-key`): the id of
 * the batch (`batch/<name>`), or, past Temporal's 64 bytes (a name over 58 characters), its start, `~`
 * and 8 hex digits of a digest of the whole id, so that the server takes it and two long names differ.
 */
export function batchFairnessKey(batchId: string): string {
  if (utf8Bytes(batchId) <= FAIRNESS_KEY_MAX_BYTES) return batchId;
  const digest = `~${fnv1a(batchId).toString(16).padStart(8, '0')}`;
  let head = '';
  for (const char of batchId) {
    if (utf8Bytes(head + char) + digest.length > FAIRNESS_KEY_MAX_BYTES) break;
    head += char;
  }
  return head + digest;
}

/** Bytes of `text` in UTF-8 (no Buffer or TextEncoder: this module runs in the workflow sandbox). */
function utf8Bytes(text: string): number {
  let bytes = 0;
  for (const char of text) {
    const code = char.codePointAt(0) ?? 0;
    bytes += code < 0x80 ? 1 : code < 0x800 ? 2 : code < 0x10000 ? 3 : 4;
  }
  return bytes;
}

/** FNV-1a, 32 bits: a stable digest of `text`'s UTF-16 code units (not for security). */
function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i += 1) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193) >>> 0;
  return hash;
}

/**
 * A step's key, `<pipeline>/job/<step>`: the stem of its Idempotency-Keys. Its spelling is on the
 * service's books (keys of jobs already submitted), so it stays as it is. An item of a fan-out step
 * (`each`) has its own: `<pipeline>/job/<step>/<item>`.
 */
export function stepKeyOf(pipelineName: string, stepId: string, item?: number): string {
  return item === undefined ? `${pipelineName}/job/${stepId}` : `${pipelineName}/job/${stepId}/${item}`;
}

/**
 * Prefix of every activity type reelflow registers (`reelflow.submitAndSubscribe`, …), so reelflow's
 * activities can share a worker with a team's own (`reelflowPlugin`) without either replacing the other.
 */
export const ACTIVITY_PREFIX = 'reelflow.';

/** The activity type under which reelflow registers and schedules its activity `name`. */
export function reelflowActivityType(name: string): string {
  return `${ACTIVITY_PREFIX}${name}`;
}
