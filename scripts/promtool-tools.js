'use strict';
/** Prometheus's promtool, which checks and unit-tests the alert rules (scripts/go-tools.js finds or builds it). */
const { resolveGoTool } = require('./go-tools');

/** Pinned: Prometheus v3.x's Go module version (github.com/prometheus/prometheus tags v0.3xx for v3.x). */
const PROMTOOL = {
  name: 'promtool',
  binary: 'promtool',
  variable: 'PROMTOOL_PATH',
  module: 'github.com/prometheus/prometheus/cmd/promtool@v0.316.0',
};

/**
 * @param {{ install?: boolean }} [options] build with `go install` when nothing else is found
 * @returns {{ path: string, source: string } | null}
 */
const resolvePromtool = (options = {}) => resolveGoTool(PROMTOOL, options);

module.exports = { resolvePromtool, PROMTOOL };
