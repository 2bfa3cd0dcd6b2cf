#!/usr/bin/env node
// Runs the TypeScript CLI through tsx so that a fresh clone works right after `npm ci`,
// with no build step that could leave a stale copy behind.
const path = require('node:path');
require('tsx/cjs');
require(path.join(__dirname, '..', 'src', 'cli', 'main.ts'));
