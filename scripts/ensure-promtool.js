#!/usr/bin/env node
'use strict';
// Makes sure Prometheus's promtool is available for the alert rules' tests (built into .tools/promtool
// with `go install` through the Go module proxy when neither PROMTOOL_PATH nor PATH has one).
// Run by `.ci/run` and before `npm test`; prints where the binary came from.
const { ensureGoTool } = require('./go-tools');
const { PROMTOOL } = require('./promtool-tools');

ensureGoTool(PROMTOOL, "the alert rules' tests need it");
