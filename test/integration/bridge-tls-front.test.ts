import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Agent, request } from 'undici';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { loadBridgeConfig, startBridgeServer, type RunningBridge } from '../../src/bridge';
import { DatabaseSync } from 'node:sqlite';
import { freePort } from '../../src/stack/stack-state';
import {
  LONG_FORM,
  PIXEL_PNG,
  TEST_API_KEY,
  api,
  spawnServiceWorker,
  tempDataDir,
  waitUntil,
  type ServiceProcess,
} from '../helpers/local-service';
import { makePrivateCa, type CertFiles } from '../helpers/private-ca';
import { startDevServer } from '../helpers/temporal';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const { resolveNginx } = require('../../scripts/ensure-nginx') as { resolveNginx: () => string | null };

/**
 * The TLS front of docs/going-live.md, as shipped (deploy/nginx/webhooks-tls.conf, only its upstream,
 * listen address and certificate paths replaced), run by Debian's nginx with a certificate from a
 * private CA made with openssl: the local service — trusting that CA the way a real service trusts a
 * public one — registers https://localhost:<port>/webhooks and delivers a signed completion through
 * it to the real bridge, which keeps it in its route store; /readyz answers through it; a forged delivery is
 * still refused by the bridge behind it, and a client that does not trust the CA gets no answer.
 */

const NGINX = resolveNginx();
const CONF = path.join(__dirname, '..', '..', 'deploy', 'nginx', 'webhooks-tls.conf');
const required = process.env.REELFLOW_REQUIRE_NGINX === '1';
const maybe = NGINX || required ? test : test.skip;
if (!NGINX && !required)
  console.warn(
    'bridge-tls-front: nginx not found (node scripts/ensure-nginx.js --install); the TLS front test is skipped',
  );

let dir: string;
let temporal: TestWorkflowEnvironment | null = null;
let bridge: RunningBridge | null = null;
let nginx: ChildProcess | null = null;
let service: ServiceProcess | null = null;

