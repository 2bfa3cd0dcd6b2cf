#!/usr/bin/env node
'use strict';
// Runs a command (the rest of the arguments) under a Node reelflow supports. On Node 22.13 or later the
// command runs as it is. On an older Node (node:sqlite, which the route store needs, is unflagged from
// 22.13 on) it says so in one line, installs Node from the npm registry into .tools/ (scripts/ensure-node.js;
// once, later runs reuse it) and runs the command with that Node first on PATH, so `npm ci` then
// `npm run demo` (and `npm test`) work on any machine with npm. Exits with the command's exit code.
// Plain ES2018, so that it runs on any Node old enough to need it.
const { spawn } = require('node:child_process');
const path = require('node:path');
const { NODE_VERSION, MINIMUM, isSupported, ensureNode } = require('./ensure-node');

/** What the user ran, for the one line: `npm run demo` under npm, else the command itself. */
function commandName(argv) {
  const event = process.env.npm_lifecycle_event;
  if (event) return event === 'test' ? 'npm test' : `npm run ${event}`;
  return argv.join(' ');
}

function main(argv) {
  if (argv.length === 0) {
    console.error('usage: node scripts/check-node.js <command> [args...]');
    return process.exit(2);
  }
  const env = Object.assign({}, process.env);
  if (!isSupported(process.versions.node)) {
    console.error(
      `${commandName(argv)}: Node ${process.version} is older than ${MINIMUM} (node:sqlite); ` +
        `running it under Node ${NODE_VERSION} from .tools/ (installed from the npm registry on first use)`,
    );
    let binDir;
    try {
      binDir = ensureNode();
    } catch (error) {
      console.error(`check-node: ${error.message}; install Node ${MINIMUM} or later and run it again`);
      return process.exit(1);
    }
    env.PATH = `${binDir}${path.delimiter}${env.PATH || ''}`;
    // npm hands scripts the Node that started it; the command's own `npm` and `node` calls take PATH's.
    env.npm_node_execpath = path.join(binDir, 'node');
    env.NODE = path.join(binDir, 'node');
  }
  const child = spawn(argv[0], argv.slice(1), { stdio: 'inherit', env });
  // The terminal's Ctrl-C reaches the child itself (same process group): passing it on too would be a
  // second Ctrl-C, which stops the demo without its clean-up, so this process only waits. A SIGTERM or
  // SIGHUP (npm passes them on to its script alone) is passed on.
  process.on('SIGINT', () => undefined);
  for (const signal of ['SIGTERM', 'SIGHUP'])
    process.on(signal, () => {
      if (child.exitCode === null) child.kill(signal);
    });
  child.on('error', (error) => {
    console.error(`check-node: cannot run ${argv[0]}: ${error.message}`);
    process.exit(127);
  });
  child.on('exit', (code, signal) => process.exit(code === null ? 128 + (signalNumber(signal) || 1) : code));
}

function signalNumber(signal) {
  return require('node:os').constants.signals[signal];
}

main(process.argv.slice(2));
