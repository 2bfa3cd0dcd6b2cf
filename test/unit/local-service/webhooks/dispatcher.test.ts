import * as fs from 'node:fs';
import * as http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';
import { verify } from '../../../../src/contract/signature';
import type { AddressRuleOptions } from '../../../../src/net/url-rules';
import { DEFAULT_FAULTS } from '../../../../src/local-service/faults';
import type { DeliveryRecord, JobRecord } from '../../../../src/local-service/store/records';
import { EventBodyStore } from '../../../../src/local-service/store/side-files';
import { Store } from '../../../../src/local-service/store/store';
import { WebhookDispatcher } from '../../../../src/local-service/webhooks/dispatcher';
import { dnsTable } from '../../../helpers/dns-table';
import { waitUntil } from '../../../helpers/local-service';

/**
 * Webhook deliveries against real loopback receivers, with DNS answered by a table (DNS is outside
 * the machine): a name that does not resolve is retried on the schedule, the connection goes to
 * the address that was checked, and redirects are followed up to 3 hops, each checked again.
 */

const SECRET = 'whsec_test-secret';
const silent = { info: () => undefined, warn: () => undefined };
let dir: string;
let store: Store;
let servers: http.Server[] = [];
let dispatcher: WebhookDispatcher | null = null;

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reelflow-delivery-'));
  ({ store } = Store.open(path.join(dir, 'state')));
});
afterEach(async () => {
  await dispatcher?.close();
  dispatcher = null;
  for (const server of servers) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
  servers = [];
  store.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

interface Hit {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** A loopback server; `answer` gives status and headers per request. */
async function server(
  answer: (hit: Hit, n: number) => { status: number; headers?: Record<string, string> },
): Promise<{ port: number; hits: Hit[] }> {
  const hits: Hit[] = [];
  const srv = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const hit = { path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') };
      const { status, headers } = answer(hit, hits.length);
      hits.push(hit);
      res.writeHead(status, headers).end();
    });
  });
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  servers.push(srv);
  return { port: (srv.address() as { port: number }).port, hits };
}

/** One completed job's event, pending to one endpoint at `url`; returns the delivery once settled. */
async function deliver(
  url: string,
  rules: AddressRuleOptions,
  done: (d: DeliveryRecord) => boolean = (d) => d.state !== 'pending',
): Promise<DeliveryRecord> {
  store.commit({
    t: 'endpoint.created',
    endpoint: { id: 'we_1', url, secret: SECRET, previousSecret: null, previousSecretExpiresAt: null, createdAt: 1 },
  });
  dispatcher = new WebhookDispatcher({
    store,
    bodies: new EventBodyStore(path.join(dir, 'events')),
    faults: () => DEFAULT_FAULTS,
    log: silent,
    rules,
    attemptTimeoutMs: 1_500,
  });
  const job: JobRecord = {
    id: 'req_1',
    model: 'service-video-cinema-long-form-from-references',
    status: 'COMPLETED',
    idempotencyKey: null,
    bodyHash: 'x',
    creditsCharged: 80,
    creditsRefunded: 0,
    billedSeconds: null,
    submittedAt: 1,
    startedAt: 2,
    completedAt: 3,
    result: { request_id: 'req_1', status: 'COMPLETED', videos: [] },
    error: null,
  };
  const [delivery] = dispatcher.prepare(job);
  store.commit({ t: 'delivery.created', delivery: delivery! });
  dispatcher.start([delivery!]);
  await waitUntil(() => done(store.state.deliveries.get(delivery!.id)!), 20_000, 'the delivery to settle');
  return store.state.deliveries.get(delivery!.id)!;
}

/** Rules for loopback receivers standing in for public hosts (http, any port, loopback allowed). */
function rules(
  lookup: AddressRuleOptions['lookup'],
  allowedClasses: AddressRuleOptions['allowedClasses'] = ['public', 'loopback'],
): AddressRuleOptions {
  return { allowPrivate: false, schemes: ['http:'], ports: 'any', allowedClasses, ...(lookup ? { lookup } : {}) };
}

test('a name that does not resolve is retried on the 1 s step of the schedule, then delivered', async () => {
  const receiver = await server(() => ({ status: 200 }));
  let failing = true;
  const table = dnsTable({ 'hooks.example': ['127.0.0.1'] });
  const lookup: AddressRuleOptions['lookup'] = async (host) => {
    if (failing) {
      failing = false;
      throw Object.assign(new Error(`getaddrinfo EAI_AGAIN ${host}`), { code: 'EAI_AGAIN' });
    }
    return table(host);
  };
  const started = Date.now();
  const settled = await deliver(`http://hooks.example:${receiver.port}/hook`, rules(lookup));
  expect(settled).toMatchObject({ state: 'delivered', attempts: 2, lastStatus: 200 });
  expect(Date.now() - started).toBeGreaterThanOrEqual(1_000);
  expect(receiver.hits).toHaveLength(1);
  // The signature is over the exact stored body.
  const hit = receiver.hits[0]!;
  expect(
    verify({
      headers: hit.headers as Record<string, string>,
      body: hit.body,
      secrets: [SECRET],
    }).ok,
  ).toBe(true);
});

