import { Worker, bundleWorkflowCode, type WorkflowBundleWithSourceMap } from '@temporalio/worker';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { startDevServer, startTimeSkippingServer } from '../helpers/temporal';

let bundle: WorkflowBundleWithSourceMap;

beforeAll(async () => {
  bundle = await bundleWorkflowCode({
    workflowsPath: require.resolve('./temporal-smoke.workflows'),
    logger: quietLogger(),
  });
});

function quietLogger() {
  const noop = () => undefined;
  return { trace: noop, debug: noop, info: noop, warn: noop, error: noop, log: noop };
}

async function runOnce(env: TestWorkflowEnvironment): Promise<string> {
  const worker = await Worker.create({
    connection: env.nativeConnection,
    taskQueue: 'smoke',
    workflowBundle: bundle,
    activities: { greet: async (name: string) => `hello ${name}` },
  });
  return worker.runUntil(
    env.client.workflow.execute('smokeWorkflow', {
      taskQueue: 'smoke',
      workflowId: `smoke-${Date.now()}`,
      args: ['reelflow', 60 * 60 * 1000],
    }),
  );
}

describe('a real Temporal server', () => {
  it('runs a workflow with a timer on the time-skipping server without waiting for the timer', async () => {
    const env = await startTimeSkippingServer();
    try {
      // The server's clock went past the workflow's one-hour timer while the test (2 min jest limit) did not wait for it:
      // without time skipping the run would outlast the test's timeout; a timer that never fired would not reach the activity.
      const serverBefore = await env.currentTimeMs();
      await expect(runOnce(env)).resolves.toBe('hello reelflow');
      expect((await env.currentTimeMs()) - serverBefore).toBeGreaterThanOrEqual(60 * 60 * 1000);
    } finally {
      await env.teardown();
    }
  });

  it('runs a workflow on the CLI dev server', async () => {
    const env = await startDevServer();
    try {
      expect(env.supportsTimeSkipping).toBe(false);
      const worker = await Worker.create({
        connection: env.nativeConnection,
        taskQueue: 'smoke-dev',
        workflowBundle: bundle,
        activities: { greet: async (name: string) => `hi ${name}` },
      });
      const result = await worker.runUntil(
        env.client.workflow.execute('smokeWorkflow', {
          taskQueue: 'smoke-dev',
          workflowId: `smoke-dev-${Date.now()}`,
          args: ['dev', 10],
        }),
      );
      expect(result).toBe('hi dev');
    } finally {
      await env.teardown();
    }
  });
});
