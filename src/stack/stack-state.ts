import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { join, resolve } from 'node:path';

/**
 * What the local stack keeps under its state directory (default `.reelflow/`, ignored by git):
 *
 *   stack.json                 ports chosen on the first start, reused by every later start
 *   running.json               written while a stack runs: pid and addresses (how a second run finds it)
 *   secrets/api-key            the service API key (0600; never printed in full)
 *   secrets/admin-key          the service's admin credential (fault injection, credit grants; 0600)
 *   secrets/webhook-endpoint.json  the registered bridge endpoint and its signing secret (0600)
 *   temporal/dev.sqlite        Temporal history;  service/  the local service's journal and files
 *   temporal/dev-server.json   the dev server's pid and its owner's (an orphaned server is adopted and stopped)
 *   inputs/  outputs/  logs/   reference inputs, downloaded outputs, server logs
 */

/** Ports of the stack's four listeners. */
export interface StackPorts {
  temporal: number;
  temporalUi: number;
  service: number;
  bridge: number;
}

/** Defaults: Temporal's usual ports, then fixed ports for the service and the bridge. */
export const DEFAULT_PORTS: StackPorts = { temporal: 7233, temporalUi: 8233, service: 8710, bridge: 8787 };

/** What a running stack publishes for other processes (no secrets in it). */
/** Addresses of the stack, whoever runs it. */
export interface StackAddresses {
  temporalAddress: string;
  temporalUiUrl: string;
  namespace: string;
  serviceUrl: string;
  bridgeUrl: string;
  taskQueue: string;
}

export interface RunningStackRecord extends StackAddresses {
  pid: number;
  startedAt: string;
}

/** The registered webhook endpoint and the secret the bridge verifies with. */
export interface StoredEndpoint {
  id: string;
  url: string;
  secret: string;
}

/** File layout of a state directory. */
export function statePaths(stateDir: string) {
  const root = resolve(stateDir);
  return {
    root,
    config: join(root, 'stack.json'),
    running: join(root, 'running.json'),
    secrets: join(root, 'secrets'),
    apiKey: join(root, 'secrets', 'api-key'),
    adminKey: join(root, 'secrets', 'admin-key'),
    endpoint: join(root, 'secrets', 'webhook-endpoint.json'),
    temporalDb: join(root, 'temporal', 'dev.sqlite'),
    serviceData: join(root, 'service'),
    inputs: join(root, 'inputs'),
    outputs: join(root, 'outputs'),
    logs: join(root, 'logs'),
  };
}

export type StatePaths = ReturnType<typeof statePaths>;

function readJson<T>(file: string): T | null {
  if (!existsSync(file)) return null;
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as T;
  } catch {
    return null;
  }
}

/** Writes a file readable by its owner only (secrets). */
function writeSecret(file: string, text: string): void {
  writeFileSync(file, text, { mode: 0o600 });
  // writeFileSync keeps the mode of an existing file; make sure.
  chmodSync(file, 0o600);
}

/**
 * A port nobody listens on right now (the OS picks it), left in TIME_WAIT so that the OS does not
 * hand it out again before its user binds it.
 *
 * Why: the ports of a stack are chosen before its processes start, and the Temporal dev server
 * picks its own internal ports (HTTP API, metrics, history, matching) with bind(0) while starting.
 * A port merely closed again can be the very next one the kernel gives out, so the dev server
 * could take the service's or the UI's port, or fail binding one it picked itself. A connection
 * closed from the listening side first leaves a TIME_WAIT socket on the port (60 s on Linux):
 * bind(0) skips it, while an explicit bind with SO_REUSEADDR (Node's and Go's default for
 * listeners) still succeeds. The Temporal CLI picks its own ports the same way (temporalio/cli#564).
 */
export function freePort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolvePort, reject) => {
    // The accepted side ends first: the TIME_WAIT socket is the one bound to the port.
    const server = createServer((accepted) => accepted.end());
    server.once('error', reject);
    server.listen(0, host, () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      // Without allowHalfOpen the client answers the server's FIN with its own, then closes.
      const client = connect({ host, port });
      client.once('error', (error) => server.close(() => reject(error)));
      client.once('close', () => server.close(() => resolvePort(port)));
      client.resume();
    });
  });
}

/**
 * Ports of this state directory: an explicit option wins, then the ports stored on the first start
 * (so output URLs and the registered webhook URL stay valid), then the defaults, or free ports when
 * `auto` (tests, CI). An explicit 0 also means "a free port". The result is stored.
 */
export async function resolvePorts(
  paths: StatePaths,
  requested: Partial<StackPorts>,
  auto: boolean,
  host: string,
): Promise<StackPorts> {
  const stored = readJson<{ ports?: Partial<StackPorts> }>(paths.config)?.ports ?? {};
  const ports = { ...DEFAULT_PORTS };
  for (const name of Object.keys(DEFAULT_PORTS) as Array<keyof StackPorts>) {
    const wanted = requested[name] ?? stored[name] ?? (auto ? 0 : DEFAULT_PORTS[name]);
    ports[name] = wanted === 0 ? await freePort(host) : wanted;
  }
  mkdirSync(paths.root, { recursive: true });
  writeFileSync(paths.config, `${JSON.stringify({ ports }, null, 2)}\n`);
  return ports;
}

/** A new API key in the service's format (`rfk_` + 32 random bytes, base64url). */
function newApiKey(): string {
  return `rfk_${randomBytes(32).toString('base64url')}`;
}

/** The stored API key, or a new one stored with 0600 permissions. */
export function ensureApiKey(paths: StatePaths): { key: string; created: boolean } {
  return ensureKeyFile(paths, paths.apiKey);
}

/** The stored admin credential of the local service (same format), or a new one (0600). */
export function ensureAdminKey(paths: StatePaths): { key: string; created: boolean } {
  return ensureKeyFile(paths, paths.adminKey);
}

function ensureKeyFile(paths: StatePaths, file: string): { key: string; created: boolean } {
  mkdirSync(paths.secrets, { recursive: true, mode: 0o700 });
  if (existsSync(file)) {
    const key = readFileSync(file, 'utf8').trim();
    if (key) return { key, created: false };
  }
  const key = newApiKey();
  writeSecret(file, `${key}\n`);
  return { key, created: true };
}

/** Shows a secret without revealing it: its first characters only. */
export function redact(secret: string): string {
  return `${secret.slice(0, 8)}…`;
}

export function readEndpoint(paths: StatePaths): StoredEndpoint | null {
  return readJson<StoredEndpoint>(paths.endpoint);
}

export function writeEndpoint(paths: StatePaths, endpoint: StoredEndpoint): void {
  mkdirSync(paths.secrets, { recursive: true, mode: 0o700 });
  writeSecret(paths.endpoint, `${JSON.stringify(endpoint, null, 2)}\n`);
}

export function readRunning(paths: StatePaths): RunningStackRecord | null {
  return readJson<RunningStackRecord>(paths.running);
}

export function writeRunning(paths: StatePaths, record: RunningStackRecord): void {
  writeFileSync(paths.running, `${JSON.stringify(record, null, 2)}\n`);
}

/** Removes running.json, only if it is this process's own record. */
export function clearRunning(paths: StatePaths, pid = process.pid): void {
  if (readRunning(paths)?.pid === pid) rmSync(paths.running, { force: true });
}

/** True when a process with this pid exists. */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
