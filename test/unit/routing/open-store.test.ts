import { openRouteStore } from '../../../src/routing';

describe('openRouteStore', () => {
  it('opens the backend the location names', async () => {
    const sqlite = openRouteStore({ backend: 'sqlite', path: ':memory:' });
    expect(sqlite.backend).toBe('sqlite');
    expect(await sqlite.ping()).toBe(true);
    await sqlite.close();
    // The pool connects lazily: opening does not reach the server.
    const postgres = openRouteStore({ backend: 'postgres', url: 'postgres://u:p@127.0.0.1:9/none' });
    expect(postgres.backend).toBe('postgres');
    await postgres.close();
  });
});
