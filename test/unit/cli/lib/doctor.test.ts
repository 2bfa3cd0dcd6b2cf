import {
  checkIdempotencyPolicy,
  checkWebhookAddress,
  doctorLines,
  readyzUrl,
  runCheck,
  type CheckResult,
  tracingLine,
} from '../../../../src/cli/lib/doctor';
import type { ReelflowEnv } from '../../../../src/config';
import type { RunningStackRecord } from '../../../../src/stack/stack-state';

const stack: RunningStackRecord = {
  pid: 1,
  startedAt: '2026-01-01T00:00:00Z',
  temporalAddress: '127.0.0.1:7233',
  temporalUiUrl: 'http://127.0.0.1:8233',
  namespace: 'default',
  serviceUrl: 'http://127.0.0.1:8710',
  bridgeUrl: 'http://127.0.0.1:8787/webhooks',
  taskQueue: 'reelflow',
};
const publicDns = { lookup: async () => [{ address: '93.184.216.34', family: 4 as const }], probe: false };
const privateDns = { lookup: async () => [{ address: '10.0.0.7', family: 4 as const }], probe: false };

describe('the webhook address check names the registration rule it breaks and the fix', () => {
  test.each([
    ['http://hooks.example.com/webhooks', 'https only', /TLS in front of the bridge/],
    ['https://hooks.example.com:8080/webhooks', 'allowed ports: 443 and 8443', /port 443 or 8443/],
    ['https://user:pw@hooks.example.com/webhooks', 'no credentials in the URL', /user:password@/],
    ['https://10.1.2.3/webhooks', 'a public address', /public addresses/],
    ['https://[::1]:8443/webhooks', 'a public address', /public addresses/],
  ])('%s', async (url, rule, fix) => {
    const outcome = await checkWebhookAddress(url, null, publicDns);
    expect(outcome.status).toBe('fail');
    expect(outcome.rule).toContain(rule);
    expect(outcome.fix).toMatch(fix);
    expect(outcome.detail).not.toContain(':pw@');
  });

  test('a host name that resolves to a private address is refused too', async () => {
    const outcome = await checkWebhookAddress('https://hooks.internal.example/webhooks', null, privateDns);
    expect(outcome).toMatchObject({ status: 'fail', rule: expect.stringContaining('a public address') });
    expect(outcome.detail).toContain('resolves to 10.0.0.7, a private address');
  });

  test('https on 443 or 8443 at a public address passes', async () => {
    for (const url of ['https://hooks.example.com/webhooks', 'https://hooks.example.com:8443/webhooks'])
      expect((await checkWebhookAddress(url, null, publicDns)).status).toBe('pass');
  });

  test("the local stack's own bridge is exempt; unset without a local stack fails with the fix", async () => {
    expect((await checkWebhookAddress(undefined, stack)).status).toBe('pass');
    expect((await checkWebhookAddress(stack.bridgeUrl, stack)).status).toBe('pass');
    expect((await checkWebhookAddress('http://127.0.0.1:9999/webhooks', stack)).status).toBe('fail');
    expect(await checkWebhookAddress(undefined, null)).toMatchObject({
      status: 'fail',
      fix: expect.stringContaining('REELFLOW_WEBHOOK_URL'),
    });
  });
});

test('readyz is read at the origin of the webhook address, else at the local bridge', () => {
  expect(readyzUrl('https://hooks.example.com:8443/webhooks', null)).toBe('https://hooks.example.com:8443/readyz');
  expect(readyzUrl(undefined, stack)).toBe('http://127.0.0.1:8787/readyz');
  expect(readyzUrl(undefined, null)).toBeNull();
});

test('the idempotency policy passes only when set on purpose', () => {
  const env = { service: { idempotency: 'unknown' } } as ReelflowEnv;
  expect(checkIdempotencyPolicy(env, true).status).toBe('pass');
  expect(checkIdempotencyPolicy(env, false)).toMatchObject({
    status: 'fail',
    fix: expect.stringContaining('docs/submit-policy.md'),
  });
});

test('a check that does not finish in time fails saying so; one that throws fails with its message', async () => {
  const slow = await runCheck('temporal', 't', 50, () => new Promise(() => undefined), 'the fix');
  expect(slow).toMatchObject({ status: 'fail', detail: 'no answer within 0.1 s', fix: 'the fix' });
  const thrown = await runCheck('temporal', 't', 1000, () => Promise.reject(new Error('boom\nstack')), 'fix');
  expect(thrown).toMatchObject({ status: 'fail', detail: 'boom' });
});

test('lines name each check, and the rule and fix of a failure', () => {
  const results: CheckResult[] = [
    { id: 'service', title: 'service', status: 'pass', detail: 'fine', ms: 3 },
    { id: 'webhook-url', title: 'webhook', status: 'fail', detail: 'bad', rule: 'R', fix: 'F', ms: 1 },
  ];
  expect(doctorLines(results)).toEqual([
    'ok    service: fine (3 ms)',
    'FAIL  webhook: bad (1 ms)',
    '        rule: R',
    '        fix:  F',
    '1 of 2 checks did not pass',
  ]);
});

describe('tracingLine', () => {
  it('says tracing is off, or where spans go without the export headers', () => {
    expect(tracingLine({})).toMatch(/^off \(set OTEL_EXPORTER_OTLP_ENDPOINT/);
    const line = tracingLine({
      OTEL_EXPORTER_OTLP_ENDPOINT: 'https://collector.example:4318',
      OTEL_EXPORTER_OTLP_HEADERS: 'authorization=Bearer%20tok-secret',
    });
    expect(line).toBe('OTLP/HTTP to https://collector.example:4318/v1/traces as reelflow-cli (headers: authorization)');
    expect(line).not.toContain('tok-secret');
  });
});
