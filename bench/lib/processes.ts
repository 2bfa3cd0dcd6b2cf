import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

/** A process the bench started: its own process group, output in a log file. */
export interface BenchProcess {
  name: string;
  pid: number;
  child: ChildProcess;
  logFile: string;
  /** Output so far (log tail for error messages). */
  output(): string;
  /** Resolves with the process's exit code. */
  exited: Promise<number | null>;
  /** SIGTERM to the group, SIGKILL after `graceMs`; resolves once it exited. */
  stop(graceMs?: number): Promise<void>;
}

const live = new Set<BenchProcess>();
let exitHooked = false;

/** Kills every process still running (the bench's own, by process group), e.g. on an error exit. */
export function killAll(): void {
  for (const p of live) {
    try {
      process.kill(-p.pid, 'SIGKILL');
    } catch {
      /* already gone */
    }
  }
  live.clear();
}

/** Where process logs go (`<out>/logs`); set by the runner. */
let logDir = path.join('.bench', 'logs');
export function setLogDir(dir: string): void {
  logDir = dir;
  fs.mkdirSync(dir, { recursive: true });
}

/**
 * Starts `command args` as its own process group (so stopping it stops its children too), with stdout
 * and stderr captured to `<logDir>/<name>.log`. With `ready`, waits until the output matches it (or the
 * process exits, or `timeoutMs` passes: both throw with the log tail).
 */
export async function startProcess(
  name: string,
  command: string,
  args: string[],
  options: { env?: NodeJS.ProcessEnv; cwd?: string; ready?: RegExp; timeoutMs?: number } = {},
): Promise<BenchProcess> {
  if (!exitHooked) {
    exitHooked = true;
    process.once('exit', killAll);
    for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => (killAll(), process.exit(130)));
  }
  fs.mkdirSync(logDir, { recursive: true });
  const logFile = path.join(logDir, `${name}.log`);
  const log = fs.createWriteStream(logFile);
  const child = spawn(command, args, {
    cwd: options.cwd ?? process.cwd(),
    env: options.env ?? process.env,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let text = '';
  const onData = (chunk: Buffer) => {
    log.write(chunk);
    text = (text + chunk.toString('utf8')).slice(-64 * 1024);
  };
  child.stdout!.on('data', onData);
  child.stderr!.on('data', onData);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const proc: BenchProcess = {
    name,
    pid: child.pid!,
    child,
    logFile,
    output: () => text,
    exited,
    stop: async (graceMs = 5_000) => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      try {
        process.kill(-child.pid!, 'SIGTERM');
      } catch {
        return;
      }
      const timer = setTimeout(() => {
        try {
          process.kill(-child.pid!, 'SIGKILL');
        } catch {
          /* gone */
        }
      }, graceMs);
      await exited;
      clearTimeout(timer);
      live.delete(proc);
    },
  };
  void exited.then(() => {
    live.delete(proc);
    log.end();
  });
  live.add(proc);
  if (options.ready) {
    const deadline = Date.now() + (options.timeoutMs ?? 60_000);
    while (!options.ready.test(text)) {
      if (child.exitCode !== null)
        throw new Error(`${name} exited with ${child.exitCode} before it was ready:\n${text.slice(-2000)}`);
      if (Date.now() > deadline) {
        await proc.stop(0);
        throw new Error(`${name} not ready after ${options.timeoutMs ?? 60_000} ms:\n${text.slice(-2000)}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
  return proc;
}

/** Runs a bench process to its end (a load generator): resolves when it exits 0, else throws with its log tail. */
export async function runToEnd(
  name: string,
  command: string,
  args: string[],
  options: { env?: NodeJS.ProcessEnv; timeoutMs?: number } = {},
): Promise<void> {
  const proc = await startProcess(name, command, args, { ...(options.env ? { env: options.env } : {}) });
  const timeout = options.timeoutMs ?? 1_800_000;
  const timer = setTimeout(() => void proc.stop(0), timeout);
  const code = await proc.exited;
  clearTimeout(timer);
  if (code !== 0) throw new Error(`${name} exited with ${code}:\n${proc.output().slice(-3000)}`);
}

/** Command and arguments that run a bench TypeScript file in its own Node process (through tsx). */
export function tsNode(file: string, ...args: string[]): [string, string[]] {
  return [process.execPath, ['-r', 'tsx/cjs', file, ...args]];
}

/** RSS (MiB) and CPU seconds (user + system) of a process, from /proc. */
export function sampleProcess(pid: number): { rssMiB: number; cpuSeconds: number } {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const rssKiB = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { rssMiB: Math.round(rssKiB / 1024), cpuSeconds: (Number(fields[11]) + Number(fields[12])) / 100 };
}
