import { findKey, hashKey, keyIdFor, sameHash } from '../../../../src/local-service/http/auth';
import { maskKey } from '../../../../src/local-service/generated-key';
import { ServiceState } from '../../../../src/local-service/store/state';

function stateWith(id: string, hash: string, revokedAt: number | null = null): ServiceState {
  const state = new ServiceState();
  state.apply({ t: 'key.created', key: { id, hash, createdAt: 1, revokedAt } });
  return state;
}

test('a key is accepted on its whole hash, not on the 64 bits its id is made of', () => {
  const key = 'integration-key-0123456789';
  const hash = hashKey(key);
  const id = keyIdFor(hash);
  expect(findKey(stateWith(id, hash), key)?.id).toBe(id);
  // Same id (same first 16 hex digits), different rest of the hash: refused.
  const tampered = `${hash.slice(0, 63)}${hash.endsWith('0') ? '1' : '0'}`;
  expect(keyIdFor(tampered)).toBe(id);
  expect(findKey(stateWith(id, tampered), key)).toBeNull();
  expect(findKey(stateWith(id, hash, 5), key)).toBeNull();
});

test('sameHash refuses anything but two whole SHA-256 digests', () => {
  const hash = hashKey('x');
  expect(sameHash(hash, hash)).toBe(true);
  expect(sameHash(hash, hash.slice(0, 16))).toBe(false);
  expect(sameHash(hash.slice(0, 16), hash.slice(0, 16))).toBe(false);
  expect(sameHash(hash, hashKey('y'))).toBe(false);
});

test('a masked key keeps only its prefix and last four characters', () => {
  const key = 'rfk_abcdefghijklmnopqrstuvwxyz0123456789';
  const masked = maskKey(key);
  expect(masked).toBe('rfk_…6789');
  expect(masked).not.toContain('abcdefgh');
});
