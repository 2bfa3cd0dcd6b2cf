/**
 * Routing webhook events to the workflows that wait for them, through the route store: the worker's
 * half (`createRouteSubscriber`, called by the submit activity) and the bridge's half (`Inbox`, the
 * durable append that is the bridge's event sink, and `startForwarder`, which signals). Route workflows remain only as the fallback
 * for pipelines pinned to older builds (`route-workflows.ts`).
 */
export type {
  RouteStore,
  Subscription,
  InboxEntry,
  ClaimedDelivery,
  PurgeCount,
  TakenPrepared,
  RevokedPrepared,
} from './store';
export { INBOX_STATE, PREPARED_STATE } from './store';
export {
  createPreparedSubmitter,
  PREPARED_SIGNAL_NAME,
  type PreparedChain,
  type PreparedStep,
  type PreparedSubmission,
  type PreparedSubmitter,
  type PreparedSubmitterOptions,
} from './prepared';
export { openRouteStore } from './open-store';
export { openSqliteRouteStore, type SqliteRouteStoreOptions } from './sqlite-store';
export { openPostgresRouteStore, type PostgresRouteStoreOptions } from './postgres-store';
export { createRouteSubscriber, type RouteSubscriber, type SubscribeOptions } from './subscriber';
export {
  Inbox,
  startForwarder,
  type InboxOptions,
  type Forwarder,
  type ForwarderOptions,
  type ForwardOutcome,
} from './inbox';
export {
  subscribeToRoute,
  deliverToRouteWorkflow,
  type RouteSettings,
  type RouteWorkflowDelivery,
} from './route-workflows';
export { warmSignalPath } from './warm-up';
export { RouteStoreUnavailableError, InboxFullError } from './errors';
