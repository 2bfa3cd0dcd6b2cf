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
 * Bundles src/workflows for the worker, as production runs it: webpack in production mode (tree
 * shaking, module concatenation) and no source map, instead of the SDK's development mode with an
 * inline source map that doubles the code every worker parses. Not minified, so stack traces in
 * workflow failures keep readable names without a map. Tests bundle with this too (once per file).
 */
export async function bundleProductionWorkflows(
  workflowsPath: string = require.resolve('../workflows'),
): Promise<WorkflowBundleWithSourceMap> {
  const bundle = await bundleWorkflowCode({
    workflowsPath,
    logger: QUIET_LOGGER,
    webpackConfigHook: (config) => ({
      ...config,
      mode: 'production',
      devtool: false,
      optimization: { ...config.optimization, minimize: false },
    }),
  });
  return { ...bundle, code: `${bundle.code.trimEnd()}${emptySourceMapComment()}` };
}
