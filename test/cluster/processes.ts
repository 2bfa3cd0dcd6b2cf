import * as fs from 'node:fs';
import * as path from 'node:path';
import { spawnChild, type Child } from '../faults/fault-run';

/**
 * reelflow's processes as the cluster runs start them: the local service, workers and bridges, each
 * a child process of its production entry point, compiled (dist/, `npm run build`) or run from
 * src/ through tsx (tests inside `npm test`, which builds nothing).
 */

const ROOT = path.join(__dirname, '..', '..');
const DIST = path.join(ROOT, 'dist');

/** Where the entry points are loaded from. */
export type Entry = 'dist' | 'src';

/** The process entry points under src/workers. */
type EntryPoint = 'local-service' | 'worker' | 'bridge';

/** The prebuilt workflow bundle `npm run build` writes. */
export const DIST_WORKFLOW_BUNDLE = path.join(DIST, 'workflow-bundle.js');

/** The compiled entry points must be there: `npm run test:cluster` runs `npm run build` first. */
export function requireBuild(): void {
  for (const file of ['workers/local-service.js', 'workers/worker.js', 'workers/bridge.js', 'workflow-bundle.js']) {
    if (!fs.existsSync(path.join(DIST, file)))
      throw new Error(`dist/${file} is missing: run \`npm run build\` first (npm run test:cluster does)`);
  }
}

/** Node's arguments that run `point` from `entry`. */
function entryArgs(entry: Entry, point: EntryPoint): string[] {
  return entry === 'dist'
    ? [path.join(DIST, 'workers', `${point}.js`)]
    : ['-r', 'tsx/cjs', path.join(ROOT, 'src', 'workers', `${point}.ts`)];
}

/** The children of one run: every line they print goes to `logs`; `stopAll` SIGKILLs those still running. */
export interface ProcessGroup {
  logs: { text: string };
  children: Set<Child>;
  /** Starts `point` with `env` (added to this process's), resolved once its output matches its ready line. */
  start(point: EntryPoint, env: NodeJS.ProcessEnv, label: string): Promise<Child>;
  stopAll(): Promise<void>;
}

const READY: Record<EntryPoint, RegExp> = {
  'local-service': /listening on/,
  bridge: /listening on/,
  worker: /reelflow worker: task queue/,
};

/** A group of processes started from `entry`. */
export function processGroup(entry: Entry): ProcessGroup {
  const logs = { text: '' };
  const children = new Set<Child>();
  return {
    logs,
    children,
    async start(point, env, label) {
      const child = await spawnChild(entryArgs(entry, point), env, READY[point], logs, label);
      children.add(child);
      void child.exited.then(() => children.delete(child));
      return child;
    },
    async stopAll() {
      for (const child of [...children]) await child.kill();
    },
  };
}
