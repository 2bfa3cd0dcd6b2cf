import { Command, CommanderError } from 'commander';
import { registerCommands } from './commands';
import { ConfigError } from '../config/errors';
import { packageVersion } from '../config/package-version';
import { endQuietlyOnClosedOutput } from './lib/closed-output';
import { CliError } from './lib/errors';
import { EXIT } from './lib/exit';

export { EXIT } from './lib/exit';

const EXIT_HELP = `
Exit codes:
  0  ok
  1  the pipeline or batch failed or was cancelled (or another runtime error)
  2  usage error, invalid spec or manifest, invalid configuration
  3  Temporal or the service is unreachable
  4  unknown pipeline or batch id
  5  the service lacks a local-service extension the command needs (reelflow orphans: the account ledger)
  6  reelflow doctor: a check failed (each is printed with its fix)

Configuration comes from the environment: every variable is in docs/configuration.md.`;

async function main(argv: string[]): Promise<void> {
  const program = new Command('reelflow')
    .description('Durable media pipelines on Temporal for an asynchronous video-generation service')
    .version(packageVersion(), '-V, --version', 'print the reelflow version')
    .showHelpAfterError()
    .addHelpText('after', EXIT_HELP)
    .exitOverride();
  // argv[2] is the command when the CLI runs as `reelflow <command> …` (no global options exist).
  registerCommands(program, argv[2]);
  try {
    await program.parseAsync(argv);
  } catch (error) {
    if (error instanceof CommanderError) {
      // Commander already printed the message. Help and version are 0; every parse failure
      // (unknown option, missing or invalid argument, invalid option value) is a usage error.
      process.exitCode = error.exitCode === 0 ? EXIT.ok : EXIT.usage;
      return;
    }
    if (error instanceof ConfigError) {
      // Every command and process entry point validates its configuration at start (src/config).
      console.error(`reelflow: configuration error: ${error.message}`);
      process.exitCode = EXIT.usage;
      return;
    }
    if (error instanceof CliError) {
      console.error(`reelflow: ${error.message}`);
      process.exitCode = error.exitCode;
      return;
    }
    console.error(`reelflow: ${error instanceof Error ? error.message : String(error)}`);
    process.exitCode = process.exitCode && process.exitCode !== 0 ? process.exitCode : EXIT.failed;
  }
}

endQuietlyOnClosedOutput();
void main(process.argv);