test('a name that never resolves stays on the retry schedule instead of failing after one attempt', async () => {
  const lookup = dnsTable({});
  const after = await deliver('http://nowhere.example/hook', rules(lookup), (d) => d.attempts >= 2);
  expect(after.state).toBe('pending');
  expect(after.lastError).toMatch(/does not resolve/);
  expect(after.nextAttemptAt).not.toBeNull();
  expect(lookup.calls).toEqual(['nowhere.example', 'nowhere.example']);
});

test('the connection goes to the checked address: a name checked as one address and resolving to loopback when connecting never reaches loopback', async () => {
  const receiver = await server(() => ({ status: 200 }));
  // The rules see 192.0.2.10 (allowed here, and unroutable); the system resolver would say
  // 127.0.0.1 for "localhost", where the receiver listens. A connection that resolved the name
  // again would reach it.
  const lookup = dnsTable({ localhost: ['192.0.2.10'] });
  const after = await deliver(
    `http://localhost:${receiver.port}/hook`,
    rules(lookup, ['reserved']),
    (d) => d.attempts >= 1,
  );
  expect(receiver.hits).toHaveLength(0);
  expect(after.lastStatus).toBeNull();
  expect(after.lastError).not.toBeNull();
  // A connection failure is retried on the schedule like any network error.
  expect(after.state).toBe('pending');
});

test('redirects are followed up to 3 hops with the same signed body, each hop checked again', async () => {
  const final = await server(() => ({ status: 204 }));
  const lookup = dnsTable({ 'a.example': ['127.0.0.1'], 'b.example': ['127.0.0.1'], 'c.example': ['127.0.0.1'] });
  const first = await server(() => ({ status: 307, headers: { location: `http://b.example:${middlePort}/two` } }));
  const middle = await server(() => ({ status: 308, headers: { location: `http://c.example:${final.port}/three` } }));
  const middlePort = middle.port;
  const settled = await deliver(`http://a.example:${first.port}/one`, rules(lookup));
  expect(settled).toMatchObject({ state: 'delivered', attempts: 1, lastStatus: 204 });
  expect(first.hits).toHaveLength(1);
  expect(middle.hits).toHaveLength(1);
  expect(final.hits.map((h) => h.path)).toEqual(['/three']);
  expect(final.hits[0]!.body).toBe(first.hits[0]!.body);
  expect(final.hits[0]!.headers['service-webhook-signature']).toBe(first.hits[0]!.headers['service-webhook-signature']);
  expect(lookup.calls).toEqual(['a.example', 'b.example', 'c.example']);
});

test('a redirect to a refused address fails the delivery permanently without connecting', async () => {
  const lookup = dnsTable({ 'a.example': ['127.0.0.1'], 'inside.example': ['10.0.0.5'] });
  const first = await server(() => ({ status: 302, headers: { location: 'http://inside.example/admin' } }));
  const settled = await deliver(`http://a.example:${first.port}/one`, rules(lookup));
  expect(settled.state).toBe('failed');
  expect(settled.attempts).toBe(1);
  expect(settled.lastError).toMatch(/redirect 1: refused: host inside.example resolves to 10.0.0.5, a private address/);
  const metadata = await server(() => ({
    status: 307,
    headers: { location: 'http://169.254.169.254/latest/meta-data' },
  }));
  store.commit({ t: 'endpoint.deleted', id: 'we_1' });
  const again = await deliver(`http://a.example:${metadata.port}/one`, rules(lookup));
  expect(again.lastError).toMatch(/redirect 1: refused: 169.254.169.254/);
});

test('more than 3 redirects fail the delivery permanently', async () => {
  const lookup = dnsTable({ 'a.example': ['127.0.0.1'] });
  const loop = await server((hit) => ({
    status: 307,
    headers: { location: `http://a.example:${loopPort}${hit.path}x` },
  }));
  const loopPort = loop.port;
  const settled = await deliver(`http://a.example:${loop.port}/r`, rules(lookup));
  expect(settled).toMatchObject({ state: 'failed', attempts: 1, lastError: 'more than 3 redirects' });
  expect(loop.hits.map((h) => h.path)).toEqual(['/r', '/rx', '/rxx', '/rxxx']);
});
