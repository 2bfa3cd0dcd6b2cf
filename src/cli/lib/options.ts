import { InvalidArgumentError, type Command } from 'commander';
import { parsePort, type Flags, type VariableName } from '../../config';

/** Commander parser of a `--…-port` flag: the one port rule of src/config, reported as a usage error. */
export function portOption(text: string): number {
  try {
    return parsePort(text);
  } catch (error) {
    throw new InvalidArgumentError(error instanceof Error ? error.message : String(error));
  }
}

/**
 * The flags a command was given that stand for variables, for src/config (which validates them by the
 * variable's rule and names the flag in its errors). `map`: option key → [variable, flag as spelled].
 * Unset options are left out, so the variable (or its default) applies; `true` switches become "true",
 * repeated options are joined with commas.
 */
export function variableFlags<O extends object>(
  options: O,
  map: { [K in keyof O]?: readonly [VariableName, string] },
): Flags {
  const flags: Flags = {};
  for (const [key, entry] of Object.entries(map) as [keyof O & string, readonly [VariableName, string] | undefined][]) {
    const value = options[key];
    if (!entry || value === undefined || value === false) continue;
    flags[entry[0]] = { flag: entry[1], value: Array.isArray(value) ? value.join(',') : String(value) };
  }
  return flags;
}

/** `--detach` and `--json` of the commands that start a pipeline run and follow it (`run`, `resume`). */
export function followFlags(command: Command, detached: string): Command {
  return command
    .option('--detach', `only start ${detached}`, false)
    .option('--json', 'print the final summary (or, with --detach, the ids) as JSON on stdout', false);
}
