import * as net from 'node:net';
import { LONG_FORM, PIXEL_PNG, api, startTestService, waitUntil, type TestService } from '../helpers/local-service';

/**
 * Security battery, service side, over real HTTP against a real local service started WITHOUT the
 * dev flag (private webhooks and inputs refused): every SSRF class is refused by webhook registration
 * and by input fetching, with no connection ever made to the loopback target; revoked and malformed
 * API keys are refused.
 */

let service: TestService;
let trap: net.Server;
let port: number;
let connections = 0;

beforeAll(async () => {
  // A TCP listener on loopback (v4 and, where available, v6) that counts connection attempts: the
  // loopback-spelled targets below all point at it, so any fetch or probe would show up here.
  trap = net.createServer((socket) => {
    connections += 1;
    socket.destroy();
  });
  await new Promise<void>((resolve) => trap.listen(0, '::', resolve));
  port = (trap.address() as net.AddressInfo).port;
  service = await startTestService({ allowPrivateWebhooks: false });
});

afterAll(async () => {
  await service?.close();
  await new Promise<void>((resolve) => trap.close(() => resolve()));
});

/** One URL per SSRF class; the loopback ones aim at the trap. */
function ssrfTargets(): Array<[string, string]> {
  return [
    ['plain http', `http://127.0.0.1:${port}/hook`],
    ['loopback IPv4', `https://127.0.0.1:${port}/hook`],
    ['loopback by name', `https://localhost:${port}/hook`],
    ['loopback IPv6', `https://[::1]:${port}/hook`],
    ['IPv4-mapped IPv6 loopback', `https://[::ffff:127.0.0.1]:${port}/hook`],
    ['decimal IPv4 loopback', `https://2130706433:${port}/hook`],
    ['hex IPv4 loopback', `https://0x7f000001:${port}/hook`],
    ['octal IPv4 loopback', `https://0177.0.0.1:${port}/hook`],
    ['short IPv4 loopback', `https://127.1:${port}/hook`],
    ['unspecified IPv4', `https://0.0.0.0:${port}/hook`],
    ['unspecified IPv6', `https://[::]:${port}/hook`],
    ['private 10/8', 'https://10.0.0.1/hook'],
    ['private 172.16/12', 'https://172.16.5.4/hook'],
    ['private 192.168/16', 'https://192.168.1.1/hook'],
    ['cloud metadata (link-local)', 'https://169.254.169.254/latest/meta-data/'],
    ['IPv6 link-local', 'https://[fe80::1]/hook'],
    ['IPv6 unique-local', 'https://[fd00::1]/hook'],
    ['IPv6 metadata (AWS)', 'https://[fd00:ec2::254]/hook'],
    ['carrier-grade NAT', 'https://100.64.0.1/hook'],
    ['multicast', 'https://224.0.0.1/hook'],
    ['broadcast', 'https://255.255.255.255/hook'],
    ['NAT64 of loopback', 'https://[64:ff9b::7f00:1]/hook'],
    ['file scheme', 'file:///etc/passwd'],
    ['ftp scheme', `ftp://127.0.0.1:${port}/x`],
    ['gopher scheme', `gopher://127.0.0.1:${port}/_x`],
  ];
}

