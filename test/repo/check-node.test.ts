import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

/** scripts/check-node.js: `npm run demo` on an older Node stops at once, naming the fix. */

const ROOT = path.resolve(__dirname, '../..');
const SCRIPT = path.join(ROOT, 'scripts', 'check-node.js');

/** Runs the check as if on Node `version` (process.versions.node replaced before it loads). */
function checkAs(version: string) {
  const code = `Object.defineProperty(process, 'versions', { value: { ...process.versions, node: ${JSON.stringify(version)} } }); process.argv = [process.execPath, ${JSON.stringify(SCRIPT)}, 'npm run demo']; require(${JSON.stringify(SCRIPT)});`;
  return spawnSync(process.execPath, ['-e', code], { encoding: 'utf8' });
}

describe('scripts/check-node.js', () => {
  it.each(['22.0.0', '24.21.0'])('lets Node %s through silently', (version) => {
    expect(checkAs(version)).toMatchObject({ status: 0, stderr: '' });
  });

  it('stops Node 20 with exit 1, naming the supported lines and the fix (scripts/ensure-node.js)', () => {
    const result = checkAs('20.20.2');
    expect(result.status).toBe(1);
    expect(result.stderr).toContain('npm run demo needs Node 22 or 24');
    expect(result.stderr).toContain('node scripts/ensure-node.js');
  });

  it('runs before the demo itself', () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
      scripts: Record<string, string>;
    };
    expect(pkg.scripts.demo).toMatch(/^node scripts\/check-node\.js .*&& tsx scripts\/demo\.ts$/);
  });
});
