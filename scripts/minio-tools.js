'use strict';
/**
 * Finds (and if needed builds) the MinIO server that the S3 media-store tests run against.
 *
 * Order, as for the Temporal binaries (scripts/temporal-tools.js):
 *   1. MINIO_PATH (an explicit binary);
 *   2. `minio` on PATH;
 *   3. a project-local copy under .tools/minio/bin, built with
 *      `GOBIN=.tools/minio/bin go install github.com/minio/minio@<MINIO_VERSION>` (the Go module proxy;
 *      about 3 minutes cold, seconds with a warm build cache);
 *   4. null: the caller skips nothing silently — it reports that MinIO is missing.
 *
 * Plain CommonJS so it runs before anything is compiled.
 */
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { onPath } = require('./temporal-tools');

const ROOT = path.resolve(__dirname, '..');
const TOOLS_DIR = path.join(ROOT, '.tools', 'minio');
/** Pinned pseudo-version of github.com/minio/minio (what @latest resolved to when this was written). */
const MINIO_MODULE = 'github.com/minio/minio@v0.0.0-20260212201848-7aac2a2c5b7c';

function localCopy() {
  const candidate = path.join(TOOLS_DIR, 'bin', 'minio');
  return fs.existsSync(candidate) ? candidate : null;
}

function goInstall() {
  const go = process.env.GO || 'go';
  const result = spawnSync(go, ['install', MINIO_MODULE], {
    stdio: ['ignore', 'inherit', 'inherit'],
    env: { ...process.env, GOBIN: path.join(TOOLS_DIR, 'bin'), CGO_ENABLED: process.env.CGO_ENABLED ?? '0' },
  });
  return result.status === 0;
}

/**
 * @param {{ install?: boolean }} [options] build with `go install` when nothing else is found
 * @returns {{ path: string, source: string } | null}
 */
function resolveMinio(options = {}) {
  const fromEnv = process.env.MINIO_PATH;
  if (fromEnv) {
    if (!fs.existsSync(fromEnv)) throw new Error(`MINIO_PATH points to ${fromEnv}, which does not exist`);
    return { path: fromEnv, source: 'MINIO_PATH' };
  }
  const fromPath = onPath('minio');
  if (fromPath) return { path: fromPath, source: 'PATH' };
  let local = localCopy();
  if (!local && options.install && goInstall()) local = localCopy();
  if (local) return { path: local, source: '.tools (go install)' };
  return null;
}

module.exports = { resolveMinio, TOOLS_DIR, MINIO_MODULE };
