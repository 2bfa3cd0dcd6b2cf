/**
 * Routing webhook events to the workflows that wait for them, through the route store: the worker's
 * half (`createRouteSubscriber`, called by the submit activity) and the bridge's half (`Inbox`, the
 * durable append that is the bridge's event sink, and `startForwarder`, which signals). Route workflows remain only as the fallback
 * for pipelines pinned to older builds (`route-workflows.ts`).
 */
export type { RouteStore } from './store';
export { INBOX_STATE, PREPARED_STATE } from './store';
export { createPreparedSubmitter } from './prepared';
export { openRouteStore } from './open-store';
export { openSqliteRouteStore } from './sqlite-store';
export { openPostgresRouteStore } from './postgres-store';
export { createRouteSubscriber } from './subscriber';
export { Inbox, startForwarder, type Forwarder, type ForwardOutcome } from './inbox';
export { subscribeToRoute } from './route-workflows';
export { warmSignalPath } from './warm-up';
export { RouteStoreUnavailableError, RouteStoreSchemaError, InboxFullError } from './errors';
