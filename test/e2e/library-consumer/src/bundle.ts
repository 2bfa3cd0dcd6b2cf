import { writeFileSync } from 'node:fs';
import { bundleWorkflowCode } from '@temporalio/worker';

/** Bundles the team's workflows with the SDK's plain bundler (no webpack hook) into workflow-bundle.js. */
async function main(): Promise<void> {
  const { code } = await bundleWorkflowCode({ workflowsPath: require.resolve('./workflows') });
  writeFileSync('workflow-bundle.js', code);
  console.log(`bundled ${code.length} bytes`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
