import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { defaultPayloadConverter } from '@temporalio/common';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { request } from 'undici';
import type { SubmitRequest } from '../../src/activities';
import { signedHeaders } from '../../src/contract/signature';
import { freePort } from '../../src/stack/stack-state';
import type { ServiceStepResult } from '../../src/workflows/public';
import { startRegisteredBridge, type RegisteredBridge } from '../helpers/registered-bridge';
import { testRouteStoreFile } from '../helpers/route-store';
import { PIXEL_PNG, startTestService, TEST_API_KEY, waitUntil, type TestService } from '../helpers/local-service';
import { startDevServer } from '../helpers/temporal';
import { runNode } from '../integration/cli-process';
import { OPTIONAL_PACKAGES } from '../../src/config/optional-packages';

/**
 * reelflow as a Temporal team installs it: `npm pack` of this project (its prepack builds dist/), a fresh
 * project in a temporary directory that installs the tarball with its peers from the registry (the npm
 * cache first), type-checks its own workflow and worker (library-consumer/), bundles the workflow with the
 * SDK's plain bundleWorkflowCode and runs it with plain Node: a worker on its own task queue with
 * reelflowPlugin() against the local stack (dev server, local service, bridge, route store), and an Express
 * receiver built on verifyWebhook. Prints how long each phase took.
 */

const ROOT = path.resolve(__dirname, '..', '..');
const CONSUMER_SOURCES = path.join(__dirname, 'library-consumer');
const TASK_QUEUE = 'library-consumer';
/**
 * Installed beside the tarball, at this project's locked versions: reelflow's required peers, and what the
 * consumer's own code uses. Nothing else: a team that uses the step functions, reelflowPlugin and
 * verifyWebhook installs none of reelflow's optional peers (OPTIONAL below).
 */
const BESIDE = [
  ...['activity', 'client', 'common', 'envconfig', 'worker', 'workflow'].map((name) => `@temporalio/${name}`),
  ...['express', 'typescript', '@types/express', '@types/node'],
];

/** reelflow's optional peers (package.json peerDependenciesMeta): absent from the consumer's install. */
const OPTIONAL = Object.keys(OPTIONAL_PACKAGES);

const phases: [string, number][] = [];
async function timed<T>(phase: string, work: () => Promise<T>): Promise<T> {
  const started = Date.now();
  try {
    return await work();
  } finally {
    phases.push([phase, Date.now() - started]);
  }
}

/**
 * Besides PATH and HOME (runNode), what npm may need to reach the registry: the proxy settings, the
 * certificates a TLS-inspecting proxy signs with (NODE_EXTRA_CA_CERTS, npm's cafile) and the registry
 * npm is pointed at (npm_config_registry, a mirror); nothing else leaks in.
 */
function proxyEnv(): Record<string, string> {
  return Object.fromEntries(
    Object.entries(process.env).filter(
      (entry): entry is [string, string] =>
        /^((https?|no)_proxy|node_extra_ca_certs|npm_config_(cafile|registry))$/i.test(entry[0]) &&
        entry[1] !== undefined,
    ),
  );
}

async function mustRunNode(argv: string[], cwd: string): Promise<string> {
  const result = await runNode(argv, proxyEnv(), { cwd });
  if (result.code !== 0)
    throw new Error(`node ${argv.join(' ')} exited ${result.code}:\n${result.stdout}\n${result.stderr}`);
  return result.stdout;
}

/** npm's own script: beside the Node that runs this test (a Node distribution), else the `npm` on PATH. */
function npmCli(): string {
  const beside = path.join(path.dirname(process.execPath), '..', 'lib', 'node_modules', 'npm', 'bin', 'npm-cli.js');
  if (fs.existsSync(beside)) return beside;
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    const found = path.join(dir, 'npm');
    if (fs.existsSync(found) && fs.realpathSync(found).endsWith('.js')) return fs.realpathSync(found);
  }
  throw new Error('npm not found beside node nor on PATH');
}

