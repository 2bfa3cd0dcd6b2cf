import { describeRouteStoreLocation, parseRouteStoreLocation } from '../../../src/config/route-store-location';

describe('parseRouteStoreLocation', () => {
  it('reads sqlite:<path> (relative to the working directory) and sqlite::memory:', () => {
    expect(parseRouteStoreLocation('sqlite:/var/lib/reelflow/routes.sqlite')).toEqual({
      backend: 'sqlite',
      path: '/var/lib/reelflow/routes.sqlite',
    });
    expect(parseRouteStoreLocation('sqlite:routes.sqlite')).toEqual({
      backend: 'sqlite',
      path: `${process.cwd()}/routes.sqlite`,
    });
    expect(parseRouteStoreLocation('sqlite::memory:')).toEqual({ backend: 'sqlite', path: ':memory:' });
  });

  it('reads sqlite:<path>?synchronous=full|normal and refuses other options', () => {
    expect(parseRouteStoreLocation('sqlite:/r.sqlite?synchronous=full')).toEqual({
      backend: 'sqlite',
      path: '/r.sqlite',
      synchronous: 'full',
    });
    expect(() => parseRouteStoreLocation('sqlite:/r.sqlite?synchronous=off')).toThrow(/full or normal/);
    expect(() => parseRouteStoreLocation('sqlite:/r.sqlite?cache=shared')).toThrow(/unknown option "cache"/);
  });

  it('reads postgres:// and postgresql:// URLs', () => {
    for (const url of ['postgres://u:p@db:5432/reelflow', 'postgresql://db/reelflow'])
      expect(parseRouteStoreLocation(url)).toEqual({ backend: 'postgres', url });
  });

  it('refuses anything else with the forms it takes', () => {
    expect(() => parseRouteStoreLocation('mysql://db')).toThrow(/sqlite:<path> or postgres:\/\//);
    expect(() => parseRouteStoreLocation('sqlite:')).toThrow(/file path/);
  });

  it('never shows the password', () => {
    expect(
      describeRouteStoreLocation({ backend: 'postgres', url: 'postgres://u:hunter2@db:5432/reelflow' }),
    ).not.toContain('hunter2');
  });
});
