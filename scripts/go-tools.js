'use strict';
/**
 * Finds (and if needed builds) a Go tool the tests run: MinIO for the S3 media-store tests, promtool
 * for the alert rules' tests. Order, as for the Temporal binaries (scripts/temporal-tools.js):
 *   1. the tool's variable (an explicit binary, e.g. MINIO_PATH);
 *   2. the binary on PATH;
 *   3. a project-local copy under .tools/<name>/bin, built with `GOBIN=… go install <module>` through
 *      the Go module proxy (minutes cold, seconds with a warm build cache);
 *   4. null: the caller reports that the tool is missing (nothing is skipped silently).
 *
 * Plain CommonJS so it runs before anything is compiled.
 */
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { onPath } = require('./temporal-tools');

const ROOT = path.resolve(__dirname, '..');

/**
 * @typedef {{ name: string, binary: string, variable: string, module: string }} GoTool
 * name: its folder under .tools; binary: the file go install writes; variable: the override;
 * module: what go install builds, pinned to a version.
 */

/** @param {GoTool} tool */
function toolsDir(tool) {
  return path.join(ROOT, '.tools', tool.name);
}

/** @param {GoTool} tool */
function localCopy(tool) {
  const candidate = path.join(toolsDir(tool), 'bin', tool.binary);
  return fs.existsSync(candidate) ? candidate : null;
}

/** @param {GoTool} tool */
function goInstall(tool) {
  const go = process.env.GO || 'go';
  const result = spawnSync(go, ['install', tool.module], {
    stdio: ['ignore', 'inherit', 'inherit'],
    env: { ...process.env, GOBIN: path.join(toolsDir(tool), 'bin'), CGO_ENABLED: process.env.CGO_ENABLED ?? '0' },
  });
  return result.status === 0;
}

/**
 * @param {GoTool} tool
 * @param {{ install?: boolean }} [options] build with `go install` when nothing else is found
 * @returns {{ path: string, source: string } | null}
 */
function resolveGoTool(tool, options = {}) {
  const fromEnv = process.env[tool.variable];
  if (fromEnv) {
    if (!fs.existsSync(fromEnv)) throw new Error(`${tool.variable} points to ${fromEnv}, which does not exist`);
    return { path: fromEnv, source: tool.variable };
  }
  const fromPath = onPath(tool.binary);
  if (fromPath) return { path: fromPath, source: 'PATH' };
  let local = localCopy(tool);
  if (!local && options.install && goInstall(tool)) local = localCopy(tool);
  if (local) return { path: local, source: '.tools (go install)' };
  return null;
}

/**
 * Resolves `tool` for a setup script: prints where it came from, or fails the process naming what needs it.
 * @param {GoTool} tool
 * @param {string} neededBy
 */
function ensureGoTool(tool, neededBy) {
  const started = Date.now();
  const found = resolveGoTool(tool, { install: true });
  if (found) {
    console.log(`${tool.binary}: ${found.path} (${found.source}, ${((Date.now() - started) / 1000).toFixed(1)} s)`);
  } else {
    console.error(
      `${tool.binary}: not found and \`go install ${tool.module}\` failed; ${neededBy} (set ${tool.variable})`,
    );
    process.exitCode = 1;
  }
}

module.exports = { resolveGoTool, ensureGoTool, toolsDir };
