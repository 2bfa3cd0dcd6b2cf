import type { Command } from 'commander';
import { runUntilSignal } from '../../workers/run-until-signal';
import { loadMediaSettings, loadStackSettings } from '../../config';
import { portOption as port, variableFlags } from '../lib/options';
import { startLocalStack, type LocalStack } from '../../stack/local-stack';
import { redact, type StackPorts } from '../../stack/stack-state';
import { addRenderFlags, renderOptions, type RenderFlags } from '../lib/render-options';

interface DevOptions {
  stateDir?: string;
  temporalPort?: number;
  uiPort?: number;
  servicePort?: number;
  bridgePort?: number;
  autoPorts?: boolean;
  render?: RenderFlags['render'];
  stubHoldMs?: number;
}

/** The lines a person needs: every address and what to export in another terminal (never the key itself). */
export function describeStack(stack: LocalStack): string[] {
  return [
    `  Temporal gRPC  ${stack.temporalAddress} (namespace ${stack.namespace})`,
    `  Temporal UI    ${stack.temporalUiUrl}`,
    `  service        ${stack.serviceUrl}`,
    `  bridge         ${stack.bridgeUrl}`,
    `  worker         task queue ${stack.taskQueue}`,
    `  API key        ${redact(stack.apiKey)} in ${stack.paths.apiKey}`,
    '',
    'In another terminal:',
    `  export TEMPORAL_ADDRESS=${stack.temporalAddress}`,
    `  export TEMPORAL_NAMESPACE=${stack.namespace}`,
    `  export REELFLOW_TASK_QUEUE=${stack.taskQueue}`,
    `  export REELFLOW_SERVICE_URL=${stack.serviceUrl}`,
    `  export REELFLOW_API_KEY="$(cat ${stack.paths.apiKey})"`,
    '  export REELFLOW_SERVICE_IDEMPOTENCY=honoured',
    `  export REELFLOW_STATE_DIR=${stack.paths.root}`,
  ];
}

/** Runs the stack until SIGINT/SIGTERM (or until its worker stops), then stops it cleanly. */
export async function runDev(options: DevOptions): Promise<void> {
  const out = (line: string) => process.stdout.write(`${line}\n`);
  const ports: Partial<StackPorts> = {
    ...(options.temporalPort !== undefined ? { temporal: options.temporalPort } : {}),
    ...(options.uiPort !== undefined ? { temporalUi: options.uiPort } : {}),
    ...(options.servicePort !== undefined ? { service: options.servicePort } : {}),
    ...(options.bridgePort !== undefined ? { bridge: options.bridgePort } : {}),
  };
  // --state-dir and --auto-ports stand for REELFLOW_STATE_DIR and REELFLOW_DEV_PORTS=auto.
  const settings = loadStackSettings(
    undefined,
    variableFlags(
      { stateDir: options.stateDir, autoPorts: options.autoPorts ? 'auto' : undefined },
      { stateDir: ['REELFLOW_STATE_DIR', '--state-dir'], autoPorts: ['REELFLOW_DEV_PORTS', '--auto-ports'] },
    ),
  );
  // Read at boot, before anything starts: a bad REELFLOW_MEDIA_* stops `reelflow dev` with exit 2.
  const media = loadMediaSettings(undefined, { stateDir: settings.stateDir });
  const stack = await startLocalStack({
    stateDir: settings.stateDir,
    ports,
    autoPorts: settings.autoPorts,
    media,
    ...(settings.webhookUrl !== undefined ? { webhookUrl: settings.webhookUrl } : {}),
    log: (line) => out(line),
    ...renderOptions(options),
  });
  if (stack.reusedFrom) {
    out(`a \`reelflow dev\` already runs this stack (pid ${stack.reusedFrom.pid}); nothing to start:`);
    for (const line of describeStack(stack)) out(line);
    return;
  }
  out('reelflow dev: the local stack is up');
  for (const line of describeStack(stack)) out(line);
  out('');
  out('ready — Ctrl-C stops everything (state is kept)');
  const reason = await runUntilSignal({
    until: stack.workerDone.then(() => 'the worker stopped'),
    stop: async () => {
      out('reelflow dev: stopping…');
      await stack.stop();
    },
  });
  out(`reelflow dev: stopped (${reason.startsWith('failed') ? `the worker ${reason}` : reason})`);
  if (!reason.startsWith('SIG')) process.exitCode = 1;
}

/** The port flags of `reelflow dev`: flag, what listens there, the port used when none is stored. */
const DEV_PORT_FLAGS = [
  ['--temporal-port', 'Temporal gRPC port', 7233],
  ['--ui-port', 'Temporal UI port', 8233],
  ['--service-port', 'local service port', 8710],
  ['--bridge-port', 'webhook bridge port', 8787],
] as const;

/** `reelflow dev`: the whole local stack in the foreground. */
export function registerDevCommand(program: Command): void {
  const command = program
    .command('dev')
    .description(
      'Run the local stack in the foreground until Ctrl-C: Temporal dev server + UI, local service, webhook bridge, worker (state in REELFLOW_STATE_DIR or .reelflow)',
    )
    .option('--state-dir <dir>', 'persistent state (default REELFLOW_STATE_DIR or .reelflow)');
  for (const [flag, what, fallback] of DEV_PORT_FLAGS)
    command.option(`${flag} <port>`, `${what} (default: stored, else ${fallback})`, port);
  command.option('--auto-ports', 'first start of a state directory: pick free ports (also REELFLOW_DEV_PORTS=auto)');
  addRenderFlags(command)
    .addHelpText(
      'after',
      '\nPorts chosen on the first start are stored in <state-dir>/stack.json and reused, so output URLs and the\nregistered webhook URL stay valid. A second `reelflow dev` or `npm run demo` on the same state directory\nreuses the running stack.',
    )
    .action(async (options: DevOptions) => {
      await runDev(options);
    });
}
