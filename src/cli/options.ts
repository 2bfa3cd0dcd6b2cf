import { InvalidArgumentError, type Command } from 'commander';
import { parsePort } from '../config/port';

/** Commander parser of a `--…-port` flag: the one port rule of src/config, reported as a usage error. */
export function portOption(text: string): number {
  try {
    return parsePort(text);
  } catch (error) {
    throw new InvalidArgumentError(error instanceof Error ? error.message : String(error));
  }
}

/** `--detach` and `--json` of the commands that start a pipeline run and follow it (`run`, `resume`). */
export function followFlags(command: Command, detached: string): Command {
  return command
    .option('--detach', `only start ${detached}`, false)
    .option('--json', 'print the final summary (or, with --detach, the ids) as JSON on stdout', false);
}
