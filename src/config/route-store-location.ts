import { resolve } from 'node:path';

/** Where the route store lives: an SQLite file, or a PostgreSQL database. */
export type RouteStoreLocation =
  | {
      backend: 'sqlite';
      path: string;
      /** `?synchronous=full`: every commit synced to disk (survives a power cut, commits slower). Default normal. */
      synchronous?: 'full' | 'normal';
    }
  | { backend: 'postgres'; url: string };

/**
 * Reads a `REELFLOW_ROUTE_STORE` value: `sqlite:<path>` (relative paths from the working directory;
 * `sqlite::memory:` for a store private to one process) or `postgres://…` / `postgresql://…`.
 */
export function parseRouteStoreLocation(text: string): RouteStoreLocation {
  const value = text.trim();
  if (value.startsWith('sqlite:')) {
    const [rest = '', query = ''] = value.slice('sqlite:'.length).split('?', 2);
    const path = rest.replace(/^\/\/(?=\/)/, '');
    const params = new URLSearchParams(query);
    const synchronous = params.get('synchronous');
    for (const key of params.keys())
      if (key !== 'synchronous') throw new Error(`sqlite: unknown option "${key}" (only synchronous=full|normal)`);
    if (synchronous !== null && synchronous !== 'full' && synchronous !== 'normal')
      throw new Error('sqlite: synchronous must be full or normal');
    if (path.length === 0) throw new Error('sqlite: needs a file path, e.g. sqlite:.reelflow/routes.sqlite');
    return {
      backend: 'sqlite',
      path: path === ':memory:' ? path : resolve(path),
      ...(synchronous !== null ? { synchronous } : {}),
    };
  }
  if (/^postgres(ql)?:\/\//.test(value)) {
    try {
      new URL(value);
    } catch {
      throw new Error('not a valid postgres:// URL');
    }
    return { backend: 'postgres', url: value };
  }
  throw new Error('must be sqlite:<path> or postgres://user:password@host:port/database');
}

/** The location without its password, for logs and `reelflow doctor`. */
export function describeRouteStoreLocation(location: RouteStoreLocation): string {
  if (location.backend === 'sqlite')
    return `sqlite:${location.path}${location.synchronous ? `?synchronous=${location.synchronous}` : ''}`;
  const url = new URL(location.url);
  if (url.password) url.password = '***';
  return url.toString();
}
