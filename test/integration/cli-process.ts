import { spawn } from 'node:child_process';
import * as path from 'node:path';

/** What a CLI run left behind. */
export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

const BIN = path.join(__dirname, '..', '..', 'bin', 'reelflow.js');

/**
 * Runs `node ...argv` as a child process with exactly `env` (plus PATH/HOME), so the parent's
 * environment cannot leak configuration into the test.
 */
export function runNode(
  argv: string[],
  env: Record<string, string> = {},
  options: { cwd?: string } = {},
): Promise<CliResult> {
  const base: Record<string, string> = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' };
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, argv, {
      env: { ...base, ...env },
      cwd: options.cwd ?? process.cwd(),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** Runs `node bin/reelflow.js ...args` (see runNode). */
export function runCli(
  args: string[],
  env: Record<string, string> = {},
  options: { cwd?: string } = {},
): Promise<CliResult> {
  return runNode([BIN, ...args], env, options);
}

/** Parses stdout as JSON, with the whole output in the error when it is not. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function jsonOf<T = any>(result: CliResult): T {
  try {
    return JSON.parse(result.stdout) as T;
  } catch {
    throw new Error(`stdout is not JSON (exit ${result.code}):\n${result.stdout}\nstderr:\n${result.stderr}`);
  }
}
