import { assertDigest, referrerKey } from '../../../../src/media/store/types';
import { MediaStoreError } from '../../../../src/media/store/errors';

describe('assertDigest', () => {
  it('passes 64 lowercase hex digits', () => {
    expect(() => assertDigest('0'.repeat(64))).not.toThrow();
  });

  it.each(['A'.repeat(64), '0'.repeat(63), `../${'0'.repeat(61)}`, ''])('refuses %p as invalid_config', (digest) => {
    let error: unknown;
    try {
      assertDigest(digest);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(MediaStoreError);
    expect(error).toMatchObject({ code: 'invalid_config' });
  });
});

describe('referrerKey', () => {
  it('escapes anything a path could misread', () => {
    expect(referrerKey('demo-1')).toBe('demo-1');
    expect(referrerKey('a/b c')).toBe('a%2Fb%20c');
  });
});
