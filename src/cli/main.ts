import { Command, CommanderError } from 'commander';
import { registerCommands } from './commands';

/** Exit codes scripts can rely on (documented in the README). */
export const EXIT = { ok: 0, failed: 1, usage: 2, unavailable: 3, notFound: 4 } as const;

async function main(argv: string[]): Promise<void> {
  const program = new Command('reelflow')
    .description('Durable media pipelines on Temporal for an asynchronous video-generation service')
    .showHelpAfterError()
    .exitOverride();
  registerCommands(program);
  try {
    await program.parseAsync(argv);
  } catch (error) {
    if (error instanceof CommanderError) {
      process.exitCode = error.exitCode === 0 ? EXIT.ok : EXIT.usage;
      return;
    }
    console.error(`reelflow: ${error instanceof Error ? error.message : String(error)}`);
    process.exitCode = process.exitCode && process.exitCode !== 0 ? process.exitCode : EXIT.failed;
  }
}

void main(process.argv);
