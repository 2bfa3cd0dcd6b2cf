import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { lockDataDir } from '../../../../src/local-service/store/data-dir-lock';
import { DataDirLockedError } from '../../../../src/local-service/store/errors';
import { processState } from '../../../helpers/local-service';

let dir: string;
let wrapper: ChildProcess | null = null;

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reelflow-lock-'));
});
afterEach(() => {
  wrapper?.kill('SIGKILL');
  wrapper = null;
  fs.rmSync(dir, { recursive: true, force: true });
});

test('a second lock in the same process is refused, naming this process, until the first is released', async () => {
  const release = await lockDataDir(dir);
  await expect(lockDataDir(dir)).rejects.toThrow(DataDirLockedError);
  await expect(lockDataDir(dir)).rejects.toThrow(new RegExp(`pid ${process.pid} on ${os.hostname()}`));
  // The same directory by another spelling is the same lock.
  await expect(lockDataDir(path.join(dir, '.', '..', path.basename(dir)))).rejects.toThrow(DataDirLockedError);
  await release();
  await release();
  const again = await lockDataDir(dir);
  await again();
});

test('other directories are other locks', async () => {
  const other = fs.mkdtempSync(path.join(os.tmpdir(), 'reelflow-lock-'));
  try {
    const first = await lockDataDir(dir);
    const second = await lockDataDir(other);
    await Promise.all([first(), second()]);
  } finally {
    fs.rmSync(other, { recursive: true, force: true });
  }
});

const linux = process.platform === 'linux' ? test : test.skip;

linux(
  'a live holder in another process is named; once SIGKILLed it is free at once, though still a zombie',
  async () => {
    // The holder runs under a parent that never reaps it (`exec sleep`): after SIGKILL it stays a
    // zombie, which a pid check (kill(pid, 0)) takes for alive.
    const holderScript = `require(${JSON.stringify(require.resolve('../../../../src/local-service/store/data-dir-lock'))}).lockDataDir(${JSON.stringify(dir)}).then(() => { console.log('locked'); setInterval(() => {}, 1e6); })`;
    wrapper = spawn(
      'bash',
      ['-c', `"$0" -r tsx/cjs -e "$1" & echo "holder $!"; exec sleep 600`, process.execPath, holderScript],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    let output = '';
    const pid = await new Promise<number>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`holder did not lock: ${output}`)), 30_000);
      wrapper!.stdout!.on('data', (chunk: Buffer) => {
        output += chunk.toString();
        const match = /holder (\d+)[\s\S]*locked/.exec(output);
        if (match) {
          clearTimeout(timer);
          resolve(Number(match[1]));
        }
      });
    });
    await expect(lockDataDir(dir)).rejects.toThrow(`pid ${pid} on ${os.hostname()}`);
    expect(fs.readdirSync(dir)).toEqual([]);

    process.kill(pid, 'SIGKILL');
    const start = Date.now();
    while (processState(pid) !== 'Z' && Date.now() - start < 10_000) await new Promise((r) => setTimeout(r, 5));
    expect(processState(pid)).toBe('Z');
    const release = await lockDataDir(dir);
    expect(processState(pid)).toBe('Z');
    await release();
  },
);
