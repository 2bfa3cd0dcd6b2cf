/**
 * `npm run demo`: the local stack, the canonical three-step pipeline and checked outputs, in one
 * command. State lives in REELFLOW_STATE_DIR (default .reelflow); see src/stack/demo.ts.
 */
import { demoOptionsFromEnv, runDemo } from '../src/stack/demo';

runDemo(demoOptionsFromEnv()).then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(`reelflow demo: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  },
);
