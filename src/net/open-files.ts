import * as fs from 'node:fs';

/** File descriptors kept back from connections: stdio, the event loop, stores, outbound clients. */
export const RESERVED_FILES = 64;
/** Bounds of the derived connection cap. */
export const CONNECTION_CAP_BOUNDS = { min: 16, max: 4096 } as const;
/** Open-files limit assumed where the process cannot read its own (no /proc). */
const ASSUMED_OPEN_FILES = 1024;

/**
 * The process's soft open-files limit (RLIMIT_NOFILE, which Node raises to the hard limit at start),
 * read from /proc/self/limits; undefined where there is no /proc or the limit is unlimited.
 */
export function openFilesLimit(limitsText?: string): number | undefined {
  let text = limitsText;
  if (text === undefined) {
    try {
      text = fs.readFileSync('/proc/self/limits', 'utf8');
    } catch {
      return undefined;
    }
  }
  const match = /^Max open files\s+(\d+|unlimited)\s/m.exec(text);
  return match?.[1] && match[1] !== 'unlimited' ? Number(match[1]) : undefined;
}

/**
 * The default cap on a listener's open connections: three quarters of what the open-files limit
 * leaves once RESERVED_FILES are kept back, between 16 and 4096. Every accepted connection is a file
 * descriptor: a cap under the limit means the listener sheds connections by its own rule before
 * `accept` fails with EMFILE and resets whoever comes next, signed deliveries included.
 */
export function defaultConnectionCap(limit: number | undefined): number {
  const usable = Math.floor(((limit ?? ASSUMED_OPEN_FILES) - RESERVED_FILES) * 0.75);
  return Math.min(CONNECTION_CAP_BOUNDS.max, Math.max(CONNECTION_CAP_BOUNDS.min, usable));
}
