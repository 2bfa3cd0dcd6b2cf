/**
 * Pre-bundles the workflow code at build time (`npm run build`), so a production worker loads
 * dist/workflow-bundle.js (REELFLOW_WORKFLOW_BUNDLE) instead of running webpack at every start.
 * Production mode, no source map (src/workers/workflow-bundle.ts).
 *
 *   npx tsx scripts/build-workflow-bundle.ts [output path]
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { bundleProductionWorkflows } from '../src/workers/workflow-bundle';

/** Writes the bundle to `outputPath` and returns the path. */
export async function buildWorkflowBundle(outputPath: string): Promise<string> {
  const { code } = await bundleProductionWorkflows();
  fs.mkdirSync(path.dirname(outputPath), { recursive: true });
  fs.writeFileSync(outputPath, code);
  return outputPath;
}

if (require.main === module) {
  const output = path.resolve(process.argv[2] ?? path.join(__dirname, '..', 'dist', 'workflow-bundle.js'));
  buildWorkflowBundle(output).then(
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
