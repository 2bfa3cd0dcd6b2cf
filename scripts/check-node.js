#!/usr/bin/env node
'use strict';
// Stops a command early on a Node older than the supported lines (22 and 24 LTS), with the fix, instead
// of a stack trace from deep inside the stack (`npm run demo` runs it first). Plain ES5-level code so
// that it runs on any Node old enough to need it.
var SUPPORTED_MAJOR = 22;
var major = Number(process.versions.node.split('.')[0]);
if (major < SUPPORTED_MAJOR) {
  var what = process.argv[2] || 'reelflow';
  console.error(
    what +
      ' needs Node 22 or 24 (the maintained LTS lines); this is Node ' +
      process.version +
      '.\n' +
      'Fix: install Node 24 into .tools/ from the npm registry and put it first on PATH, then install again:\n' +
      '  export PATH="$(node scripts/ensure-node.js):$PATH" && npm ci\n' +
      '(or install Node 22 or 24 yourself).',
  );
  process.exit(1);
}
