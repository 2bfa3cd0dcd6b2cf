import type { Command } from 'commander';
import { registerBridgeCommand } from './bridge';
import { registerServiceCommand } from './service';

/** Each command lives in its own file and adds itself to the program here. */
export function registerCommands(program: Command): void {
  void program;
  registerBridgeCommand(program);
  registerServiceCommand(program);
}
