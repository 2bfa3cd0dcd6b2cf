/** The webhook bridge: verified deliveries in, durable signals out (to the pipeline, or parked in its route). */
export { createBridgeApp, type BridgeAppOptions } from './app';
export { mountBridge, type BridgeRouteOptions } from './plugin';
export {
  loadBridgeConfig,
  type BridgeConfig,
  DEFAULT_BODY_LIMIT_BYTES,
  DEFAULT_WEBHOOK_PATH,
  DEFAULT_SIGNAL_TIMEOUT_MS,
} from '../config/bridge';
export { createTemporalSink, type TemporalSinkOptions } from './temporal-sink';
export type { EventSink } from './event-sink';
export { deliverToRoute, subscribeToRoute, type RouteDelivery, type RouteSettings } from './route-client';
export { startBridgeServer, type RunningBridge } from './server';
export { EventSinkUnavailableError } from './errors';
