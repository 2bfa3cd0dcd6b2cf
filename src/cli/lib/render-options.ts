import { InvalidArgumentError, type Command } from 'commander';
import { RENDER_MODES, type RenderMode } from '../../workers/local-service';

/** The render options of `reelflow service` and `reelflow dev`, as the local service takes them. */
export interface RenderFlags {
  render?: RenderMode;
  stubHoldMs?: number;
  stubFixtures?: string;
}

function renderMode(value: string): RenderMode {
  if (!(RENDER_MODES as readonly string[]).includes(value))
    throw new InvalidArgumentError(`--render must be one of ${RENDER_MODES.join(', ')}, got "${value}"`);
  return value as RenderMode;
}

function holdMs(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || n > 86_400_000)
    throw new InvalidArgumentError(`--stub-hold-ms must be a whole number of ms from 0 to 86400000, got "${value}"`);
  return n;
}

/** Adds `--render <mode>`, `--stub-hold-ms <ms>` and `--stub-fixtures <dir>` to a command. */
export function addRenderFlags(command: Command): Command {
  return command
    .option(
      '--render <mode>',
      `how jobs are rendered: ${RENDER_MODES.join(' or ')} (stub: pre-rendered fixtures, a benchmarking aid; default ffmpeg)`,
      renderMode,
    )
    .option('--stub-hold-ms <ms>', 'with --render stub: how long each job takes, in ms (default 0)', holdMs)
    .option(
      '--stub-fixtures <dir>',
      'with --render stub: where pre-rendered fixtures are kept (default <data-dir>/stub-fixtures)',
    );
}

/** The service options of the given flags (only those that were set). */
export function renderOptions(flags: RenderFlags): {
  render?: RenderMode;
  stubHoldMs?: number;
  stubFixturesDir?: string;
} {
  return {
    ...(flags.render !== undefined ? { render: flags.render } : {}),
    ...(flags.stubHoldMs !== undefined ? { stubHoldMs: flags.stubHoldMs } : {}),
    ...(flags.stubFixtures !== undefined ? { stubFixturesDir: flags.stubFixtures } : {}),
  };
}
