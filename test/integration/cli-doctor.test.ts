import * as net from 'node:net';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { CheckResult } from '../../src/cli/lib/doctor';
import { startLocalStack, type LocalStack } from '../../src/stack/local-stack';
import { freePort } from '../../src/stack/stack-state';
import { startDevServer } from '../helpers/temporal';
import { jsonOf, runCli, type CliResult } from './cli-process';

/**
 * `reelflow doctor` as an operator runs it (a child process) against a real local stack — Temporal dev
 * server, local service, bridge, worker — green with the environment `reelflow dev` prints, then red,
 * naming the rule and the fix, for each configuration mistake a team makes going live.
 */

let stateDir: string;
let stack: LocalStack;
let bare: TestWorkflowEnvironment;
let env: Record<string, string>;

beforeAll(async () => {
  stateDir = fs.mkdtempSync(path.join(os.tmpdir(), 'reelflow-doctor-'));
  [stack, bare] = await Promise.all([
    startLocalStack({ stateDir, autoPorts: true, reuseRunning: false }),
    // A namespace without reelflow's search attributes: a dev server started without registering them.
    startDevServer(),
  ]);
  env = {
    TEMPORAL_ADDRESS: stack.temporalAddress,
    TEMPORAL_NAMESPACE: stack.namespace,
    REELFLOW_TASK_QUEUE: stack.taskQueue,
    REELFLOW_SERVICE_URL: stack.serviceUrl,
    REELFLOW_API_KEY: stack.apiKey,
    REELFLOW_SERVICE_IDEMPOTENCY: 'honoured',
    REELFLOW_STATE_DIR: stack.paths.root,
  };
}, 180_000);

afterAll(async () => {
  await stack?.stop();
  await bare?.teardown();
  if (stateDir) fs.rmSync(stateDir, { recursive: true, force: true });
});

interface DoctorReport {
  ok: boolean;
  checks: CheckResult[];
  /** Whether tracing is on and where spans go. */
  tracing: string;
}

function check(result: CliResult, id: CheckResult['id']): CheckResult {
  const found = jsonOf<DoctorReport>(result).checks.find((c) => c.id === id);
  if (!found) throw new Error(`no ${id} check in:\n${result.stdout}`);
  return found;
}

