/**
 * The wire names of reelflow's signals, updates and queries, as plain data: workflows define their
 * messages with them (src/workflows/definitions.ts), and the processes that send them by name (the
 * bridge's forwarder and the worker's subscribe in src/routing, clients) read them here, so neither
 * side imports the other. No imports: this module lands in every workflow bundle.
 *
 * Every name is pinned: running executions (pipelines pinned to the build they started on, route
 * workflows of earlier builds) and rows already in the route store name their handlers by these
 * strings, so a name never changes once released.
 */

/** Signal names. */
export const SIGNAL_NAMES = {
  /**
   * A verified webhook event for the workflow waiting on its request (`jobEventSignal`). Pinned wire
   * name: route-store rows and pinned running pipelines read `jobEvent`, so it never changes.
   */
  jobEvent: 'jobEvent',
  /** A completion together with the next job the bridge submitted (prepared submits). Pinned. */
  preparedJobEvent: 'jobEventWithNextSubmit',
  /** Bridge → route workflow of an earlier build: an event parked until its subscriber collects it. Pinned. */
  webhookEvent: 'webhookEvent',
  /** A pipeline of a batch → the batch: "this item ended so". Pinned. */
  batchItemDone: 'batchItemDone',
  /** A pipeline of a batch → the batch: "the account refused my submit; I wait for the resume". Pinned. */
  batchItemWaiting: 'batchItemWaiting',
  /** A batch → its waiting pipelines: "resumed (`reelflow batch resume`): submit again". Pinned. */
  batchResumed: 'batchResumed',
  /**
   * A worker → a pipeline waiting for one of the account's slots: "the slot of this submission (its
   * Idempotency-Key, the argument) is yours". Pinned: waiter rows in the route store name their runs.
   */
  slotGranted: 'slotGranted',
} as const;

/** Update names (the Temporal UI's "Send an Update" and `reelflow` send them by these names). */
export const UPDATE_NAMES = {
  /** Submit activity → route workflow of an earlier build: "I am the subscriber". Pinned. */
  subscribeRoute: 'subscribeRoute',
  raiseBatchBudget: 'raiseBatchBudget',
  /** `reelflow batch resume batch/<id>`: a paused batch goes on (after a top-up or a new key). Pinned. */
  resumeBatch: 'resumeBatch',
  cancelStep: 'cancelStep',
  cancelPipeline: 'cancelPipeline',
  raiseBudget: 'raiseBudget',
  retryStep: 'retryStep',
  resolveAmbiguousStep: 'resolveAmbiguousStep',
  /** A person's decision on an approval gate (`reelflow approve|reject`). Pinned: gates waiting in running executions answer to it. */
  decideApproval: 'decideApproval',
} as const;

/** Query names. Pinned: clients of running executions query by them. */
export const QUERY_NAMES = {
  pipelineProgress: 'pipelineProgress',
  batchProgress: 'batchProgress',
} as const;
