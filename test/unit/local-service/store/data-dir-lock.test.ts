import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { lockDataDir } from '../../../../src/local-service/store/data-dir-lock';
import { DataDirLockedError } from '../../../../src/local-service/store/errors';

let dir: string;
let sleeper: ChildProcess | null = null;

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reelflow-lock-'));
});
afterEach(() => {
  sleeper?.kill('SIGKILL');
  sleeper = null;
  fs.rmSync(dir, { recursive: true, force: true });
});

function startTimeOf(pid: number): string {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]!;
}

function writeLock(holder: object): void {
  fs.writeFileSync(path.join(dir, 'service.lock'), JSON.stringify(holder));
}

test('a second lock in the same process is refused until the first is released', () => {
  const release = lockDataDir(dir);
  expect(() => lockDataDir(dir)).toThrow(DataDirLockedError);
  expect(() => lockDataDir(dir)).toThrow(new RegExp(`pid ${process.pid}`));
  release();
  expect(fs.existsSync(path.join(dir, 'service.lock'))).toBe(false);
  lockDataDir(dir)();
});

const linux = process.platform === 'linux' ? test : test.skip;

linux('a live holder in another process is named; a dead or reused pid is taken over', async () => {
  sleeper = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 600000)'], { stdio: 'ignore' });
  await new Promise((resolve) => sleeper!.once('spawn', resolve));
  const pid = sleeper.pid!;
  writeLock({ pid, startTime: startTimeOf(pid), host: 'h', startedAt: 'then' });
  const before = fs.readFileSync(path.join(dir, 'service.lock'), 'utf8');
  expect(() => lockDataDir(dir)).toThrow(`pid ${pid} on h`);
  // Refusing touched nothing.
  expect(fs.readFileSync(path.join(dir, 'service.lock'), 'utf8')).toBe(before);

  // Same pid, other start time: the pid was reused by an unrelated process.
  writeLock({ pid, startTime: '1', host: 'h', startedAt: 'then' });
  lockDataDir(dir)();

  sleeper.kill('SIGKILL');
  await new Promise((resolve) => sleeper!.once('exit', resolve));
  writeLock({ pid, startTime: startTimeOf(process.pid), host: 'h', startedAt: 'then' });
  const release = lockDataDir(dir);
  expect(JSON.parse(fs.readFileSync(path.join(dir, 'service.lock'), 'utf8')).pid).toBe(process.pid);
  release();
});

test('an unreadable lock file is honoured while fresh and taken over once old', () => {
  const file = path.join(dir, 'service.lock');
  fs.writeFileSync(file, '');
  expect(() => lockDataDir(dir)).toThrow(DataDirLockedError);
  const old = new Date(Date.now() - 60_000);
  fs.utimesSync(file, old, old);
  lockDataDir(dir)();
});
