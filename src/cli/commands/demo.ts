import type { Command } from 'commander';
import { demoOptionsFromEnv, runDemo } from '../../stack/demo';

/** `reelflow demo [--graph] [--yes]`: the local stack, a pipeline and its checked outputs, in one command. */
export function registerDemoCommand(program: Command): void {
  program
    .command('demo')
    .description(
      'Start the local stack, run a pipeline and check its outputs with ffprobe (exit 0 passed, 1 failed, 130 interrupted)',
    )
    .option('--graph', 'run the long ad: four scenes at once, cut, re-voiced, a person approves, upscaled', false)
    .option('--yes', 'with --graph: approve the gate when it waits (else `reelflow approve` decides it)', false)
    .action(async (options: { graph: boolean; yes: boolean }) => {
      const code = await runDemo({
        ...demoOptionsFromEnv(),
        ...(options.graph ? { graph: { approve: options.yes } } : {}),
      });
      process.exitCode = code;
    });
}
