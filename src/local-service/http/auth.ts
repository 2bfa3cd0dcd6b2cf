import { createHash, timingSafeEqual } from 'node:crypto';
import type { ServiceState } from '../store/state';
import type { KeyRecord } from '../store/records';
import { ServiceProblem } from './errors';

/** SHA-256 of an API key, hex; the only form in which keys are stored. */
export function hashKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

/** Stable id of a key derived from its hash, so seeding the same key twice yields one record. */
export function keyIdFor(hash: string): string {
  return `key_${hash.slice(0, 16)}`;
}

/** Whole-hash comparison in constant time (both are 64 hex characters of SHA-256). */
export function sameHash(a: string, b: string): boolean {
  const left = Buffer.from(a, 'hex');
  const right = Buffer.from(b, 'hex');
  return left.length === 32 && right.length === 32 && timingSafeEqual(left, right);
}

const AUTH = /^\s*(key|bearer)\s+(\S+)\s*$/i;

/** The key of an `Authorization` header (`Key <k>` or `Bearer <k>`, scheme case-insensitive), or a 401. */
export function presentedKey(header: string | undefined): string {
  if (!header)
    throw new ServiceProblem(
      'unauthorized',
      'missing Authorization header (use "Key <API_KEY>" or "Bearer <API_KEY>")',
    );
  const match = AUTH.exec(header);
  if (!match?.[2])
    throw new ServiceProblem(
      'unauthorized',
      'malformed Authorization header (use "Key <API_KEY>" or "Bearer <API_KEY>")',
    );
  return match[2];
}

/**
 * The live integration key whose full SHA-256 equals the presented key's, or null. The id (a
 * prefix of the hash) only picks the candidate; acceptance needs the whole hash, compared in
 * constant time. Revocation takes effect at once (the spec allows up to a minute).
 */
export function findKey(state: ServiceState, key: string): KeyRecord | null {
  const hash = hashKey(key);
  const candidate = state.keys.get(keyIdFor(hash));
  if (!candidate || !sameHash(candidate.hash, hash) || candidate.revokedAt !== null) return null;
  return candidate;
}

/** Resolves the `Authorization` header to a live integration key, or throws 401. */
export function authenticate(state: ServiceState, header: string | undefined): KeyRecord {
  const key = findKey(state, presentedKey(header));
  if (!key) throw new ServiceProblem('unauthorized', 'invalid or revoked API key');
  return key;
}

/**
 * Admin routes take the admin credential only: a valid integration key is 403 `forbidden` (it is
 * known, but not allowed), anything else 401.
 */
export function authenticateAdmin(state: ServiceState, adminKeyHash: string, header: string | undefined): void {
  const key = presentedKey(header);
  if (sameHash(adminKeyHash, hashKey(key))) return;
  if (findKey(state, key))
    throw new ServiceProblem('forbidden', 'this route needs the admin credential; an integration key cannot use it');
  throw new ServiceProblem('unauthorized', 'invalid admin credential');
}
