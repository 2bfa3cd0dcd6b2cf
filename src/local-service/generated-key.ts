import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** A key as logs may show it: its scheme prefix and last four characters. */
export function maskKey(key: string): string {
  return key.length <= 12 ? '…' : `${key.slice(0, 4)}…${key.slice(-4)}`;
}

/**
 * What to print about a key the service generated because none was configured. On a terminal the
 * operator sees it once in full; anywhere else (a container's log, a CI transcript) the output is
 * a log, so it shows the key masked and writes it to `<dataDir>/generated-api-key` (0600), which
 * the operator reads once and deletes.
 */
export function announceGeneratedKey(key: string, dataDir: string, terminal: boolean): string {
  if (terminal) return `no API key was configured; generated one (shown once): ${key}`;
  const file = join(dataDir, 'generated-api-key');
  writeFileSync(file, `${key}\n`, { mode: 0o600 });
  return `no API key was configured; generated ${maskKey(key)} (full key in ${file}, readable by this user only; delete it once read)`;
}
