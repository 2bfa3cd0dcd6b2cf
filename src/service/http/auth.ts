import { createHash } from 'node:crypto';
import type { ServiceState } from '../store/state';
import type { KeyRecord } from '../store/records';
import { ServiceProblem } from './problem';

/** SHA-256 of an API key, hex; the only form in which keys are stored. */
export function hashKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

/** Stable id of a key derived from its hash, so seeding the same key twice yields one record. */
export function keyIdFor(hash: string): string {
  return `key_${hash.slice(0, 16)}`;
}

const AUTH = /^\s*(key|bearer)\s+(\S+)\s*$/i;

/**
 * Resolves the `Authorization` header (`Key <k>` or `Bearer <k>`, scheme case-insensitive) to a
 * live key, or throws 401. Revocation takes effect at once (the spec allows up to a minute).
 */
export function authenticate(state: ServiceState, header: string | undefined): KeyRecord {
  if (!header) throw new ServiceProblem('unauthorized', 'missing Authorization header (use "Key <API_KEY>" or "Bearer <API_KEY>")');
  const match = AUTH.exec(header);
  if (!match?.[2]) throw new ServiceProblem('unauthorized', 'malformed Authorization header (use "Key <API_KEY>" or "Bearer <API_KEY>")');
  const key = state.keys.get(keyIdFor(hashKey(match[2])));
  if (!key || key.revokedAt !== null) throw new ServiceProblem('unauthorized', 'invalid or revoked API key');
  return key;
}
