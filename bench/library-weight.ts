/**
 * What reelflow costs a team that installs it as a library (not part of `npm run bench`; run it alone:
 * `npx tsx bench/library-weight.ts [--checkout DIR] [--runs N] [--keep]`):
 *  - the consumer's install: `npm pack` of the checkout (its prepack builds dist/), a fresh project in a
 *    temporary directory installing the tarball and its required peers (@temporalio/* at this project's
 *    locked versions) and nothing else, then the size of its node_modules (`du -sk`) and which of
 *    reelflow's optional packages landed in it;
 *  - `require('reelflow/worker')` in that project with plain Node: wall time and modules loaded
 *    (require.cache), the median of `--runs` fresh processes; then the same after `@temporalio/worker`
 *    is loaded (what a worker process pays on top of the SDK), and `reelflowPlugin().configureWorker`'s
 *    first load of the activities' code (what Worker.create pays).
 * `--checkout` measures another checkout (e.g. a `git worktree` of the previous release) the same way.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { OPTIONAL_PACKAGES } from '../src/config/optional-packages';

const ROOT = path.resolve(__dirname, '..');
const OPTIONAL = Object.keys(OPTIONAL_PACKAGES);
const PEERS = ['activity', 'client', 'common', 'envconfig', 'worker', 'workflow'].map((name) => `@temporalio/${name}`);

function arg(name: string): string | undefined {
  const at = process.argv.indexOf(name);
  return at >= 0 ? process.argv[at + 1] : undefined;
}

function lockedVersion(name: string): string {
  const lock = JSON.parse(fs.readFileSync(path.join(ROOT, 'package-lock.json'), 'utf8')) as {
    packages: Record<string, { version?: string }>;
  };
  const version = lock.packages[`node_modules/${name}`]?.version;
  if (!version) throw new Error(`package-lock.json has no ${name}`);
  return version;
}

/** Packs `checkout` and installs the tarball with only its required peers into a fresh project. */
function install(checkout: string): { dir: string; kib: number; optionalInstalled: string[] } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reelflow-weight-'));
  const packed = execFileSync('npm', ['pack', '--pack-destination', dir, '--json'], {
    cwd: checkout,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const [report] = JSON.parse(packed.slice(packed.lastIndexOf('\n[') + 1)) as { filename: string }[];
  const dependencies = Object.fromEntries(PEERS.map((name) => [name, lockedVersion(name)]));
  fs.writeFileSync(
    path.join(dir, 'package.json'),
    JSON.stringify({
      name: 'weight',
      private: true,
      dependencies: { reelflow: `file:${path.join(dir, report!.filename)}`, ...dependencies },
    }),
  );
  execFileSync('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error'], {
    cwd: dir,
    stdio: 'inherit',
  });
  const kib = Number(execFileSync('du', ['-sk', 'node_modules'], { cwd: dir, encoding: 'utf8' }).split('\t')[0]);
  const optionalInstalled = OPTIONAL.filter((name) => fs.existsSync(path.join(dir, 'node_modules', name)));
  return { dir, kib, optionalInstalled };
}

/** One fresh Node process: ms and modules of `require(target)`, after `before` is loaded. */
function importOnce(dir: string, target: string, before: string[], then?: string): { ms: number; modules: number } {
  const code = `${before.map((m) => `require(${JSON.stringify(m)});`).join('')}
const n0 = Object.keys(require.cache).length; const t0 = process.hrtime.bigint();
const loaded = require(${JSON.stringify(target)});
${then ?? ''}
const ms = Number(process.hrtime.bigint() - t0) / 1e6;
console.log(JSON.stringify({ ms, modules: Object.keys(require.cache).length - n0 }));`;
  const out = execFileSync(process.execPath, ['-e', code], { cwd: dir, encoding: 'utf8' });
  return JSON.parse(out.trim().split('\n').pop()!) as { ms: number; modules: number };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

function measure(dir: string, runs: number, before: string[], then?: string) {
  const samples = Array.from({ length: runs }, () => importOnce(dir, 'reelflow/worker', before, then));
  return { medianMs: Math.round(median(samples.map((s) => s.ms))), modules: samples[0]!.modules };
}

function main(): void {
  const checkout = path.resolve(arg('--checkout') ?? ROOT);
  const runs = Number(arg('--runs') ?? 7);
  const started = Date.now();
  const { dir, kib, optionalInstalled } = install(checkout);
  // What Worker.create pays the first time: the plugin's configure step loads the activities' code (a
  // checkout without the lazy step already loaded it at import: then this adds nothing).
  const configure = `try { require.resolve('reelflow/package.json'); require(require.resolve('reelflow/worker').replace(/index\\.js$/, 'configure.js')); } catch (e) { if (e.code !== 'MODULE_NOT_FOUND') throw e; }`;
  const result = {
    checkout,
    node: process.version,
    install: { megabytes: Math.round(kib / 1024), optionalInstalled },
    importAlone: measure(dir, runs, []),
    importAfterSdk: measure(dir, runs, ['@temporalio/worker']),
    importAndConfigureAfterSdk: measure(dir, runs, ['@temporalio/worker'], configure),
    runs,
    seconds: Math.round((Date.now() - started) / 1000),
  };
  console.log(JSON.stringify(result, null, 2));
  if (!process.argv.includes('--keep')) fs.rmSync(dir, { recursive: true, force: true });
  else console.log(`kept ${dir}`);
}

main();