test('green against the local stack: every check passes, exit 0, in text and JSON', async () => {
  const text = await runCli(['doctor'], env);
  expect(text.stderr).toBe('');
  expect(text.code).toBe(0);
  for (const title of [
    'service and API key',
    'public webhook address',
    'Temporal connection',
    'search attributes',
    'webhook bridge',
    'route store',
    'media store',
    'idempotency policy',
  ])
    expect(text.stdout).toMatch(new RegExp(`^ok {4}${title}: `, 'm'));
  expect(text.stdout).toContain('all 8 checks pass');
  expect(text.stdout).toMatch(/^info {2}tracing: off \(set OTEL_EXPORTER_OTLP_ENDPOINT/m);
  expect(text.stdout).toMatch(/^ok {4}Temporal connection: .*, namespace .*, plaintext/m);
  expect(text.stdout).toMatch(/^ok {4}route store: sqlite:.*routes\.sqlite answers/m);
  expect(text.stdout).toContain('schemes it takes: Key, Bearer');
  expect(text.stdout).not.toContain(stack.apiKey);

  const json = await runCli(['doctor', '--json'], env);
  expect(json.code).toBe(0);
  const report = jsonOf<DoctorReport>(json);
  expect(report.ok).toBe(true);
  expect(report.tracing).toMatch(/^off/);
  expect(report.checks.map((c) => [c.id, c.status])).toEqual([
    ['service', 'pass'],
    ['webhook-url', 'pass'],
    ['temporal', 'pass'],
    ['search-attributes', 'pass'],
    ['bridge', 'pass'],
    ['route-store', 'pass'],
    ['media-store', 'pass'],
    ['idempotency-policy', 'pass'],
  ]);
}, 60_000);

test.each([
  ['an http:// webhook URL', 'http://hooks.example.com/webhooks', 'https only', 'TLS in front of the bridge'],
  ['port 8080', 'https://hooks.example.com:8080/webhooks', 'allowed ports: 443 and 8443', 'port 443 or 8443'],
  ['a private-address host', 'https://10.20.30.40/webhooks', 'a public address', 'public addresses'],
])(
  'red for %s: the rule and the fix, exit 6',
  async (_name, url, rule, fix) => {
    const result = await runCli(['doctor', '--json'], { ...env, REELFLOW_WEBHOOK_URL: url });
    expect(result.code).toBe(6);
    expect(check(result, 'webhook-url')).toMatchObject({
      status: 'fail',
      rule: expect.stringContaining(rule),
      fix: expect.stringContaining(fix),
    });
    // The bridge is not fetched through an address that breaks the rules.
    expect(check(result, 'bridge').status).toBe('skip');
    expect(check(result, 'service').status).toBe('pass');

    const text = await runCli(['doctor'], { ...env, REELFLOW_WEBHOOK_URL: url });
    expect(text.code).toBe(6);
    expect(text.stdout).toMatch(/^FAIL {2}public webhook address: REELFLOW_WEBHOOK_URL /m);
    expect(text.stdout).toContain(`rule: ${check(result, 'webhook-url').rule}`);
    expect(text.stdout).toContain(`fix:  ${check(result, 'webhook-url').fix}`);
  },
  60_000,
);

test('red for a wrong API key', async () => {
  const result = await runCli(['doctor', '--json'], { ...env, REELFLOW_API_KEY: 'rfk_not-a-key-of-this-account' });
  expect(result.code).toBe(6);
  expect(check(result, 'service')).toMatchObject({
    status: 'fail',
    detail: expect.stringContaining('refused REELFLOW_API_KEY (401/403 with both Key and Bearer)'),
    fix: expect.stringContaining('set REELFLOW_API_KEY to a live key'),
  });
  expect(result.stdout).not.toContain('rfk_not-a-key-of-this-account');
}, 60_000);

test('red when Temporal is unreachable: the connection fails with its fix, the search attributes are not checked', async () => {
  const closed = await freePort();
  const result = await runCli(['doctor', '--json', '--timeout', '8'], {
    ...env,
    TEMPORAL_ADDRESS: `127.0.0.1:${closed}`,
  });
  expect(result.code).toBe(6);
  expect(check(result, 'temporal')).toMatchObject({
    status: 'fail',
    detail: expect.stringContaining(`cannot reach Temporal at 127.0.0.1:${closed}`),
    fix: expect.stringContaining('TEMPORAL_ADDRESS'),
  });
  expect(check(result, 'search-attributes').status).toBe('skip');
}, 60_000);

test("red for a namespace without reelflow's search attributes: each one named, and the command that creates them", async () => {
  const result = await runCli(['doctor', '--json'], { ...env, TEMPORAL_ADDRESS: bare.address });
  expect(result.code).toBe(6);
  expect(check(result, 'temporal').status).toBe('pass');
  const attributes = check(result, 'search-attributes');
  expect(attributes).toMatchObject({ status: 'fail', detail: expect.stringContaining('missing: ReelflowStatus') });
  expect(attributes.fix).toContain(
    'temporal operator search-attribute create --namespace default --name ReelflowStatus --type Keyword',
  );
  expect(attributes.fix).toContain('--name ReelflowRequestIds --type KeywordList');
}, 60_000);

test('red for a route store the worker would refuse: the variable and the reason, not a pass', async () => {
  const result = await runCli(['doctor', '--json'], { ...env, REELFLOW_ROUTE_STORE: 'mysql://x/y' });
  expect(result.code).toBe(6);
  expect(check(result, 'route-store')).toMatchObject({
    status: 'fail',
    detail: expect.stringContaining('REELFLOW_ROUTE_STORE'),
    fix: expect.stringContaining('postgres://'),
  });
}, 60_000);

test('every failure names its address, a short --timeout included; a password never shows', async () => {
  // A service that accepts connections and never answers, and a PostgreSQL address nobody listens on.
  const sockets: net.Socket[] = [];
  const silent = net.createServer((socket) => sockets.push(socket));
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  const silentUrl = `http://127.0.0.1:${(silent.address() as net.AddressInfo).port}`;
  const closed = await freePort();
  try {
    const result = await runCli(['doctor', '--json', '--timeout', '2'], {
      ...env,
      REELFLOW_SERVICE_URL: silentUrl,
      REELFLOW_ROUTE_STORE: `postgres://routes:pw-never-shown@127.0.0.1:${closed}/routes`,
    });
    expect(result.code).toBe(6);
    expect(check(result, 'service')).toMatchObject({
      status: 'fail',
      detail: expect.stringContaining(silentUrl),
    });
    expect(check(result, 'route-store')).toMatchObject({
      status: 'fail',
      detail: expect.stringContaining(`127.0.0.1:${closed}/routes`),
    });
    expect(result.stdout).not.toContain('pw-never-shown');
  } finally {
    for (const socket of sockets) socket.destroy();
    silent.close();
  }
}, 60_000);
