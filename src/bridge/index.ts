/** The webhook bridge: verified deliveries into the route store's inbox, signalled on by its forwarder (src/routing). */
export { createBridgeApp, type BridgeAppOptions } from './app';
export { mountBridge, type BridgeRouteOptions } from './plugin';
export {
  loadBridgeConfig,
  type BridgeConfig,
  DEFAULT_BODY_LIMIT_BYTES,
  DEFAULT_WEBHOOK_PATH,
  DEFAULT_SIGNAL_TIMEOUT_MS,
} from '../config/bridge';
export { openRouteStore, type RouteStore } from '../routing';
export { parseRouteStoreLocation } from '../config/route-store-location';
export type { EventSink } from './event-sink';
export {
  startBridgeServer,
  startInboxSink,
  createInboxSink,
  type RunningBridge,
  type BridgeServerOptions,
  type InboxSinkOptions,
} from './server';
export { EventSinkUnavailableError } from './errors';
