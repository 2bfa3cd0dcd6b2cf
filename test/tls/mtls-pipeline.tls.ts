import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { routeStoreUrl, startCluster, stopCluster, type Cluster } from '../../scripts/cluster/index';
import { freePort } from '../../src/stack/stack-state';
import { jsonOf, runCli } from '../integration/cli-process';
import { LONG_FORM, PIXEL_PNG, startTestService, TEST_API_KEY, type TestService } from '../helpers/local-service';
import { makePrivateCa, type CertFiles } from '../helpers/private-ca';

/**
 * `npm run test:tls` (not part of `npm test`: it starts a Temporal cluster on PostgreSQL, which takes a
 * minute, and builds the server on first use). A Temporal 1.32.0 frontend that requires client
 * certificates signed by a private CA made here with openssl, its certificate issued for a name that
 * is not the address's host. The bridge, the worker and the CLI, each its own process, run one
 * pipeline through it, each configured another way the one loader reads: the bridge with Temporal's
 * standard variables, the worker with the deprecated reelflow names, the CLI with a profile of a
 * temporal.toml. Clients without a certificate, with one from another CA, or without TLS are refused.
 */

const ROOT = path.join(__dirname, '..', '..');
const SERVER_NAME = 'temporal.reelflow.test';
const TASK_QUEUE = `tls-${process.pid}`;

interface Child {
  process: ChildProcess;
  output: () => string;
  stop: () => Promise<void>;
}

/** Starts `src/workers/<entry>.ts` with exactly `env` (plus PATH/HOME) and waits for `ready` in its output. */
async function startEntry(entry: string, env: Record<string, string>, ready: RegExp): Promise<Child> {
  const child = spawn(process.execPath, ['-r', 'tsx/cjs', path.join(ROOT, 'src', 'workers', `${entry}.ts`)], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: fs.mkdtempSync(path.join(os.tmpdir(), 'reelflow-home-')), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${entry} did not start:\n${output}`)), 120_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (ready.test(output)) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${entry} exited with ${code}:\n${output}`));
    });
  });
  return {
    process: child,
    output: () => output,
    stop: async () => {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

let scratch: string;
let cluster: Cluster | null = null;
let service: TestService;
let bridge: Child;
let worker: Child;
let ca: ReturnType<typeof makePrivateCa>;
let client: CertFiles;
let rogue: CertFiles;
let cliEnv: Record<string, string>;

beforeAll(async () => {
  scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'reelflow-tls-'));
  // PostgreSQL runs as its own user: it must be able to walk into its data directory.
  fs.chmodSync(scratch, 0o755);
  const certs = path.join(scratch, 'certs');
  fs.mkdirSync(certs);
  ca = makePrivateCa(certs, 'cluster');
  // The frontend's certificate also serves as the worker role's client certificate (clientAuth).
  const frontend = ca.issue(SERVER_NAME, ['serverAuth', 'clientAuth']);
  client = ca.issue('reelflow-client', ['clientAuth']);
  rogue = makePrivateCa(certs, 'rogue').issue('reelflow-client', ['clientAuth']);

  cluster = await startCluster({
    dir: path.join(scratch, 'cluster'),
    log: (line) => process.stdout.write(`[tls] cluster: ${line}\n`),
    tls: { frontendCert: frontend.cert, frontendKey: frontend.key, caCert: ca.cert, serverName: SERVER_NAME },
    clientCert: client,
  });

  service = await startTestService();
  const bridgePort = await freePort();
  const registered = await service.call('POST', '/v1/webhooks/endpoints', {
    body: { url: `http://127.0.0.1:${bridgePort}/webhooks` },
  });
  if (registered.status !== 201) throw new Error(`webhook registration: HTTP ${registered.status}`);
  const media = `file://${path.join(scratch, 'media')}`;
  // The route store the bridge and the worker share: the cluster's PostgreSQL, as in production.
  const routeStore = routeStoreUrl(cluster);

  // The bridge: Temporal's standard variables.
  bridge = await startEntry(
    'bridge',
    {
      REELFLOW_WEBHOOK_SECRETS: String(registered.body.secret),
      REELFLOW_BRIDGE_PORT: String(bridgePort),
      TEMPORAL_ADDRESS: cluster.address,
      TEMPORAL_TLS_CLIENT_CERT_PATH: client.cert,
      TEMPORAL_TLS_CLIENT_KEY_PATH: client.key,
      TEMPORAL_TLS_SERVER_CA_CERT_PATH: ca.cert,
      TEMPORAL_TLS_SERVER_NAME: SERVER_NAME,
    },
    /reelflow bridge listening on/,
  );
  // The worker: the deprecated names for the client pair, still read (with a warning).
  worker = await startEntry(
    'worker',
    {
      TEMPORAL_ADDRESS: cluster.address,
      TEMPORAL_TLS_CERT_PATH: client.cert,
      TEMPORAL_TLS_KEY_PATH: client.key,
      TEMPORAL_TLS_SERVER_CA_CERT_PATH: ca.cert,
      TEMPORAL_TLS_SERVER_NAME: SERVER_NAME,
      REELFLOW_TASK_QUEUE: TASK_QUEUE,
      REELFLOW_SERVICE_URL: service.url,
      REELFLOW_API_KEY: TEST_API_KEY,
      REELFLOW_SERVICE_IDEMPOTENCY: 'honoured',
      REELFLOW_MEDIA_STORE: media,
      REELFLOW_ROUTE_STORE: routeStore,
      REELFLOW_LOG_LEVEL: 'warn',
    },
    /reelflow worker: task queue/,
  );
  // The CLI: a profile of Temporal's config file.
  const toml = path.join(scratch, 'temporal.toml');
  fs.writeFileSync(
    toml,
    [
      '[profile.selfhosted]',
      `address = "${cluster.address}"`,
      `namespace = "${cluster.record.namespace}"`,
      '[profile.selfhosted.tls]',
      `client_cert_path = "${client.cert}"`,
      `client_key_path = "${client.key}"`,
      `server_ca_cert_path = "${ca.cert}"`,
      `server_name = "${SERVER_NAME}"`,
    ].join('\n'),
  );
  cliEnv = {
    TEMPORAL_CONFIG_FILE: toml,
    TEMPORAL_PROFILE: 'selfhosted',
    REELFLOW_TASK_QUEUE: TASK_QUEUE,
    REELFLOW_SERVICE_URL: service.url,
    REELFLOW_API_KEY: TEST_API_KEY,
    REELFLOW_MEDIA_STORE: media,
  };
}, 900_000);

