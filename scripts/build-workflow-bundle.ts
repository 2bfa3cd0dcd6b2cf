/**
 * Pre-bundles the workflow code at build time (`npm run build`), so a production worker loads
 * dist/workflow-bundle.js (REELFLOW_WORKFLOW_BUNDLE) instead of running webpack at every start.
 * Production mode, no source map (src/workers/workflow-bundle.ts). `--tracing` bundles Temporal's
 * OpenTelemetry workflow interceptors in (workflow spans when the worker traces; another build id).
 *
 *   npx tsx scripts/build-workflow-bundle.ts [--tracing] [output path]
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { bundleProductionWorkflows } from '../src/workers/workflow-bundle';

/** The module of Temporal's workflow interceptors for tracing (src/tracing/temporal.ts bundles the same). */
const TRACING_WORKFLOW_MODULE = '@temporalio/interceptors-opentelemetry/lib/workflow-interceptors';

/** Writes the bundle to `outputPath` (with the tracing interceptors when `tracing`) and returns the path. */
export async function buildWorkflowBundle(outputPath: string, tracing = false): Promise<string> {
  const { code } = await bundleProductionWorkflows(undefined, {
    ...(tracing ? { workflowInterceptorModules: [require.resolve(TRACING_WORKFLOW_MODULE)] } : {}),
  });
  fs.mkdirSync(path.dirname(outputPath), { recursive: true });
  fs.writeFileSync(outputPath, code);
  return outputPath;
}

if (require.main === module) {
  const args = process.argv.slice(2);
  const tracing = args.includes('--tracing');
  const given = args.find((arg) => arg !== '--tracing');
  const output = path.resolve(given ?? path.join(__dirname, '..', 'dist', 'workflow-bundle.js'));
  buildWorkflowBundle(output, tracing).then(
    (written) =>
      console.log(
        `workflow bundle written to ${path.relative(process.cwd(), written)} (${fs.statSync(written).size} bytes)`,
      ),
    (error: unknown) => {
      console.error(error instanceof Error ? error.message : error);
      process.exit(1);
    },
  );
}
