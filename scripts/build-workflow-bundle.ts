/**
 * Pre-bundles the workflow code at build time (`npm run build`), so a production worker loads
 * dist/workflow-bundle.js (REELFLOW_WORKFLOW_BUNDLE) instead of running webpack at every start.
 *
 *   npx tsx scripts/build-workflow-bundle.ts [output path]
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { bundleWorkflowCode } from '@temporalio/worker';

/** Writes the bundle (with its inline source map) to `outputPath` and returns the path. */
export async function buildWorkflowBundle(outputPath: string): Promise<string> {
  const noop = () => undefined;
  const { code } = await bundleWorkflowCode({
    workflowsPath: require.resolve('../src/workflows'),
    logger: { trace: noop, debug: noop, info: noop, warn: noop, error: noop, log: noop },
  });
  fs.mkdirSync(path.dirname(outputPath), { recursive: true });
  fs.writeFileSync(outputPath, code);
  return outputPath;
}

if (require.main === module) {
  const output = path.resolve(process.argv[2] ?? path.join(__dirname, '..', 'dist', 'workflow-bundle.js'));
  buildWorkflowBundle(output).then(
    (written) => console.log(`workflow bundle written to ${path.relative(process.cwd(), written)} (${fs.statSync(written).size} bytes)`),
    (error: unknown) => {
      console.error(error instanceof Error ? error.message : error);
      process.exit(1);
    },
  );
}
