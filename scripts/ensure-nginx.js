#!/usr/bin/env node
'use strict';
// Finds nginx for the test of the TLS front of the bridge (deploy/nginx/webhooks-tls.conf), in this
// order: NGINX_PATH; Debian's package (/usr/sbin/nginx); nginx on PATH. Run as a script with
// --install (by .ci/run), as root on a Debian/Ubuntu machine, it installs Debian's nginx-light
// package with apt-get where none is found, without letting the package start a daemon. Exit 0
// either way: the test itself says clearly when it cannot run (and fails in CI, where
// REELFLOW_REQUIRE_NGINX=1).
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

function executable(file) {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}

/** The nginx to use, or null. */
function findNginx() {
  if (process.env.NGINX_PATH) return executable(process.env.NGINX_PATH) ? process.env.NGINX_PATH : null;
  if (executable('/usr/sbin/nginx')) return '/usr/sbin/nginx';
  for (const dir of (process.env.PATH || '').split(path.delimiter)) {
    if (dir && executable(path.join(dir, 'nginx'))) return path.join(dir, 'nginx');
  }
  return null;
}

/** Installs nginx-light with apt-get (root only); a reason string on failure, else null. */
function installNginx(log = console.log) {
  if (typeof process.getuid === 'function' && process.getuid() !== 0) return 'not root, so apt-get cannot install it';
  if (!executable('/usr/bin/apt-get')) return 'apt-get is not available on this machine';
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  // The package would start an nginx on port 80; policy-rc.d answering 101 ("action forbidden")
  // keeps it from starting anything (the way container images install daemons).
  const policy = '/usr/sbin/policy-rc.d';
  const ownPolicy = !fs.existsSync(policy);
  if (ownPolicy) fs.writeFileSync(policy, '#!/bin/sh\nexit 101\n', { mode: 0o755 });
  try {
    log('nginx: installing the Debian package nginx-light with apt-get (once per machine)');
    for (const args of [
      ['update', '-qq'],
      ['install', '-y', '-qq', '--no-install-recommends', 'nginx-light'],
    ]) {
      const run = spawnSync('apt-get', args, { env, stdio: ['ignore', 'inherit', 'inherit'], timeout: 15 * 60_000 });
      if (run.status !== 0) return `apt-get ${args[0]} exited with ${run.status ?? run.signal}`;
    }
  } finally {
    if (ownPolicy) fs.rmSync(policy, { force: true });
  }
  return null;
}

/** nginx's version line, or null when it does not run. */
function nginxVersion(file) {
  const run = spawnSync(file, ['-v'], { encoding: 'utf8', timeout: 10_000 });
  return run.status === 0 ? (run.stderr || run.stdout).trim() : null;
}

/** Finds nginx; with `install`, installs Debian's package when none is found. */
function resolveNginx(options = {}) {
  const found = findNginx();
  if (found || !options.install) return found;
  const problem = installNginx(options.log);
  if (problem) {
    (options.log || console.warn)(`nginx: cannot install it: ${problem}`);
    return null;
  }
  return findNginx();
}

module.exports = { resolveNginx, nginxVersion };

if (require.main === module) {
  const found = resolveNginx({ install: process.argv.includes('--install') });
  if (found) console.log(`nginx: ${found} ${nginxVersion(found) || '(does not start)'}`);
  else
    console.warn(
      'nginx: not found (set NGINX_PATH, or `apt-get install nginx-light`); the TLS front test will not run',
    );
}
