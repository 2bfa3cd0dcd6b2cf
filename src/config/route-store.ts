import { resolve } from 'node:path';
import { readVariables, type Env } from './read';
import type { RouteStoreLocation } from './route-store-location';

/** The route store's settings (src/routing) as the worker and the bridge read them. */
export interface RouteStoreSettings {
  location: RouteStoreLocation;
  /**
   * How long the store keeps a delivery once it is handed over (its event id still deduplicates
   * redeliveries) or parked with no subscriber (a job reelflow did not submit).
   */
  ttlMs: number;
}

/** The variables of the route store. */
export const ROUTE_STORE_VARIABLE_NAMES = ['REELFLOW_ROUTE_STORE', 'REELFLOW_ROUTE_TTL_SECONDS'] as const;

let warnedRenamed = false;

/**
 * Reads REELFLOW_ROUTE_STORE (default `sqlite:<state dir>/routes.sqlite`; `stateDir` stands for
 * REELFLOW_STATE_DIR, as the local stack passes its own) and REELFLOW_ROUTE_TTL_SECONDS (its old name
 * REELFLOW_RENDEZVOUS_TTL_SECONDS is still read, with a warning). Throws ConfigError naming the variable.
 */
export function loadRouteStoreSettings(
  env: Env = process.env,
  options: { stateDir?: string } = {},
): RouteStoreSettings {
  const e = readVariables(
    [...ROUTE_STORE_VARIABLE_NAMES, 'REELFLOW_RENDEZVOUS_TTL_SECONDS', 'REELFLOW_STATE_DIR'],
    env,
  );
  if (e.REELFLOW_RENDEZVOUS_TTL_SECONDS !== undefined && !warnedRenamed) {
    warnedRenamed = true;
    console.warn(
      'reelflow: REELFLOW_RENDEZVOUS_TTL_SECONDS is deprecated: set REELFLOW_ROUTE_TTL_SECONDS instead (it is read the same way for now)',
    );
  }
  const ttlSeconds = e.REELFLOW_ROUTE_TTL_SECONDS ?? e.REELFLOW_RENDEZVOUS_TTL_SECONDS ?? DEFAULT_ROUTE_TTL_SECONDS;
  return {
    location:
      e.REELFLOW_ROUTE_STORE ??
      ({
        backend: 'sqlite',
        path: resolve(options.stateDir ?? e.REELFLOW_STATE_DIR ?? '.reelflow', 'routes.sqlite'),
      } as const),
    ttlMs: ttlSeconds * 1000,
  };
}

/** A day: the service stops retrying a delivery well within it. */
export const DEFAULT_ROUTE_TTL_SECONDS = 24 * 3600;