describe('SSRF: every class is refused, and no connection is made', () => {
  it('webhook registration refuses every class (no dev flag)', async () => {
    const accepted: string[] = [];
    for (const [label, url] of ssrfTargets()) {
      const response = await service.call('POST', '/v1/webhooks/endpoints', { body: { url } });
      if (response.status < 400 || response.status >= 500) accepted.push(`${label} (${url}) → ${response.status}`);
      else expect(response.contentType).toMatch(/application\/problem\+json/);
    }
    expect(accepted).toEqual([]);
    expect((await service.call('GET', '/v1/webhooks/endpoints')).body.endpoints).toEqual([]);
    expect(connections).toBe(0);
  });

  it('input fetching refuses every class: 422 at submit or a failed, refunded job, never a fetch', async () => {
    const submitted: string[] = [];
    const accepted: string[] = [];
    for (const [label, url] of ssrfTargets()) {
      const response = await service.call('POST', `/v1/queue/${LONG_FORM}`, {
        body: { image_urls: [PIXEL_PNG, url], duration: '4', resolution: '480p' },
      });
      if (response.status === 422) continue;
      if (response.status === 202) submitted.push(response.body.request_id as string);
      else accepted.push(`${label} (${url}) → ${response.status}`);
    }
    expect(accepted).toEqual([]);
    // Jobs that got past validation must end FAILED (input refused) and refunded.
    await waitUntil(
      () => service.service.jobs().every((j) => j.status !== 'IN_QUEUE' && j.status !== 'IN_PROGRESS'),
      60_000,
      'jobs to settle',
    );
    const jobs = service.service.jobs().filter((j) => submitted.includes(j.id));
    expect(jobs.filter((j) => j.status === 'COMPLETED')).toEqual([]);
    expect(jobs).toHaveLength(submitted.length);
    for (const job of jobs) {
      expect(job.error?.code).toBe('input_refused');
      expect(job.creditsRefunded).toBe(job.creditsCharged);
    }
    expect(connections).toBe(0);
  });
});

describe('API keys: revoked and malformed keys are refused', () => {
  it('refuses a revoked key at once, on every route, with Key and Bearer', async () => {
    const created = await service.call('POST', '/v1/account/keys');
    expect(created.status).toBe(201);
    const key = created.body.key as string;
    expect((await service.call('GET', '/v1/account/keys', { key })).status).toBe(200);
    expect((await service.call('DELETE', `/v1/account/keys/${created.body.id as string}`)).status).toBe(204);
    const jobsBefore = service.service.jobs().length;
    for (const [method, path, body] of [
      ['GET', '/v1/account/keys', undefined],
      ['POST', `/v1/queue/${LONG_FORM}`, { image_urls: [PIXEL_PNG] }],
      ['POST', '/v1/webhooks/endpoints', { url: 'https://example.com/hook' }],
      ['GET', '/v1/queue/requests/nope/status', undefined],
    ] as const) {
      const withKey = await service.call(method, path, { key, ...(body ? { body } : {}) });
      expect(withKey.status).toBe(401);
      const bearer = await service.call(method, path, {
        key: null,
        headers: { authorization: `Bearer ${key}` },
        ...(body ? { body } : {}),
      });
      expect(bearer.status).toBe(401);
    }
    expect(service.service.jobs()).toHaveLength(jobsBefore);
  });

  it('refuses malformed, truncated, altered and absent keys', async () => {
    const created = await service.call('POST', '/v1/account/keys');
    const good = created.body.key as string;
    const headers: Array<string | null> = [
      null,
      '',
      'Key',
      'Key ',
      `Basic ${Buffer.from(`user:${good}`).toString('base64')}`,
      `Token ${good}`,
      `Key ${good.slice(0, -1)}`,
      `Key ${good}x`,
      `Key ${good.toUpperCase() === good ? good.toLowerCase() : good.toUpperCase()}`,
      `Key x${good}`,
      `Key ${good.replace(/.$/, (c) => (c === 'a' ? 'b' : 'a'))}`,
      `Key ${'a'.repeat(5000)}`,
      `Key ${good},${good}`,
      'Key null',
      'Key undefined',
    ];
    const accepted: string[] = [];
    for (const header of headers) {
      const response = await api(service.url, 'GET', '/v1/account/keys', {
        key: null,
        headers: header === null ? {} : { authorization: header },
      });
      if (response.status !== 401) accepted.push(`${header?.slice(0, 40) ?? '(none)'} → ${response.status}`);
    }
    expect(accepted).toEqual([]);
    // The control: the same key, well-formed, is accepted.
    expect((await service.call('GET', '/v1/account/keys', { key: good })).status).toBe(200);
  });
});