const npm = (args: string[], cwd: string) => mustRunNode([npmCli(), ...args], cwd);

/** The versions this project's lockfile installed: the consumer gets the same peers. */
function lockedVersions(names: string[]): Record<string, string> {
  const lock = JSON.parse(fs.readFileSync(path.join(ROOT, 'package-lock.json'), 'utf8')) as {
    packages: Record<string, { version?: string }>;
  };
  return Object.fromEntries(
    names.map((name) => {
      const version = lock.packages[`node_modules/${name}`]?.version;
      if (!version) throw new Error(`package-lock.json has no ${name}`);
      return [name, version];
    }),
  );
}

/** Packs this project, installs the tarball into a fresh project in `dir`, type-checks and bundles the consumer. */
async function buildConsumer(dir: string): Promise<void> {
  // A checkout without dist/ (a fresh clone) is left without one: the CLI tests run from src/ as before.
  const hadDist = fs.existsSync(path.join(ROOT, 'dist'));
  const packed = await timed('npm pack (prepack builds dist/)', () =>
    npm(['pack', '--pack-destination', dir, '--json'], ROOT),
  );
  if (!hadDist) fs.rmSync(path.join(ROOT, 'dist'), { recursive: true, force: true });
  // The prepack build prints to the same stream: the JSON report is the last thing written.
  const [report] = JSON.parse(packed.slice(packed.lastIndexOf('\n[') + 1)) as { filename: string }[];
  const tarball = path.join(dir, (report as { filename: string }).filename);
  fs.cpSync(CONSUMER_SOURCES, dir, { recursive: true });
  fs.writeFileSync(
    path.join(dir, 'package.json'),
    JSON.stringify(
      {
        name: 'reelflow-consumer',
        version: '0.0.0',
        private: true,
        dependencies: { reelflow: `file:${tarball}`, ...lockedVersions(BESIDE) },
      },
      null,
      2,
    ),
  );
  await timed('npm install (--prefer-offline)', () =>
    npm(['install', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error'], dir),
  );
  await timed('tsc (type check and compile)', () =>
    mustRunNode([path.join(dir, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', '.'], dir),
  );
  await timed('bundleWorkflowCode', () => mustRunNode(['dist/bundle.js'], dir));
}

/** The consumer's worker process: JSON lines on stdout, the SDK's log on stderr. */
interface ConsumerWorker {
  child: ChildProcess;
  lines: () => Record<string, unknown>[];
  output: () => string;
  stop: () => Promise<void>;
}

async function startConsumerWorker(dir: string, env: Record<string, string>): Promise<ConsumerWorker> {
  const base = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' };
  const child = spawn(process.execPath, ['dist/worker.js'], { cwd: dir, env: { ...base, ...env }, stdio: 'pipe' });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const lines = () =>
    stdout
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as Record<string, unknown>);
  const worker: ConsumerWorker = {
    child,
    lines,
    output: () => `${stdout}\n${stderr}`,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
  await waitUntil(
    () => {
      if (child.exitCode !== null)
        throw new Error(`the consumer's worker exited ${child.exitCode}:\n${worker.output()}`);
      return lines().some((line) => line.ready === true);
    },
    60_000,
    "the consumer's worker",
  );
  return worker;
}

const started = Date.now();
let dir: string;
let env: TestWorkflowEnvironment;
let service: TestService;
let bridge: RegisteredBridge | undefined;
let worker: ConsumerWorker | undefined;
let workerEnv: Record<string, string>;
let receiverPort: number;

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reelflow-consumer-'));
  const [, stack] = await Promise.all([
    buildConsumer(dir),
    timed('dev server and local service (beside the build)', () => Promise.all([startDevServer(), startTestService()])),
  ]);
  [env, service] = stack;
  bridge = await startRegisteredBridge({
    serviceUrl: service.url,
    temporalAddress: env.address,
    taskQueue: TASK_QUEUE,
  });
  // The consumer's own receiver is a second endpoint at the service, with its own secret.
  receiverPort = await freePort();
  const endpoint = await service.call('POST', '/v1/webhooks/endpoints', {
    body: { url: `http://127.0.0.1:${receiverPort}/webhooks` },
  });
  expect(endpoint.status).toBe(201);
  workerEnv = {
    TEMPORAL_ADDRESS: env.address,
    TASK_QUEUE,
    WEBHOOK_SECRET: String(endpoint.body.secret),
    // What reelflowPlugin() reads when given no options, as `reelflow worker` does.
    REELFLOW_SERVICE_URL: service.url,
    REELFLOW_API_KEY: TEST_API_KEY,
    REELFLOW_ROUTE_STORE: `sqlite:${testRouteStoreFile(TASK_QUEUE)}`,
  };
  worker = await timed("consumer's worker start", () =>
    startConsumerWorker(dir, { ...workerEnv, RECEIVER_PORT: String(receiverPort) }),
  );
}, 900_000);

afterAll(async () => {
  await timed('teardown', async () => {
    await worker?.stop();
    await bridge?.bridge.close();
    await service?.close();
    await env?.teardown();
  });
  // Some 20,000 installed files take tens of seconds to delete on a busy disk: a detached process deletes
  // them while the next test runs.
  if (dir)
    spawn(
      process.execPath,
      ['-e', `require('node:fs').rmSync(${JSON.stringify(dir)}, { recursive: true, force: true })`],
      {
        detached: true,
        stdio: 'ignore',
      },
    ).unref();
  const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
  console.log(
    [
      `library consumer test: ${seconds(Date.now() - started)} in all`,
      ...phases.map(([phase, ms]) => `  ${phase}: ${seconds(ms)}`),
    ].join('\n'),
  );
});

describe('reelflow installed from its packed tarball into a fresh project', () => {
  it("runs the consumer's generateVideo → upscale workflow on its own task queue with reelflowPlugin()", async () => {
    const { clip, big } = await timed('consumer workflow', () =>
      env.client.workflow.execute('teaserWorkflow', {
        taskQueue: TASK_QUEUE,
        workflowId: 'consumer-teaser',
        args: [PIXEL_PNG],
      }),
    ).then((result) => result as { clip: ServiceStepResult; big: ServiceStepResult });
    expect(clip).toMatchObject({ status: 'COMPLETED', model: 'service-video-cinema-long-form-from-references' });
    expect(big).toMatchObject({ status: 'COMPLETED', model: 'service-upscale-video-fast', outcome: 'completed' });
    expect(big.requestId).toBe(big.request_id);
    expect(big.credits.charged).toBeGreaterThan(0);
    expect(big.videos[0]?.url).toMatch(/^https?:\/\//);

    const history = await env.client.workflow.getHandle('consumer-teaser').fetchHistory();
    const scheduled = (history.events ?? []).flatMap((e) => e.activityTaskScheduledEventAttributes ?? []);
    const submits = scheduled
      .filter((a) => a.activityType?.name === 'reelflow.submitAndSubscribe')
      .map((a) => defaultPayloadConverter.fromPayload<SubmitRequest>(a.input?.payloads?.[0] ?? {}));
    // The upscale was given the clip's own video.
    expect(submits.map((s) => [s.model, s.input])).toEqual([
      ['service-video-cinema-long-form-from-references', expect.objectContaining({ image_urls: [PIXEL_PNG] })],
      ['service-upscale-video-fast', { video_url: clip.videos[0]?.url }],
    ]);
    expect(scheduled.every((a) => a.activityType?.name?.startsWith('reelflow.'))).toBe(true);
    expect(new Set(scheduled.map((a) => a.taskQueue?.name))).toEqual(new Set([TASK_QUEUE]));

    // The service's signed deliveries of both jobs reach the consumer's Express receiver and pass verifyWebhook.
    const verified = () => new Set(worker!.lines().flatMap((line) => (line.verified ? [String(line.verified)] : [])));
    await waitUntil(
      () => verified().has(clip.requestId) && verified().has(big.requestId),
      60_000,
      'both deliveries at the receiver',
    );
  }, 300_000);

  it('refuses a forged delivery at the Express receiver (401, signature_mismatch)', async () => {
    const body = JSON.stringify({
      event_id: 'evt_forged',
      event_type: 'generation.completed',
      api_version: '2025-01-01',
      created_at: new Date().toISOString(),
      request_id: 'req_forged',
      status: 'OK',
      data: { request_id: 'req_forged', status: 'COMPLETED', videos: [] },
    });
    const headers = signedHeaders({
      id: 'evt_forged',
      timestamp: Math.floor(Date.now() / 1000),
      body,
      secrets: ['not-the-endpoint-secret'],
      eventType: 'generation.completed',
    });
    const response = await request(`http://127.0.0.1:${receiverPort}/webhooks`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      body,
    });
    await response.body.dump();
    expect(response.statusCode).toBe(401);
    await waitUntil(() => worker!.lines().some((line) => line.refused === 'signature_mismatch'), 10_000, 'the refusal');
    expect(worker!.lines().some((line) => line.verified === 'req_forged')).toBe(false);
  });

  it("stops the consumer's worker at start on a bad plugin option, naming it", async () => {
    const bad = JSON.stringify({ service: { url: 'ftp://media.example', apiKey: 'k' } });
    const result = await runNode(
      ['dist/worker.js', bad],
      { ...workerEnv, TASK_QUEUE: `${TASK_QUEUE}-bad`, RECEIVER_PORT: '0' },
      { cwd: dir },
    );
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(
      'reelflowPlugin option "service.url": must be an http(s) URL, got "ftp://media.example"',
    );
    expect(result.stdout).not.toContain('"ready"');
  });

  it("installs none of reelflow's optional peers (ffmpeg, ffprobe, the AWS SDK, pg, Fastify)", () => {
    const installed = (name: string) => fs.existsSync(path.join(dir, 'node_modules', name, 'package.json'));
    expect(OPTIONAL.filter(installed)).toEqual([]);
    expect(installed('reelflow') && installed('@temporalio/worker')).toBe(true);
  });

  it('names the missing package when a feature needs one (a PostgreSQL route store, the bridge app)', async () => {
    const code = (call: string) =>
      `const bridge = require('reelflow/bridge'); Promise.resolve().then(() => ${call}).then(() => console.log('no error'), (e) => console.log(JSON.stringify({ name: e.name, code: e.code, message: e.message })));`;
    const postgres = await runNode(
      ['-e', code("bridge.openRouteStore(bridge.parseRouteStoreLocation('postgres://reelflow@127.0.0.1/routes'))")],
      {},
      { cwd: dir },
    );
    expect(JSON.parse(postgres.stdout)).toEqual({
      name: 'MissingPackageError',
      code: 'package_missing',
      message:
        'a PostgreSQL route store (REELFLOW_ROUTE_STORE=postgres://…) needs the package pg, which is not installed: npm install pg',
    });
    const app = await runNode(['-e', code('bridge.createBridgeApp({ logger: false })')], {}, { cwd: dir });
    expect(JSON.parse(app.stdout)).toMatchObject({
      code: 'package_missing',
      message: expect.stringContaining('npm install fastify'),
    });
  });

  it('loads reelflow/client with plain Node (node -e "require(\'reelflow/client\')")', async () => {
    const result = await runNode(['-e', "require('reelflow/client')"], {}, { cwd: dir });
    expect(result).toMatchObject({ code: 0, stderr: '' });
    const loaded = await runNode(
      ['-e', "console.log(typeof require('reelflow/client').createServiceClient)"],
      {},
      {
        cwd: dir,
      },
    );
    expect(loaded.stdout.trim()).toBe('function');
  });
});
