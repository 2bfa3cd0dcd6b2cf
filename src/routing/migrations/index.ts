import { initial } from './001-initial';
import { traceLinks } from './002-trace-links';
import { slots } from './003-slots';
import { slotRequests } from './004-slot-requests';
import { waiterSubmits } from './005-waiter-submits';
import type { RouteStoreMigration } from './migration';

/**
 * Every migration of the route store's schema, in order. Adding one: a file `NNN-what.ts` beside
 * this one exporting a RouteStoreMigration with the next version and its DDL for both dialects,
 * and its line here (docs/operations.md, "Route-store schema"). Never edit a released one.
 */
export const ROUTE_STORE_MIGRATIONS: readonly RouteStoreMigration[] = [
  initial,
  traceLinks,
  slots,
  slotRequests,
  waiterSubmits,
];

/** The schema version this reelflow writes and reads. */
export const ROUTE_STORE_SCHEMA_VERSION = ROUTE_STORE_MIGRATIONS.length;

export { pendingMigrations, type RouteStoreMigration } from './migration';
export { migrateSqlite } from './sqlite';
export { migratePostgres } from './postgres';
