import type { Command } from 'commander';

type Register = (program: Command) => void;

/* eslint-disable @typescript-eslint/no-require-imports -- loaded on demand, see registerCommands */
/**
 * Each command lives in its own file and adds itself to the program; in the order `reelflow --help`
 * lists them. Loaded on demand: the worker, the bridge and the local stack pull in the Temporal worker,
 * Fastify and the AWS SDK (~1 s of start-up on this machine) that `reelflow run` never needs.
 */
const COMMANDS: Record<string, () => Register> = {
  bridge: () => (require('./bridge') as typeof import('./bridge')).registerBridgeCommand,
  worker: () => (require('./worker') as typeof import('./worker')).registerWorkerCommand,
  service: () => (require('./service') as typeof import('./service')).registerServiceCommand,
  run: () => (require('./run') as typeof import('./run')).registerRunCommand,
  batch: () => (require('./batch') as typeof import('./batch')).registerBatchCommand,
  status: () => (require('./status') as typeof import('./status')).registerStatusCommand,
  cancel: () => (require('./cancel') as typeof import('./cancel')).registerCancelCommand,
  quote: () => (require('./quote') as typeof import('./quote')).registerQuoteCommand,
  outputs: () => (require('./outputs') as typeof import('./outputs')).registerOutputsCommand,
  media: () => (require('./media') as typeof import('./media')).registerMediaCommand,
  'route-store': () => (require('./route-store') as typeof import('./route-store')).registerRouteStoreCommand,
  orphans: () => (require('./orphans') as typeof import('./orphans')).registerOrphansCommand,
  resume: () => (require('./resume') as typeof import('./resume')).registerResumeCommand,
  report: () => (require('./report') as typeof import('./report')).registerReportCommand,
  budget: () => (require('./budget') as typeof import('./budget')).registerBudgetCommand,
  retry: () => (require('./retry') as typeof import('./retry')).registerRetryCommand,
  approve: () => (require('./approve') as typeof import('./approve')).registerApproveCommand,
  reject: () => (require('./approve') as typeof import('./approve')).registerRejectCommand,
  dev: () => (require('./dev') as typeof import('./dev')).registerDevCommand,
  demo: () => (require('./demo') as typeof import('./demo')).registerDemoCommand,
  deploy: () => (require('./deploy') as typeof import('./deploy')).registerDeployCommand,
  doctor: () => (require('./doctor') as typeof import('./doctor')).registerDoctorCommand,
};
/* eslint-enable @typescript-eslint/no-require-imports */

/** The command names, in help order. */
export const COMMAND_NAMES = Object.keys(COMMANDS);

/**
 * Adds the commands to the program: only `invoked` when it names one (its file and what it imports are
 * all that load), every command otherwise (help, an unknown or missing command).
 */
export function registerCommands(program: Command, invoked?: string): void {
  const names = invoked !== undefined && invoked in COMMANDS ? [invoked] : COMMAND_NAMES;
  for (const name of names) COMMANDS[name]!()(program);
}
