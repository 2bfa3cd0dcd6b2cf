import type { Command } from 'commander';

/** Each command lives in its own file and adds itself to the program here. */
export function registerCommands(program: Command): void {
  void program;
}
