import * as net from 'node:net';
import { DEFAULT_FAULTS, type RegisteredRoute } from '../../src/local-service';
import {
  LONG_FORM,
  PIXEL_PNG,
  TEST_ADMIN_KEY,
  TEST_API_KEY,
  api,
  startTestService,
  type TestService,
} from '../helpers/local-service';

/**
 * Authentication cannot be spelled around. Every route fastify registered (read from the app, so a
 * new route is covered without touching this test) is called without a key and with an
 * integration key under many spellings of its path, over a raw socket so that the bytes of the
 * request target are exactly the ones written here. Without a key nothing answers 2xx and no
 * handler runs; with an integration key no admin action happens.
 */

let svc: TestService;

beforeAll(async () => {
  svc = await startTestService();
});
afterAll(async () => {
  await svc.close();
});

interface RawAnswer {
  status: number;
  contentType: string;
}

/** One HTTP/1.1 request with the request target sent verbatim. */
function rawRequest(
  port: number,
  method: string,
  target: string,
  headers: Record<string, string>,
  body?: string,
): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.setTimeout(10_000, () => socket.destroy(new Error(`timeout: ${method} ${target}`)));
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('latin1');
      const status = /^HTTP\/1\.[01] (\d{3})/.exec(text);
      if (!status?.[1])
        return reject(new Error(`no HTTP answer to ${method} ${target}: ${JSON.stringify(text.slice(0, 200))}`));
      const head = text.split('\r\n\r\n')[0] ?? '';
      const type = /^content-type:\s*(.*)$/im.exec(head);
      resolve({ status: Number(status[1]), contentType: type?.[1]?.trim() ?? '' });
    });
    const lines = [`${method} ${target} HTTP/1.1`, `host: 127.0.0.1:${port}`, 'connection: close'];
    for (const [name, value] of Object.entries(headers)) lines.push(`${name}: ${value}`);
    if (body !== undefined) lines.push('content-type: application/json', `content-length: ${Buffer.byteLength(body)}`);
    socket.end(`${lines.join('\r\n')}\r\n\r\n${body ?? ''}`);
  });
}

const enc = (c: string, lower = false): string => {
  const hex = c.charCodeAt(0).toString(16).padStart(2, '0');
  return `%${lower ? hex : hex.toUpperCase()}`;
};

