import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

/**
 * `reelflow --help | head`: a reader that closes the pipe early must not make the CLI die with an
 * unhandled EPIPE stack trace. The reader here closes before the CLI's first write, so that write
 * fails with EPIPE every time (a real `head` closes after its first lines, which races the writes).
 */

const BIN = path.join(__dirname, '..', '..', 'bin', 'reelflow.js');

/** Runs the CLI with its stdout read by nobody (closed at once); resolves with how it ended. */
function runIntoClosedPipe(args: string[]): Promise<{ code: number | null; signal: string | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout.destroy();
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.once('error', reject);
    child.once('close', (code, signal) => resolve({ code, signal, stderr }));
  });
}

describe('a closed stdout', () => {
  it.each([[['--help']], [['batch', '--help']], [['--version']]])(
    'reelflow %j into a closed pipe exits 0 with nothing on stderr',
    async (args) => {
      expect(await runIntoClosedPipe(args)).toEqual({ code: 0, signal: null, stderr: '' });
    },
  );

  it('a command that runs until a signal (reelflow service) stops by itself, quietly, when its output closes', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'reelflow-closed-output-'));
    try {
      const ended = await runIntoClosedPipe(['service', '--port', '0', '--data-dir', dataDir]);
      expect(ended.signal).toBeNull();
      expect(ended.code).toBe(0);
      expect(ended.stderr).not.toMatch(/EPIPE|Unhandled 'error' event/);
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  }, 60_000);
});
