import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';

/**
 * No container engine runs here, so the image is checked by its layout: the final stage's COPY lines
 * of deploy/Dockerfile replayed into a folder (the build stage's /app is this checkout with dist/
 * compiled as the image compiles it), then the CLI run from that folder as the container runs it.
 * node_modules is linked, not pruned: a superset of the image's production dependencies.
 */

const ROOT = join(__dirname, '../..');
const DOCKERFILE = readFileSync(join(ROOT, 'deploy/Dockerfile'), 'utf8');

interface CopyLine {
  fromBuild: boolean;
  source: string;
  target: string;
}

/** The COPY lines of the last stage, in order. */
function finalStageCopies(): CopyLine[] {
  const lastStage = DOCKERFILE.slice(DOCKERFILE.lastIndexOf('\nFROM '));
  return [...lastStage.matchAll(/^COPY (--from=build )?(\S+) (\S+)$/gm)].map((m) => ({
    fromBuild: m[1] !== undefined,
    source: m[2] ?? '',
    target: m[3] ?? '',
  }));
}

let image: string;
let built: string;

beforeAll(() => {
  image = mkdtempSync(join(tmpdir(), 'reelflow-image-'));
  built = mkdtempSync(join(tmpdir(), 'reelflow-image-dist-'));
  // What `npm run build` puts in the build stage's dist/ (the workflow bundle aside: not the CLI's).
  execFileSync(
    process.execPath,
    [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', join(ROOT, 'tsconfig.build.json'), '--outDir', built],
    { stdio: 'inherit' },
  );
  for (const copy of finalStageCopies()) {
    // The build stage's /app is this checkout, with dist/ compiled; a context COPY reads the checkout.
    const inApp = copy.fromBuild ? relative('/app', copy.source) : copy.source;
    const from = inApp === 'dist' ? built : join(ROOT, inApp);
    const to = join(image, copy.target.endsWith('/') ? join(copy.target, inApp.split('/').pop() ?? '') : copy.target);
    mkdirSync(dirname(to), { recursive: true });
    if (inApp === 'node_modules') symlinkSync(from, to, 'dir');
    else cpSync(from, to, { recursive: true });
  }
}, 180_000);

afterAll(() => {
  rmSync(image, { recursive: true, force: true });
  rmSync(built, { recursive: true, force: true });
});

describe("the image's layout (deploy/Dockerfile's COPY lines replayed)", () => {
  it('holds the CLI: its launcher, the compiled code and the script it loads, and no sources', () => {
    const copies = finalStageCopies();
    expect(copies.map((c) => c.target)).toEqual(expect.arrayContaining(['./bin', './dist']));
    expect(DOCKERFILE).toMatch(/^RUN ln -s \/app\/bin\/reelflow\.js \/usr\/local\/bin\/reelflow$/m);
    expect(() => readFileSync(join(image, 'src/cli/main.ts'))).toThrow();
  });

  it.each(['doctor --help', '--help'])('runs `reelflow %s`', (command) => {
    const args = command.split(' ');
    const run = spawnSync(process.execPath, [join(image, 'bin/reelflow.js'), ...args], {
      cwd: image,
      encoding: 'utf8',
      env: { PATH: process.env.PATH, HOME: image },
      timeout: 60_000,
    });
    expect({ code: run.status, stderr: run.stderr }).toEqual({ code: 0, stderr: '' });
    expect(run.stdout).toContain(args[0] === 'doctor' ? 'route-store' : 'doctor');
  });
});