/** Many spellings of one path, each of which a lenient router or proxy might take for the path. */
export function spellings(path: string, port: number): string[] {
  const out = new Set<string>([path, `${path}?x=1`, `${path}#f`, `http://127.0.0.1:${port}${path}`]);
  const chars = [...path];
  // Percent-encoded letters and digits: one at a time, and all of them (upper and lower hex).
  chars.forEach((c, i) => {
    if (!/[A-Za-z0-9]/.test(c)) return;
    out.add(chars.map((d, j) => (j === i ? enc(d) : d)).join(''));
    out.add(chars.map((d, j) => (j === i ? enc(d, true) : d)).join(''));
  });
  out.add(chars.map((c) => (/[A-Za-z0-9]/.test(c) ? enc(c) : c)).join(''));
  out.add(chars.map((c) => (/[A-Za-z0-9]/.test(c) ? enc(c, true) : c)).join(''));
  out.add(chars.map((c) => (/[A-Za-z0-9]/.test(c) ? `%25${enc(c).slice(1)}` : c)).join('')); // double-encoded
  // Case.
  out.add(path.toUpperCase());
  out.add(path.replace(/^\/v1/, '/V1'));
  out.add(path.replace(/[a-z]/, (c) => c.toUpperCase()));
  // Slashes: doubled one at a time, leading, trailing, encoded, backslashes.
  const slashes = chars.map((c, i) => (c === '/' ? i : -1)).filter((i) => i >= 0);
  for (const i of slashes) {
    out.add(`${path.slice(0, i)}/${path.slice(i)}`);
    if (i > 0) {
      out.add(`${path.slice(0, i)}%2F${path.slice(i + 1)}`);
      out.add(`${path.slice(0, i)}%2f${path.slice(i + 1)}`);
      out.add(`${path.slice(0, i)}%5C${path.slice(i + 1)}`);
    }
  }
  out.add(`${path}/`);
  out.add(`${path}//`);
  out.add(path.replace(/\//g, '\\'));
  out.add(`/${path.slice(1).replace(/\//g, '%2F')}`);
  // Dot segments (plain and encoded) after every segment, and `;` parameters on every segment.
  for (const i of slashes) {
    const head = path.slice(0, i);
    const tail = path.slice(i);
    out.add(`${head}/.${tail}`);
    out.add(`${head}/x/..${tail}`);
    out.add(`${head}/%2e${tail}`);
    out.add(`${head}/x/%2e%2e${tail}`);
    out.add(`${head}/x/%2E%2E${tail}`);
    if (i > 0) out.add(`${head};a=b${tail}`);
  }
  out.add(`${path};`);
  out.add(`${path};jsessionid=1`);
  out.add(`/./${path.slice(1)}`);
  out.add(`/..${path}`);
  return [...out];
}

/** Path of a route pattern with every parameter filled. */
function fill(url: string): string {
  return url.replace(/:model/g, LONG_FORM).replace(/:(\w+)/g, (_m, name: string) => `${name}-0000`);
}

/** A body the handler would accept if it ran (so a 2xx would really mean the action happened). */
function bodyFor(route: RegisteredRoute): string | undefined {
  if (route.method === 'GET' || route.method === 'HEAD') return undefined;
  const bodies: Record<string, unknown> = {
    '/v1/admin/credits': { credits: 5 },
    '/v1/admin/faults': { failureRate: 1, dropSubmitResponseRate: 1 },
    '/v1/webhooks/endpoints': { url: 'http://127.0.0.1:9/hook' },
    '/v1/queue/:model': { image_urls: [PIXEL_PNG] },
    '/v1/pricing/quote': { model: LONG_FORM, input: { image_urls: [PIXEL_PNG] } },
  };
  return JSON.stringify(bodies[route.url] ?? {});
}

interface Finding {
  route: string;
  target: string;
  status: number;
}

async function sweep(
  routes: RegisteredRoute[],
  headers: Record<string, string>,
  allowed: (route: RegisteredRoute, status: number) => boolean,
): Promise<{ findings: Finding[]; requests: number }> {
  const cases = routes.flatMap((route) =>
    spellings(fill(route.url), svc.service.port).map((target) => ({ route, target })),
  );
  const findings: Finding[] = [];
  // A few at a time: enough to be quick, few enough not to crowd a shared machine.
  for (let i = 0; i < cases.length; i += 16) {
    const batch = cases.slice(i, i + 16);
    const answers = await Promise.all(
      batch.map(({ route, target }) => rawRequest(svc.service.port, route.method, target, headers, bodyFor(route))),
    );
    answers.forEach((answer, j) => {
      const c = batch[j]!;
      if (!allowed(c.route, answer.status))
        findings.push({ route: `${c.route.method} ${c.route.url}`, target: c.target, status: answer.status });
      // Whatever the spelling, a 404 is a problem document.
      if (answer.status === 404 && c.route.method !== 'HEAD')
        expect(answer.contentType).toMatch(/^application\/problem\+json/);
    });
  }
  return { findings, requests: cases.length };
}

function books() {
  const s = svc.service;
  return {
    balance: s.balance(),
    faults: s.faults(),
    counters: s.counters(),
    jobs: s.jobs().length,
    ledger: s.ledger().length,
  };
}

test('the route table comes from fastify and covers the API, the admin routes and the public files route', () => {
  const routes = svc.service.routes();
  const keys = routes.map((r) => `${r.method} ${r.url} ${r.access}`);
  expect(keys).toEqual(
    expect.arrayContaining([
      'POST /v1/queue/:model key',
      'GET /v1/account/keys key',
      'HEAD /v1/account/keys key',
      'PUT /v1/admin/faults admin',
      'POST /v1/admin/credits admin',
      'GET /files/:id/:name public',
    ]),
  );
  expect(routes.filter((r) => r.url.startsWith('/v1')).every((r) => r.access !== 'public')).toBe(true);
});

test('no spelling of any route answers 2xx or runs a handler without a key', async () => {
  const before = books();
  const keysBefore = (await api(svc.url, 'GET', '/v1/account/keys')).body.keys.length;
  const routes = svc.service.routes();
  // Without a key a protected route is 401 and an unknown spelling 404; 400 is a URL the parser refuses.
  const { findings, requests } = await sweep(routes, {}, (route, status) =>
    route.access === 'public' ? status === 404 || status === 400 : [400, 401, 404].includes(status),
  );
  expect(findings).toEqual([]);
  const bad = await sweep(routes, { authorization: 'Key not-a-real-key-000' }, (route, status) =>
    route.access === 'public' ? status === 404 || status === 400 : [400, 401, 404].includes(status),
  );
  expect(bad.findings).toEqual([]);
  expect(requests).toBeGreaterThan(routes.length * 40);
  expect(books()).toEqual(before);
  expect((await api(svc.url, 'GET', '/v1/account/keys')).body.keys.length).toBe(keysBefore);
  expect((await api(svc.url, 'GET', '/v1/webhooks/endpoints')).body.endpoints).toEqual([]);
  // The canonical spellings themselves: 401 with a problem document.
  const plain = await api(svc.url, 'GET', '/%761/account/keys', { key: null });
  expect(plain.status).toBe(401);
  expect(plain.body.code).toBe('unauthorized');
});

test('an integration key performs no admin action under any spelling', async () => {
  const before = books();
  const admin = svc.service.routes().filter((r) => r.access === 'admin');
  expect(admin.length).toBeGreaterThanOrEqual(3);
  const { findings } = await sweep(admin, { authorization: `Key ${TEST_API_KEY}` }, (_route, status) =>
    [400, 403, 404].includes(status),
  );
  expect(findings).toEqual([]);
  expect(books()).toEqual(before);
  expect(svc.service.faults()).toEqual(DEFAULT_FAULTS);

  const forbidden = await api(svc.url, 'POST', '/v1/admin/credits', { body: { credits: 5 } });
  expect(forbidden.status).toBe(403);
  expect(forbidden.body.code).toBe('forbidden');
  // The admin key works there, and nowhere else.
  const granted = await api(svc.url, 'POST', '/v1/admin/credits', { body: { credits: 5 }, key: TEST_ADMIN_KEY });
  expect(granted.status).toBe(200);
  expect(granted.body.credits).toBe(before.balance + 5);
  expect((await api(svc.url, 'GET', '/v1/account/balance', { key: TEST_ADMIN_KEY })).status).toBe(401);
});

test('without an admin credential the admin routes do not exist', async () => {
  const plain = await startTestService({ adminKey: undefined });
  try {
    expect(plain.service.routes().filter((r) => r.access === 'admin')).toEqual([]);
    for (const [method, path] of [
      ['PUT', '/v1/admin/faults'],
      ['GET', '/v1/admin/faults'],
      ['POST', '/v1/admin/credits'],
    ] as const) {
      for (const key of [TEST_API_KEY, TEST_ADMIN_KEY, null]) {
        const answer = await plain.call(method, path, { key, ...(method === 'GET' ? {} : { body: { credits: 5 } }) });
        expect(answer.status).toBe(404);
        expect(answer.body.code).toBe('not_found');
      }
    }
  } finally {
    await plain.close();
  }
});
