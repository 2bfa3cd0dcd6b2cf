import { InvalidArgumentError } from 'commander';
import { parsePort } from '../config/port';

/** Commander parser of a `--…-port` flag: the one port rule of src/config, reported as a usage error. */
export function portOption(text: string): number {
  try {
    return parsePort(text);
  } catch (error) {
    throw new InvalidArgumentError(error instanceof Error ? error.message : String(error));
  }
}
