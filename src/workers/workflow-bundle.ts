import { bundleWorkflowCode, type WorkflowBundleWithSourceMap } from '@temporalio/worker';

const silent = () => undefined;
const QUIET_LOGGER = { trace: silent, debug: silent, info: silent, warn: silent, error: silent, log: silent };

/**
 * The SDK's worker refuses a bundle without an inline `sourceMappingURL=data:` comment, so the
 * production bundle ends with an empty map (a few bytes) instead of the full one.
 */
export function emptySourceMapComment(file = 'workflow-bundle.js'): string {
  const map = { version: 3, file, sources: [], names: [], mappings: '' };
  return `\n//# sourceMappingURL=data:application/json;base64,${Buffer.from(JSON.stringify(map)).toString('base64')}\n`;
}

/**
 * Frames V8 records for an Error made in the workflow sandbox (its default is 10). The SDK's promise
 * hook makes one for every promise a workflow creates, for the stack trace query, and formatting
 * their frames was about 40 % of the workflow thread's CPU: at 4, a replayed three-step pipeline
 * costs a fifth to a quarter less, and the task a webhook wakes schedules the next submit sooner
 * (docs/decisions/pipelines.md). The stack trace query (the UI's Stack Trace tab) then shows up to
 * the three innermost workflow frames of each wait, and a workflow failure's stack its four innermost.
 */
export const WORKFLOW_STACK_TRACE_LIMIT = 4;

/**
 * Bundles src/workflows for the worker, as production runs it: webpack in production mode (tree
 * shaking, module concatenation) and no source map, instead of the SDK's development mode with an
 * inline source map that doubles the code every worker parses. Not minified, so stack traces in
 * workflow failures keep readable names without a map. Tests bundle with this too (once per file).
 * The bundle sets the sandbox's `Error.stackTraceLimit` to `stackTraceLimit` (default
 * WORKFLOW_STACK_TRACE_LIMIT; `null` keeps V8's 10): it applies to every workflow in the bundle,
 * a `workflowsPath` of your own included. `workflowInterceptorModules` are bundled as the SDK's
 * `interceptors.workflowModules` would be (tracing's: src/tracing `tracingWorkflowModules`).
 */
export async function bundleProductionWorkflows(
  workflowsPath: string = require.resolve('../workflows'),
  options: { stackTraceLimit?: number | null; workflowInterceptorModules?: string[] } = {},
): Promise<WorkflowBundleWithSourceMap> {
  const bundle = await bundleWorkflowCode({
    workflowsPath,
    ...(options.workflowInterceptorModules?.length
      ? { workflowInterceptorModules: options.workflowInterceptorModules }
      : {}),
    logger: QUIET_LOGGER,
    webpackConfigHook: (config) => ({
      ...config,
      mode: 'production',
      devtool: false,
      optimization: { ...config.optimization, minimize: false },
    }),
  });
  const limit = options.stackTraceLimit === undefined ? WORKFLOW_STACK_TRACE_LIMIT : options.stackTraceLimit;
  if (limit !== null && !(Number.isInteger(limit) && limit >= 0))
    throw new RangeError(`stackTraceLimit must be a whole number of frames or null, not ${limit}`);
  // A statement before webpack's bootstrap: it runs once where the bundle is evaluated, in the sandbox.
  const prelude = limit === null ? '' : `Error.stackTraceLimit = ${limit};\n`;
  return { ...bundle, code: `${prelude}${bundle.code.trimEnd()}${emptySourceMapComment()}` };
}
