import { spawnSync } from 'node:child_process';
import { InvalidArgumentError, type Command } from 'commander';
import { loadWorkerDeployment, parseDurationSeconds } from '../../config';
import { promote, waitUntilNothingPinned } from '../../workers/rolling-upgrade';
import { currentVersion, versionKey } from '../../workers/worker-deployment';
import { cliEnv, withTemporal } from '../lib/context';
import { CliError } from '../lib/errors';
import { EXIT } from '../lib/exit';
import { say } from '../lib/output';

interface DeployOptions {
  to: string;
  from?: string;
  ramp?: number;
  rampFor: number;
  drainTimeout?: number;
  poll: number;
  retire?: string;
}

function durationMs(text: string): number {
  const seconds = parseDurationSeconds(text);
  if (seconds === null || seconds < 1) throw new InvalidArgumentError('must be a duration such as 30s, 5m or 24h');
  return seconds * 1000;
}

function percent(text: string): number {
  const value = Number(text);
  if (!Number.isInteger(value) || value < 1 || value > 99) throw new InvalidArgumentError('must be 1 to 99');
  return value;
}

/** Runs the retire command through the shell (e.g. `docker compose stop worker-a`); exit code 0 or a CliError. */
function retire(command: string): void {
  say(`retiring: ${command}`);
  const result = spawnSync(command, { shell: true, stdio: 'inherit' });
  if (result.status !== 0)
    throw new CliError(`the retire command exited ${result.status ?? result.signal}: ${command}`, EXIT.failed);
}

/**
 * `reelflow deploy --to <build-id>`: the rolling upgrade of docs/safe-deploys.md, scripted. The new
 * version's workers must be polling already (started beside the old ones with REELFLOW_BUILD_ID and
 * REELFLOW_SET_CURRENT_VERSION=false). Ramps if asked, makes it current, waits until nothing is
 * pinned to the old version, then runs `--retire` (the command that stops the old workers).
 */
export function registerDeployCommand(program: Command): void {
  program
    .command('deploy')
    .description(
      'Rolling upgrade: make build --to current (after an optional ramp), wait until no open execution is pinned to the previous current build, then run --retire (exit 0; 1 when the drain timed out: the old workers stay)',
    )
    .requiredOption(
      '--to <build-id>',
      'the new build id, whose workers already poll (REELFLOW_DEPLOYMENT_NAME names the deployment)',
    )
    .option('--from <build-id>', 'the build to retire (default: the current one before the upgrade)')
    .option('--ramp <percent>', 'first send this share of new executions to --to', percent)
    .option('--ramp-for <duration>', 'how long to ramp before making --to current', durationMs, 60_000)
    .option(
      '--drain-timeout <duration>',
      'give up waiting for the old build to drain after this long (default: wait)',
      durationMs,
    )
    .option('--poll <duration>', 'between two counts of pinned executions', durationMs, 10_000)
    .option('--retire <command>', 'shell command that stops the old workers once nothing is pinned to them')
    .action(async (options: DeployOptions) => {
      const { deploymentName } = loadWorkerDeployment();
      const env = cliEnv();
      await withTemporal(env, async ({ client }) => {
        const to = { deploymentName, buildId: options.to };
        const before = await currentVersion(client, deploymentName);
        const from = options.from ? { deploymentName, buildId: options.from } : before;
        say(
          `deployment ${deploymentName}: current ${before ? versionKey(before) : 'none'}, upgrading to ${versionKey(to)}`,
        );
        await promote(client, to, {
          ...(options.ramp !== undefined ? { rampPercent: options.ramp, rampMs: options.rampFor } : {}),
          log: (line) => say(line),
        });
        if (!from || from.buildId === to.buildId) {
          say('no previous build to retire');
          return;
        }
        const drained = await waitUntilNothingPinned(client, from, {
          pollMs: options.poll,
          ...(options.drainTimeout !== undefined ? { timeoutMs: options.drainTimeout } : {}),
          log: (line) => say(line),
        });
        if (!drained)
          throw new CliError(
            `${versionKey(from)} still has pinned executions: its workers must keep running`,
            EXIT.failed,
          );
        say(`nothing is pinned to ${versionKey(from)}: its workers can stop`);
        if (options.retire) retire(options.retire);
      });
    });
}
