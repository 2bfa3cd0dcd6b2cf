import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parsePort } from '../../../src/config/port';
import { runCli } from '../../integration/cli-process';

describe('parsePort', () => {
  it.each([
    ['0', 0],
    ['8787', 8787],
    ['65535', 65535],
    [' 7233 ', 7233],
  ])('accepts %j', (text, port) => {
    expect(parsePort(text)).toBe(port);
  });
  it.each(['', '-1', '65536', '80.5', '0x50', 'http', '123456'])('refuses %j with the rule', (text) => {
    expect(() => parsePort(text)).toThrow(/port number 0-65535/);
  });
});

/** Runs a script that uses exitOnSignal in its own Node process (tsx), sends it `signal` once it is ready. */
async function runEntry(
  signal: NodeJS.Signals,
  stopFails: boolean,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reelflow-entry-'));
  const script = path.join(dir, 'entry.ts');
  const module = path.resolve(__dirname, '../../../src/workers/run-until-signal');
  fs.writeFileSync(
    script,
    `import { exitOnSignal } from ${JSON.stringify(module)};
const timer = setInterval(() => undefined, 1000);
exitOnSignal('test entry', async () => { clearInterval(timer); console.log('stopped'); ${stopFails ? "throw new Error('port still bound');" : ''} });
console.log('ready');`,
  );
  // tsx as a loader in this very process (its CLI wrapper would relay signals through a second process).
  const child = spawn(process.execPath, ['--import', 'tsx', script], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      if (stdout.includes('ready') && !stdout.includes('stopped')) child.kill(signal);
    });
    child.once('error', reject);
    child.once('close', (code) => {
      fs.rmSync(dir, { recursive: true, force: true });
      resolve({ code, stdout, stderr });
    });
  });
}

describe('exitOnSignal', () => {
  it.each(['SIGINT', 'SIGTERM'] as const)('stops the process cleanly on %s and exits 0', async (signal) => {
    const result = await runEntry(signal, false);
    expect(result.stdout).toContain('stopped');
    expect(result.code).toBe(0);
  });

  it('exits 1 and names the error when stopping fails', async () => {
    const result = await runEntry('SIGTERM', true);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('test entry: error while stopping: port still bound');
  });
});

describe('reelflow worker', () => {
  it('refuses an invalid configuration with exit 2, naming the variable', async () => {
    const result = await runCli(['worker'], {
      TEMPORAL_ADDRESS: 'not an address',
      REELFLOW_SERVICE_URL: 'http://127.0.0.1:1',
      REELFLOW_API_KEY: 'k',
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('TEMPORAL_ADDRESS');
  });

  it('has help like every other command', async () => {
    const result = await runCli(['worker', '--help']);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('Usage: reelflow worker');
  });
});
