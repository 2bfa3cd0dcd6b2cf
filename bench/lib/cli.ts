import { spawn } from 'node:child_process';
import * as path from 'node:path';
import { DIST } from './stack';

/** How one CLI process ended. */
export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
  seconds: number;
}

/** Runs the compiled CLI (`dist/cli/main.js`) with exactly `env`; kills it after `timeoutMs`. */
export function runCli(args: string[], env: Record<string, string>, cwd: string, timeoutMs: number): Promise<CliRun> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(DIST, 'cli', 'main.js'), ...args], {
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
      cwd,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const stdout: Buffer[] = [];
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => stdout.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-20_000)));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    // The bench exiting (an error, Ctrl-C) takes the CLI with it, as it does the stack's processes.
    const onExit = () => child.kill('SIGKILL');
    process.once('exit', onExit);
    child.once('error', reject);
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      process.off('exit', onExit);
      if (signal === 'SIGKILL')
        reject(new Error(`reelflow ${args[0]} killed after ${timeoutMs / 1000} s:\n${stderr.slice(-2000)}`));
      else resolve({ code, stdout: Buffer.concat(stdout).toString(), stderr, seconds: (Date.now() - started) / 1000 });
    });
  });
}

/** The run's stdout as JSON; an error naming `what` with the output when it is not JSON. */
export function jsonOf<T>(run: CliRun, what: string): T {
  try {
    return JSON.parse(run.stdout) as T;
  } catch {
    throw new Error(`${what}: stdout is not JSON (exit ${run.code}):\n${run.stdout.slice(-2000)}\n${run.stderr}`);
  }
}
