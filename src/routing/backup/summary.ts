import { statSync } from 'node:fs';

/** What a backup holds, or what a restore brought back. */
export interface RouteStoreBackupSummary {
  backend: 'sqlite' | 'postgres';
  /** The backup file. */
  file: string;
  bytes: number;
  /** The schema version the backup records (1 for a store made before versions were recorded). */
  schemaVersion: number;
  /** Rows of the inbox (deliveries) and of the routes (subscriptions) in it, when they could be counted. */
  deliveries?: number;
  subscriptions?: number;
}

/** The summary's common part for `file`. */
export function fileSummary(
  backend: RouteStoreBackupSummary['backend'],
  file: string,
  schemaVersion: number,
): RouteStoreBackupSummary {
  return { backend, file, bytes: statSync(file).size, schemaVersion };
}
