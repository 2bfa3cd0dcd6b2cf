'use strict';
// Finds a Chromium for the browser tests and `npm run screenshots`, in this order:
//   1. CHROMIUM_PATH;
//   2. Debian's package (/usr/bin/chromium) and chromium / chromium-browser / google-chrome on PATH;
//   3. with { install: true }, as root on a Debian/Ubuntu machine: `apt-get install chromium`
//      (the distribution's package; nothing is downloaded from a browser vendor).
// Used from JavaScript (test/helpers/browser.ts, scripts/screenshots.ts) and by ensure-chromium.js.
const { execFileSync, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const CANDIDATES = [
  '/usr/bin/chromium',
  '/usr/bin/chromium-browser',
  '/usr/bin/google-chrome',
  '/usr/bin/google-chrome-stable',
];
const ON_PATH = ['chromium', 'chromium-browser', 'google-chrome', 'google-chrome-stable'];

function executable(file) {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}

function onPath(name) {
  for (const dir of (process.env.PATH || '').split(path.delimiter)) {
    if (dir && executable(path.join(dir, name))) return path.join(dir, name);
  }
  return null;
}

/** The Chromium to use, or null. `{ path, source }`. */
function findChromium() {
  if (process.env.CHROMIUM_PATH) {
    return executable(process.env.CHROMIUM_PATH) ? { path: process.env.CHROMIUM_PATH, source: 'CHROMIUM_PATH' } : null;
  }
  for (const file of CANDIDATES) if (executable(file)) return { path: file, source: 'system package' };
  for (const name of ON_PATH) {
    const found = onPath(name);
    if (found) return { path: found, source: 'PATH' };
  }
  return null;
}

/** Installs Debian's chromium package with apt-get (root only). Returns a reason string on failure, else null. */
function installChromium(log = console.log) {
  if (typeof process.getuid === 'function' && process.getuid() !== 0) return 'not root, so apt-get cannot install it';
  if (!onPath('apt-get')) return 'apt-get is not available on this machine';
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  log('chromium: installing the Debian package with apt-get (once per machine)');
  for (const args of [
    ['update', '-qq'],
    ['install', '-y', '-qq', '--no-install-recommends', 'chromium', 'fonts-dejavu-core'],
  ]) {
    const run = spawnSync('apt-get', args, { env, stdio: ['ignore', 'inherit', 'inherit'], timeout: 15 * 60_000 });
    if (run.status !== 0) return `apt-get ${args[0]} exited with ${run.status ?? run.signal}`;
  }
  return null;
}

/** The browser's version line, or null when it does not run. */
function chromiumVersion(file) {
  try {
    return execFileSync(file, ['--version'], {
      encoding: 'utf8',
      timeout: 20_000,
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
  } catch {
    return null;
  }
}

/** Finds Chromium; with `install`, installs the Debian package when none is found. */
function resolveChromium(options = {}) {
  const found = findChromium();
  if (found || !options.install) return found;
  const failure = installChromium(options.log);
  if (failure) {
    (options.log || console.warn)(`chromium: cannot install (${failure})`);
    return null;
  }
  const installed = findChromium();
  return installed ? { ...installed, source: 'apt-get (installed now)' } : null;
}

module.exports = { findChromium, resolveChromium, chromiumVersion };