afterAll(async () => {
  await service?.stop('SIGKILL');
  nginx?.kill('SIGTERM');
  await bridge?.close();
  await temporal?.teardown();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

/** The shipped configuration with this machine's bridge, port and certificate in place of the deployment's. */
function renderFrontConf(conf: string, bridgePort: number, port: number, tls: CertFiles): string {
  const replaced = conf
    .replace(/^ {4}server bridge-1:8787 .*\n {4}server bridge-2:8787 .*$/m, `    server 127.0.0.1:${bridgePort};`)
    .replace(/^ {4}listen 8443 ssl;$/m, `    listen 127.0.0.1:${port} ssl;`)
    .replace('/etc/nginx/tls/fullchain.pem', tls.cert)
    .replace('/etc/nginx/tls/privkey.pem', tls.key);
  for (const original of ['bridge-1:8787', 'listen 8443', '/etc/nginx/tls/'])
    if (replaced.includes(original)) throw new Error(`deploy/nginx/webhooks-tls.conf: ${original} was not replaced`);
  return replaced;
}

async function startNginx(conf: string, port: number): Promise<ChildProcess> {
  const prefix = path.join(dir, 'nginx');
  fs.mkdirSync(path.join(prefix, 'tmp'), { recursive: true });
  fs.writeFileSync(path.join(prefix, 'webhooks-tls.conf'), conf);
  const user = process.getuid?.() === 0 ? 'user root root;\n' : '';
  const temp = ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi']
    .map((kind) => `  ${kind}_temp_path ${path.join(prefix, 'tmp', kind)};`)
    .join('\n');
  fs.writeFileSync(
    path.join(prefix, 'nginx.conf'),
    `${user}worker_processes 1;\npid ${path.join(prefix, 'nginx.pid')};\nerror_log ${path.join(prefix, 'error.log')} warn;\n` +
      `events { worker_connections 64; }\nhttp {\n  access_log off;\n${temp}\n  include ${path.join(prefix, 'webhooks-tls.conf')};\n}\n`,
  );
  const child = spawn(NGINX!, ['-p', prefix, '-c', path.join(prefix, 'nginx.conf'), '-g', 'daemon off;'], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const started = Date.now();
  for (;;) {
    if (child.exitCode !== null) throw new Error(`nginx exited with ${child.exitCode}: ${stderr}`);
    const listening = await request(`https://127.0.0.1:${port}/`, {
      dispatcher: new Agent({ connect: { rejectUnauthorized: false } }),
    }).then(
      (r) => r.body.dump().then(() => true),
      () => false,
    );
    if (listening) return child;
    if (Date.now() - started > 15_000) throw new Error(`nginx did not listen on ${port}: ${stderr}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

maybe(
  'a signed completion reaches the bridge through TLS in front of it; /readyz answers through it; forgeries and untrusting clients get nowhere',
  async () => {
    if (!NGINX)
      throw new Error(
        'nginx is required (REELFLOW_REQUIRE_NGINX=1) but not found: node scripts/ensure-nginx.js --install',
      );
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reelflow-tls-front-'));
    const ca = makePrivateCa(dir, 'webhooks');
    const serverCert = ca.issue('localhost', ['serverAuth']);
    temporal = await startDevServer();
    const [bridgePort, port] = [await freePort(), await freePort()];

    // The service trusts the private CA as a real one trusts public CAs; deliveries go to https only.
    service = await spawnServiceWorker({
      REELFLOW_SERVICE_DATA_DIR: tempDataDir(),
      REELFLOW_SERVICE_API_KEYS: TEST_API_KEY,
      REELFLOW_SERVICE_PORT: '0',
      REELFLOW_SERVICE_ALLOW_PRIVATE_WEBHOOKS: '1',
      NODE_EXTRA_CA_CERTS: ca.cert,
    });
    nginx = await startNginx(renderFrontConf(fs.readFileSync(CONF, 'utf8'), bridgePort, port, serverCert), port);
    const webhookUrl = `https://localhost:${port}/webhooks`;
    const routeStoreFile = path.join(dir, 'routes.sqlite');

    const registered = await api(service.url, 'POST', '/v1/webhooks/endpoints', { body: { url: webhookUrl } });
    expect(registered.status).toBe(201);
    bridge = await startBridgeServer(
      loadBridgeConfig({
        REELFLOW_WEBHOOK_SECRETS: String(registered.body.secret),
        TEMPORAL_ADDRESS: temporal.address,
        REELFLOW_BRIDGE_HOST: '127.0.0.1',
        REELFLOW_BRIDGE_PORT: String(bridgePort),
        REELFLOW_LOG_LEVEL: 'silent',
        REELFLOW_ROUTE_STORE: `sqlite:${routeStoreFile}`,
      }),
    );

    const trusting = new Agent({ connect: { ca: fs.readFileSync(ca.cert) } });
    const ready = await request(`https://localhost:${port}/readyz`, { dispatcher: trusting });
    expect(ready.statusCode).toBe(200);
    expect(await ready.body.json()).toEqual({ status: 'ready' });

    // A real job: its signed generation.completed goes service → nginx (TLS) → bridge → route store.
    const submitted = await api(service.url, 'POST', `/v1/queue/${LONG_FORM}`, {
      body: { image_urls: [PIXEL_PNG], duration: '4', resolution: '480p' },
    });
    expect(submitted.status).toBe(202);
    const requestId = String(submitted.body.request_id);
    // The bridge acknowledged it once it was a row of its route store's inbox (no pipeline waits for
    // this job, so the forwarder parks it there until its TTL).
    await waitUntil(
      () => {
        const rows = new DatabaseSync(routeStoreFile, { readOnly: true });
        try {
          return rows.prepare('SELECT 1 FROM reelflow_inbox WHERE request_id = ?').get(requestId) !== undefined;
        } catch {
          return false; // the bridge has not created its tables yet
        } finally {
          rows.close();
        }
      },
      60_000,
      `the delivery of ${requestId} through the TLS front in the bridge's inbox`,
    );

    // A forged delivery through the front: the bridge behind it still checks the signature.
    const forged = await request(webhookUrl, {
      method: 'POST',
      dispatcher: trusting,
      headers: {
        'content-type': 'application/json',
        'webhook-id': 'x',
        'webhook-timestamp': '1',
        'webhook-signature': 'v1=AAAA',
      },
      body: JSON.stringify({ request_id: requestId }),
    });
    expect(forged.statusCode).toBe(401);
    await forged.body.dump();

    // Only /webhooks and /readyz are forwarded; a client that does not trust the CA is refused.
    const other = await request(`https://localhost:${port}/metrics`, { dispatcher: trusting });
    expect(other.statusCode).toBe(404);
    await other.body.dump();
    await expect(request(`https://localhost:${port}/readyz`)).rejects.toThrow(/certificate/i);
    await trusting.close();
  },
  180_000,
);
