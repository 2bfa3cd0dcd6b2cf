import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { request } from 'undici';
import { probe } from '../../src/media/ffmpeg';
import { isListening } from '../../src/stack/temporal-dev-server';

/**
 * `npm run demo` end to end, as a user runs it: the same script (scripts/demo.ts) in its own
 * process, from a clean state directory, on free ports. Then `reelflow dev` on that state directory,
 * and the demo again: it must reuse the running stack and the persisted API key.
 */

const ROOT = resolve(__dirname, '..', '..');
const TSX = join(ROOT, 'node_modules', '.bin', 'tsx');
let stateDir: string;
let env: NodeJS.ProcessEnv;
let dev: ChildProcess | null = null;

interface Run {
  code: number | null;
  output: string;
}

function run(args: string[]): Promise<Run> {
  return new Promise((resolveRun, reject) => {
    const child = spawn(args[0] as string, args.slice(1), { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('error', reject);
    child.once('exit', (code) => resolveRun({ code, output }));
  });
}

const runDemo = () => run([TSX, 'scripts/demo.ts']);

/** The three downloaded outputs of the demo's last pipeline, probed. */
async function probeOutputs(): Promise<Record<string, Awaited<ReturnType<typeof probe>>>> {
  const outputs = join(stateDir, 'outputs');
  const runs = readdirSync(outputs).sort(
    (a, b) => statSync(join(outputs, a)).mtimeMs - statSync(join(outputs, b)).mtimeMs,
  );
  const dir = join(outputs, runs.at(-1) as string);
  const probed: Record<string, Awaited<ReturnType<typeof probe>>> = {};
  for (const file of readdirSync(dir)) probed[file.replace(/\.\w+$/, '')] = await probe(join(dir, file));
  return probed;
}

function expectPlayableOutputs(probed: Record<string, Awaited<ReturnType<typeof probe>>>): void {
  expect(Object.keys(probed).sort()).toEqual(['generate', 'revoice', 'upscale']);
  for (const result of Object.values(probed)) {
    expect(result.streams.some((s) => s.codecType === 'video')).toBe(true);
    expect(result.duration).toBeGreaterThan(0);
  }
  expect(probed.upscale?.width).toBe((probed.revoice?.width ?? 0) * 2);
  expect(probed.upscale?.height).toBe((probed.revoice?.height ?? 0) * 2);
}

beforeAll(() => {
  stateDir = mkdtempSync(join(tmpdir(), 'reelflow-demo-'));
  env = { ...process.env, REELFLOW_STATE_DIR: stateDir, REELFLOW_DEV_PORTS: 'auto' };
});

afterAll(async () => {
  if (dev && dev.exitCode === null) {
    dev.kill('SIGINT');
    await new Promise((resolveExit) => dev?.once('exit', resolveExit));
  }
  rmSync(stateDir, { recursive: true, force: true });
});

describe('npm run demo', () => {
  it('runs from a clean state to checked outputs, then stops what it started', async () => {
    const { code, output } = await runDemo();
    expect({ code, tail: output.slice(-1500) }).toEqual({ code: 0, tail: expect.stringContaining('demo passed') });
    expect(output).toMatch(/API key\s+rfk_\S{4}… \(created;/);
    const key = readFileSync(join(stateDir, 'secrets', 'api-key'), 'utf8').trim();
    expect(output).not.toContain(key);
    expect(statSync(join(stateDir, 'secrets', 'api-key')).mode & 0o777).toBe(0o600);
    expect(output).toMatch(/credits: \d+ spent, 0 refunded/);
    expect(output).toMatch(/Temporal UI: http:\/\/127\.0\.0\.1:\d+\/namespaces\/default\/workflows\/pipeline%2Fdemo-/);
    expectPlayableOutputs(await probeOutputs());
    // It stopped its own stack: no running record, the Temporal port is free again.
    expect(existsSync(join(stateDir, 'running.json'))).toBe(false);
    const ports = JSON.parse(readFileSync(join(stateDir, 'stack.json'), 'utf8')) as { ports: { temporal: number } };
    expect(await isListening('127.0.0.1', ports.ports.temporal)).toBe(false);
  });

  it('reuses a running `reelflow dev` and the persisted state on the second run (no new API key)', async () => {
    const keyBefore = readFileSync(join(stateDir, 'secrets', 'api-key'), 'utf8');
    const endpointBefore = readFileSync(join(stateDir, 'secrets', 'webhook-endpoint.json'), 'utf8');
    dev = spawn(process.execPath, ['bin/reelflow.js', 'dev'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let devOutput = '';
    dev.stderr?.on('data', (chunk: Buffer) => (devOutput += chunk.toString()));
    await new Promise<void>((resolveReady, reject) => {
      dev?.stdout?.on('data', (chunk: Buffer) => {
        devOutput += chunk.toString();
        if (devOutput.includes('ready —')) resolveReady();
      });
      dev?.once('exit', (code) => reject(new Error(`reelflow dev exited with ${code}:\n${devOutput}`)));
    });
    const serviceUrl = /REELFLOW_SERVICE_URL=(\S+)/.exec(devOutput)?.[1] as string;
    expect(devOutput).toMatch(/Temporal UI\s+http:\/\/127\.0\.0\.1:\d+/);

    const { code, output } = await runDemo();
    expect({ code, tail: output.slice(-1500) }).toEqual({ code: 0, tail: expect.stringContaining('demo passed') });
    expect(output).toContain('stack: reused the running `reelflow dev`');
    expect(output).toMatch(/\(reused;/);
    expectPlayableOutputs(await probeOutputs());
    // Same key and endpoint on disk, and the service knows exactly one key and one endpoint.
    expect(readFileSync(join(stateDir, 'secrets', 'api-key'), 'utf8')).toBe(keyBefore);
    expect(readFileSync(join(stateDir, 'secrets', 'webhook-endpoint.json'), 'utf8')).toBe(endpointBefore);
    const headers = { authorization: `Key ${keyBefore.trim()}` };
    const keys = (await (await request(`${serviceUrl}/v1/account/keys`, { headers })).body.json()) as {
      keys: unknown[];
    };
    const endpoints = (await (await request(`${serviceUrl}/v1/webhooks/endpoints`, { headers })).body.json()) as {
      endpoints: unknown[];
    };
    expect({ keys: keys.keys.length, endpoints: endpoints.endpoints.length }).toEqual({ keys: 1, endpoints: 1 });
    // The demo left the dev stack running; Ctrl-C stops it cleanly.
    expect(dev.exitCode).toBeNull();
    const exited = new Promise<number | null>((resolveExit) => dev?.once('exit', (exitCode) => resolveExit(exitCode)));
    dev.kill('SIGINT');
    expect(await exited).toBe(0);
    expect(existsSync(join(stateDir, 'running.json'))).toBe(false);
  });
});