afterAll(async () => {
  await worker?.stop();
  await bridge?.stop();
  await service?.close();
  if (cluster) await stopCluster(cluster.dir, () => undefined);
  if (scratch) fs.rmSync(scratch, { recursive: true, force: true });
}, 120_000);

describe('a Temporal frontend that requires client certificates from a private CA', () => {
  it('the worker says how it connects, and warns once about the deprecated names', () => {
    expect(worker.output()).toContain(
      `mTLS, server CA from TEMPORAL_TLS_SERVER_CA_CERT_PATH, server name ${SERVER_NAME}`,
    );
    const warnings = worker.output().match(/TEMPORAL_TLS_CERT_PATH is deprecated: set TEMPORAL_TLS_CLIENT_CERT_PATH/g);
    expect(warnings).toHaveLength(1);
  });

  it('the CLI runs a pipeline that the worker executes and whose webhook the bridge signals', async () => {
    const dir = path.join(scratch, 'spec');
    fs.mkdirSync(dir);
    fs.writeFileSync(path.join(dir, 'hero.png'), Buffer.from(PIXEL_PNG.split(',')[1] ?? '', 'base64'));
    const spec = path.join(dir, 'tls-one.json');
    fs.writeFileSync(
      spec,
      JSON.stringify({
        name: 'tls-one',
        steps: [
          {
            id: 'generate',
            model: LONG_FORM,
            input: { image_urls: ['hero.png'], prompt: 'mTLS', duration: '4', resolution: '480p' },
          },
        ],
      }),
    );
    const run = await runCli(['run', spec, '--json'], cliEnv);
    expect({ code: run.code, stderr: run.code === 0 ? '' : run.stderr }).toEqual({ code: 0, stderr: '' });
    const summary = jsonOf(run);
    expect(summary.status).toBe('completed');
    // The completion came through the bridge: it handed the webhook to Temporal over mTLS.
    expect(bridge.output()).toContain('mTLS, server CA from TEMPORAL_TLS_SERVER_CA_CERT_PATH');
    expect(bridge.output()).toMatch(/"outcome":"accepted".*webhook event handed to Temporal/);
    const status = await runCli(['status', 'tls-one', '--json'], cliEnv);
    expect(status.code).toBe(0);
    expect(jsonOf(status)).toMatchObject({ temporalStatus: 'COMPLETED' });
  });

  it.each([
    ['no client certificate', () => ({ TEMPORAL_TLS_CLIENT_CERT_PATH: '', TEMPORAL_TLS_CLIENT_KEY_PATH: '' })],
    [
      'a client certificate from another CA',
      () => ({ TEMPORAL_TLS_CLIENT_CERT_PATH: rogue.cert, TEMPORAL_TLS_CLIENT_KEY_PATH: rogue.key }),
    ],
    ['no TLS', () => ({ TEMPORAL_TLS: 'false' })],
  ])('refuses a client with %s (exit 3, naming how it connected)', async (_what, override) => {
    // Without the profile's client pair: the same address, CA and server name from the variables.
    const env = {
      ...cliEnv,
      TEMPORAL_PROFILE: '',
      TEMPORAL_CONFIG_FILE: '',
      TEMPORAL_ADDRESS: cluster!.address,
      TEMPORAL_TLS_SERVER_CA_CERT_PATH: ca.cert,
      TEMPORAL_TLS_SERVER_NAME: SERVER_NAME,
      ...override(),
    };
    const result = await runCli(['status', 'tls-one'], env);
    expect(result.code).toBe(3);
    expect(result.stderr).toContain(`cannot reach Temporal at ${cluster!.address}`);
  });
});
