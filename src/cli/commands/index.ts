import type { Command } from 'commander';
import { registerBatchCommand } from './batch';
import { registerBridgeCommand } from './bridge';
import { registerBudgetCommand } from './budget';
import { registerCancelCommand } from './cancel';
import { registerDevCommand } from './dev';
import { registerMediaCommand } from './media';
import { registerOrphansCommand } from './orphans';
import { registerOutputsCommand } from './outputs';
import { registerQuoteCommand } from './quote';
import { registerReportCommand } from './report';
import { registerResumeCommand } from './resume';
import { registerRetryCommand } from './retry';
import { registerRunCommand } from './run';
import { registerServiceCommand } from './service';
import { registerStatusCommand } from './status';
import { registerWorkerCommand } from './worker';

/** Each command lives in its own file and adds itself to the program here. */
export function registerCommands(program: Command): void {
  void program;
  registerBridgeCommand(program);
  registerWorkerCommand(program);
  registerServiceCommand(program);
  registerRunCommand(program);
  registerBatchCommand(program);
  registerStatusCommand(program);
  registerCancelCommand(program);
  registerQuoteCommand(program);
  registerOutputsCommand(program);
  registerMediaCommand(program);
  registerOrphansCommand(program);
  registerResumeCommand(program);
  registerReportCommand(program);
  registerBudgetCommand(program);
  registerRetryCommand(program);
  registerDevCommand(program);
}
