import { ReelflowError } from '../contract';

/**
 * Typed errors of routing, each with a stable `code`.
 */

/** The route store did not answer (down, unreachable, closed, or a statement failed). */
export class RouteStoreUnavailableError extends ReelflowError {
  readonly code = 'route_store_unavailable' as const;
}

/** The bridge's inbox holds more undelivered events than its bound: the sender should retry later. */
export class InboxFullError extends ReelflowError {
  readonly code = 'inbox_full' as const;
}
