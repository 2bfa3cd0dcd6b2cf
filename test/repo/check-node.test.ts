import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

/**
 * scripts/check-node.js and scripts/ensure-node.js: `npm run demo` and `npm test` on a Node older than
 * 22.13 run under the Node that ensure-node keeps in .tools/, saying so in one line; on a supported Node
 * the command runs as it is. Each case runs in a copy of the two scripts whose .tools/ holds a stand-in
 * for Node 24.21.0 (a shell script that answers `--version` and runs this Node otherwise), so nothing is
 * downloaded.
 */

const ROOT = path.resolve(__dirname, '../..');
// eslint-disable-next-line @typescript-eslint/no-require-imports -- a plain CommonJS script
const { NODE_VERSION, MINIMUM } = require(path.join(ROOT, 'scripts', 'ensure-node.js')) as {
  NODE_VERSION: string;
  MINIMUM: string;
};

const made: string[] = [];
afterAll(() => made.forEach((dir) => fs.rmSync(dir, { recursive: true, force: true })));

function checkout(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reelflow-check-node-'));
  made.push(dir);
  fs.mkdirSync(path.join(dir, 'scripts'));
  for (const script of ['check-node.js', 'ensure-node.js'])
    fs.copyFileSync(path.join(ROOT, 'scripts', script), path.join(dir, 'scripts', script));
  const bin = path.join(dir, '.tools', `node-${NODE_VERSION}`, 'bin');
  fs.mkdirSync(bin, { recursive: true });
  fs.writeFileSync(
    path.join(bin, 'node'),
    `#!/bin/sh\nif [ "$1" = --version ]; then echo v${NODE_VERSION}; exit 0; fi\nexec ${JSON.stringify(process.execPath)} "$@"\n`,
    { mode: 0o755 },
  );
  return dir;
}

/** Runs `node scripts/<script> ...args` in `dir` as if on Node `version` (process.versions.node replaced first). */
function runAs(dir: string, script: string, version: string, args: string[], env: Record<string, string> = {}) {
  const file = path.join(dir, 'scripts', script);
  const code = `Object.defineProperty(process, 'versions', { value: { ...process.versions, node: ${JSON.stringify(version)} } }); Object.defineProperty(process, 'version', { value: 'v' + ${JSON.stringify(version)} }); process.argv = [process.execPath, ${JSON.stringify(file)}, ...${JSON.stringify(args)}]; require('node:module').runMain();`;
  return spawnSync(process.execPath, ['-e', code], {
    cwd: dir,
    encoding: 'utf8',
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
  });
}

/** A command that prints the Node that PATH finds and exits 3. */
const WHICH_NODE = ['sh', '-c', 'command -v node; exit 3'];

describe('scripts/check-node.js', () => {
  it.each(['22.13.0', '24.21.0'])('runs the command as it is on Node %s, silently, with its exit code', (version) => {
    const dir = checkout();
    const result = runAs(dir, 'check-node.js', version, WHICH_NODE);
    expect(result).toMatchObject({ status: 3, stderr: '' });
    expect(result.stdout.trim()).not.toContain(path.join(dir, '.tools'));
  });

  it.each(['20.20.2', '22.12.0'])(
    'runs the command under .tools/ Node on Node %s, saying so in one line, with its exit code',
    (version) => {
      const dir = checkout();
      const result = runAs(dir, 'check-node.js', version, WHICH_NODE, { npm_lifecycle_event: 'demo' });
      expect(result.status).toBe(3);
      expect(result.stdout.trim()).toBe(path.join(dir, '.tools', `node-${NODE_VERSION}`, 'bin', 'node'));
      expect(result.stderr).toBe(
        `npm run demo: Node v${version} is older than ${MINIMUM} (node:sqlite); running it under Node ${NODE_VERSION} from .tools/ (installed from the npm registry on first use)\n`,
      );
    },
  );

  it('names npm test as npm test', () => {
    const result = runAs(checkout(), 'check-node.js', '20.20.2', ['true'], { npm_lifecycle_event: 'test' });
    expect(result.status).toBe(0);
    expect(result.stderr).toMatch(/^npm test: Node v20\.20\.2 is older than/);
  });

  it('fails with 127 when the command does not exist, naming it', () => {
    const result = runAs(checkout(), 'check-node.js', '24.21.0', ['no-such-command-here']);
    expect(result.status).toBe(127);
    expect(result.stderr).toContain('check-node: cannot run no-such-command-here');
  });
});

describe('scripts/ensure-node.js', () => {
  it('prints nothing on a supported Node, and the .tools/ bin folder on an older one', () => {
    const dir = checkout();
    expect(runAs(dir, 'ensure-node.js', '22.13.0', [])).toMatchObject({ status: 0, stdout: '' });
    expect(runAs(dir, 'ensure-node.js', '20.20.2', [])).toMatchObject({
      status: 0,
      stdout: `${path.join(dir, '.tools', `node-${NODE_VERSION}`, 'bin')}\n`,
    });
  });
});

describe('package.json', () => {
  const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
    scripts: Record<string, string>;
    engines: { node: string };
  };

  it('runs the demo and npm test through check-node', () => {
    expect(pkg.scripts.demo).toBe('node scripts/check-node.js tsx scripts/demo.ts');
    expect(pkg.scripts.test).toMatch(/^node scripts\/check-node\.js sh -c '.*jest --runInBand "\$@"' npm-test$/);
  });

  it('states the Node that check-node requires in engines', () => {
    expect(pkg.engines.node).toBe(`>=${MINIMUM.replace(/\.0$/, '')}`);
  });
});
