import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

/**
 * `reelflow <command>` loads only that command's modules (src/cli/commands/index.ts), so `reelflow run`
 * starts without the Temporal worker, Fastify, prom-client or the AWS SDK (about a second of start-up
 * on a 2-core machine; docs/benchmarks.md, "reelflow run → first submit").
 */
const ROOT = path.resolve(__dirname, '../../../..');
const HEAVY = ['@temporalio/worker', 'fastify', 'prom-client', '@aws-sdk/client-s3'];

/** The packages of HEAVY that `reelflow <args>` loaded, read from the require cache as the process exits. */
function heavyModulesLoadedBy(args: string[]): string[] {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reelflow-cli-startup-'));
  const hook = path.join(dir, 'hook.js');
  const out = path.join(dir, 'loaded.json');
  fs.writeFileSync(
    hook,
    `process.on('exit', () => require('node:fs').writeFileSync(${JSON.stringify(out)}, JSON.stringify(Object.keys(require.cache))));`,
  );
  try {
    const result = spawnSync(
      process.execPath,
      ['-r', 'tsx/cjs', '-r', hook, path.join(ROOT, 'src', 'cli', 'main.ts'), ...args],
      { cwd: ROOT, encoding: 'utf8', timeout: 120_000 },
    );
    expect(result.status).toBe(0);
    const loaded = JSON.parse(fs.readFileSync(out, 'utf8')) as string[];
    return HEAVY.filter((name) =>
      loaded.some((file) => file.includes(`${path.sep}node_modules${path.sep}${name}${path.sep}`)),
    );
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

describe('CLI start-up', () => {
  it('`reelflow run --help` loads none of the worker, bridge or S3 packages', () => {
    expect(heavyModulesLoadedBy(['run', '--help'])).toEqual([]);
  });

  it('`reelflow status --help` loads none of them either', () => {
    expect(heavyModulesLoadedBy(['status', '--help'])).toEqual([]);
  });

  it('`reelflow --help` lists every command, so it loads them all (the check above can see a package load)', () => {
    expect(heavyModulesLoadedBy(['--help'])).toEqual(expect.arrayContaining(['@temporalio/worker', 'prom-client']));
  });
});
