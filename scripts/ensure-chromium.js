#!/usr/bin/env node
'use strict';
// Makes sure a Chromium is there for the browser test and `npm run screenshots`; installs Debian's
// package with apt-get where it is missing (run by .ci/run). Exit 0 either way: the browser test
// itself says clearly when it cannot run (and fails in CI, where REELFLOW_REQUIRE_BROWSER=1).
const { resolveChromium, chromiumVersion } = require('./chromium-tools');

const found = resolveChromium({ install: process.argv.includes('--install') });
if (found) {
  console.log(`chromium: ${found.path} (${found.source}) ${chromiumVersion(found.path) || '(does not start)'}`);
} else {
  console.warn('chromium: not found (set CHROMIUM_PATH, or `apt-get install chromium`); the browser test will not run');
}
