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

/**
 * The route store's schema cannot be used by this reelflow: a later release migrated it (`found`
 * above `known`), or the migration list is out of order. Opening never touches such a store.
 */
export class RouteStoreSchemaError extends ReelflowError {
  readonly code = 'route_store_schema' as const;
  /** The version found in the store (or the misplaced migration's). */
  readonly found: number;
  /** The highest version this reelflow knows. */
  readonly known: number;

  constructor(message: string, versions: { found: number; known: number }, options?: { cause?: unknown }) {
    super(message, options);
    this.found = versions.found;
    this.known = versions.known;
  }
}

/** A route-store backup or restore could not be made (the file, the tools, or the database refused). */
export class RouteStoreBackupError extends ReelflowError {
  readonly code = 'route_store_backup' as const;
}
