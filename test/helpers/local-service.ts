import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';
import { request } from 'undici';
import { startLocalService, type LocalService, type LocalServiceOptions } from '../../src/local-service';

/** API key every test service accepts. */
export const TEST_API_KEY = 'test-key-0123456789';

/** Admin credential of test services (fault injection, credit grants); not an API key. */
export const TEST_ADMIN_KEY = 'test-admin-key-0123456789';

export { PIXEL_PNG } from './inputs';

export const LONG_FORM = 'service-video-cinema-long-form-from-references';

export interface ApiResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** Parsed JSON body, or null for an empty one. */
  body: any; // eslint-disable-line @typescript-eslint/no-explicit-any
  contentType: string;
}

/** Calls the service over real HTTP; `key: null` sends no Authorization header. */
export async function api(
  baseUrl: string,
  method: 'GET' | 'POST' | 'PUT' | 'DELETE',
  urlPath: string,
  options: { body?: unknown; rawBody?: string; key?: string | null; headers?: Record<string, string> } = {},
): Promise<ApiResponse> {
  const key = options.key === undefined ? TEST_API_KEY : options.key;
  const headers: Record<string, string> = { ...(key ? { authorization: `Key ${key}` } : {}), ...options.headers };
  let body: string | undefined;
  if (options.rawBody !== undefined) body = options.rawBody;
  else if (options.body !== undefined) body = JSON.stringify(options.body);
  if (body !== undefined && !Object.keys(headers).some((h) => h.toLowerCase() === 'content-type'))
    headers['content-type'] = 'application/json';
  const response = await request(urlPath.startsWith('http') ? urlPath : `${baseUrl}${urlPath}`, {
    method,
    headers,
    body,
  });
  const text = await response.body.text();
  const contentType = String(response.headers['content-type'] ?? '');
  return { status: response.statusCode, headers: response.headers, body: text ? safeJson(text) : null, contentType };
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

export interface TestService {
  service: LocalService;
  url: string;
  dataDir: string;
  call: (
    method: 'GET' | 'POST' | 'PUT' | 'DELETE',
    urlPath: string,
    options?: Parameters<typeof api>[3],
  ) => Promise<ApiResponse>;
  /** Closes the service and deletes its data directory. */
  close: () => Promise<void>;
}

/** Makes a fresh temporary data directory. */
export function tempDataDir(prefix = 'reelflow-service-'): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

/**
 * Starts an in-process local service on a free loopback port in a temporary data directory,
 * accepting TEST_API_KEY (and TEST_ADMIN_KEY on the admin routes), with private (loopback)
 * webhooks allowed so receivers can run locally.
 */
export async function startTestService(options: Partial<LocalServiceOptions> = {}): Promise<TestService> {
  const dataDir = options.dataDir ?? tempDataDir();
  const service = await startLocalService({
    apiKeys: [TEST_API_KEY],
    adminKey: TEST_ADMIN_KEY,
    allowPrivateWebhooks: true,
    credits: 100_000,
    logger: false,
    ...options,
    dataDir,
  });
  return {
    service,
    url: service.url,
    dataDir,
    call: (method, urlPath, callOptions) => api(service.url, method, urlPath, callOptions),
    close: async () => {
      await service.close();
      if (!options.dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Polls the status endpoint until `predicate` holds (each poll is a real HTTP call). */
export async function waitForStatus(
  baseUrl: string,
  requestId: string,
  predicate: (status: string) => boolean,
  timeoutMs = 60_000,
): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const response = await api(baseUrl, 'GET', `/v1/queue/requests/${requestId}/status`);
    if (response.status !== 200)
      throw new Error(`status of ${requestId}: HTTP ${response.status} ${JSON.stringify(response.body)}`);
    if (predicate(response.body.status)) return response.body.status;
    if (Date.now() > deadline) throw new Error(`status of ${requestId} stayed ${response.body.status}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Waits until `predicate` returns true, checking every 25 ms. */
export async function waitUntil(
  predicate: () => boolean | Promise<boolean>,
  timeoutMs = 30_000,
  what = 'condition',
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await predicate())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** One POST a receiver got. */
export interface ReceivedDelivery {
  headers: http.IncomingHttpHeaders;
  body: Buffer;
  at: number;
  status: number;
}

export interface WebhookReceiver {
  url: string;
  /** POSTs received, in order. */
  received: ReceivedDelivery[];
  close: () => Promise<void>;
}

/**
 * A webhook receiver on loopback. `respond(body, n)` picks the status of the n-th POST (0-based);
 * HEAD/GET probes (registration checks) are answered 200 and not recorded.
 */
export async function startReceiver(
  respond: (body: Buffer, index: number, headers: http.IncomingHttpHeaders) => number = () => 200,
): Promise<WebhookReceiver> {
  const received: ReceivedDelivery[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      if (req.method !== 'POST') {
        res.writeHead(200).end();
        return;
      }
      const body = Buffer.concat(chunks);
      const status = respond(body, received.length, req.headers);
      received.push({ headers: req.headers, body, at: Date.now(), status });
      res.writeHead(status, { 'content-type': 'text/plain' }).end(String(status));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export interface ServiceProcess {
  url: string;
  child: ChildProcess;
  output: () => string;
  /** Sends a signal and waits for the process to exit. */
  stop: (signal?: NodeJS.Signals) => Promise<number | null>;
}

/** Starts `node bin/reelflow.js service ...` as a child process and waits for its address. */
export async function spawnServiceProcess(args: string[]): Promise<ServiceProcess> {
  const bin = path.join(__dirname, '..', '..', 'bin', 'reelflow.js');
  return spawnAndWait([bin, 'service', ...args], process.env);
}

/**
 * Starts the service's process entry point (`src/workers/local-service.ts`, options from
 * REELFLOW_SERVICE_* variables) as a child: it loads less than the CLI, so it starts faster.
 */
export async function spawnServiceWorker(env: Record<string, string>): Promise<ServiceProcess> {
  const entry = path.join(__dirname, '..', '..', 'src', 'workers', 'local-service.ts');
  return spawnAndWait(['-r', 'tsx/cjs', entry], { ...process.env, ...env });
}

async function spawnAndWait(argv: string[], env: NodeJS.ProcessEnv): Promise<ServiceProcess> {
  const child = spawn(process.execPath, argv, { stdio: ['ignore', 'pipe', 'pipe'], env });
  let output = '';
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`service did not start:\n${output}`)), 30_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const match = /listening on (\S+)/.exec(output);
      if (match?.[1]) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`service exited with ${code}:\n${output}`));
    });
  });
  return {
    url,
    child,
    output: () => output,
    stop: async (signal = 'SIGTERM') => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}

/** The state letter of a process (`R`, `S`, `Z` for a zombie, ...) from /proc, or null when it is gone. */
export function processState(pid: number): string | null {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0] ?? null;
  } catch {
    return null;
  }
}
