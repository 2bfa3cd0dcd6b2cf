import type { RouteStoreLocation } from '../config/route-store-location';
import { openPostgresRouteStore, type PostgresRouteStoreOptions } from './postgres-store';
import { openSqliteRouteStore, type SqliteRouteStoreOptions } from './sqlite-store';
import type { RouteStore } from './store';

/** Opens the route store at `location` (REELFLOW_ROUTE_STORE, read by src/config). */
export function openRouteStore(
  location: RouteStoreLocation,
  options: { sqlite?: SqliteRouteStoreOptions; postgres?: PostgresRouteStoreOptions } = {},
): RouteStore {
  return location.backend === 'sqlite'
    ? openSqliteRouteStore(location.path, {
        ...(location.synchronous ? { synchronous: location.synchronous } : {}),
        ...options.sqlite,
      })
    : openPostgresRouteStore(location.url, options.postgres);
}
