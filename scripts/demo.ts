/**
 * `npm run demo`: the local stack, the canonical three-step pipeline and checked outputs, in one
 * command. State lives in REELFLOW_STATE_DIR (default .reelflow); see src/stack/demo.ts.
 */
import { CONFIG_EXIT_CODE, ConfigError } from '../src/config';
import { demoOptionsFromEnv, runDemo } from '../src/stack/demo';

// The settings are read first, inside the chain: a bad variable exits 2 naming it, like every process.
Promise.resolve()
  .then(() => {
    // `npm run demo -- --graph [--yes]`: the long ad, as `reelflow demo --graph` runs it.
    const graph = process.argv.includes('--graph') ? { approve: process.argv.includes('--yes') } : undefined;
    return runDemo({ ...demoOptionsFromEnv(), ...(graph ? { graph } : {}) });
  })
  .then(
    (code) => process.exit(code),
    (error: unknown) => {
      console.error(`reelflow demo: ${error instanceof Error ? error.message : String(error)}`);
      process.exit(error instanceof ConfigError ? CONFIG_EXIT_CODE : 1);
    },
  );
