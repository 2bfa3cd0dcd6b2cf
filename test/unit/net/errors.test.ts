import { SafeFetchError } from '../../../src/net/errors';

describe('SafeFetchError', () => {
  it('carries its code, and the HTTP status when there is one', () => {
    const refused = new SafeFetchError('refused', 'address 10.0.0.1 is private');
    expect(refused).toMatchObject({ code: 'refused', name: 'SafeFetchError', message: 'address 10.0.0.1 is private' });
    expect(refused.status).toBeUndefined();
    expect(new SafeFetchError('http_status', 'answered 404', 404).status).toBe(404);
  });
});
