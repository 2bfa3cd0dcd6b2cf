import { Option, type Command } from 'commander';
import { runService } from '../../workers/local-service';
import { portOption, variableFlags } from '../lib/options';
import { addRenderFlags, type RenderFlags } from '../lib/render-options';

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

/** Options of `reelflow service`; each stands for a REELFLOW_SERVICE_* variable (src/config/local-service.ts validates both). */
interface ServiceFlags extends RenderFlags {
  dataDir?: string;
  port?: number;
  host?: string;
  apiKey: string[];
  adminKey?: string;
  credits?: string;
  allowPrivateWebhooks?: boolean;
  publicUrl?: string;
  concurrency?: string;
  emitFailureEvents?: boolean;
  quotesPerMinute?: string;
  log?: boolean;
}

/** `reelflow service`: the local implementation of the service API, through its one process entry point (src/workers/local-service.ts). */
export function registerServiceCommand(program: Command): void {
  const command = program
    .command('service')
    .description(
      'Run the local service (queue, credits, ffmpeg models, signed webhooks) in the foreground until SIGINT/SIGTERM; each flag stands for a REELFLOW_SERVICE_* variable (docs/configuration.md)',
    )
    .option('--data-dir <dir>', 'directory for durable state and output files (required, or REELFLOW_SERVICE_DATA_DIR)')
    .option('--port <port>', 'port to listen on (0 picks a free one; default 0)', portOption)
    .option('--host <host>', 'address to bind (default 127.0.0.1)')
    .option('--api-key <key>', 'API key to accept (repeatable); stored hashed', collect, [])
    .addOption(
      new Option(
        '--admin-key <key>',
        'admin credential: enables the admin routes (fault injection, credit grants, job clocks), which accept it and no API key (or REELFLOW_SERVICE_ADMIN_KEY)',
      ),
    )
    .option('--credits <n>', 'credit balance of a fresh data directory (default 100000)')
    .option('--allow-private-webhooks', 'allow private/loopback/http webhook and input URLs (local use only)')
    .option('--public-url <url>', 'base URL clients see (default http://<host>:<port>)')
    .option('--concurrency <n>', 'jobs running at once per model, 1-64 (default 2)')
    .option('--emit-failure-events', 'also send generation.failed and generation.cancelled events')
    .option(
      '--quotes-per-minute <n>',
      'quotes each API key may make per minute, also its burst (default 120, burst 30)',
    )
    .option('--log', 'log requests and webhook attempts as JSON (keys and secrets are never logged)');
  addRenderFlags(command).action(async (options: ServiceFlags) => {
    const flags = variableFlags(options, {
      dataDir: ['REELFLOW_SERVICE_DATA_DIR', '--data-dir'],
      port: ['REELFLOW_SERVICE_PORT', '--port'],
      host: ['REELFLOW_SERVICE_HOST', '--host'],
      apiKey: ['REELFLOW_SERVICE_API_KEYS', '--api-key'],
      adminKey: ['REELFLOW_SERVICE_ADMIN_KEY', '--admin-key'],
      credits: ['REELFLOW_SERVICE_CREDITS', '--credits'],
      allowPrivateWebhooks: ['REELFLOW_SERVICE_ALLOW_PRIVATE_WEBHOOKS', '--allow-private-webhooks'],
      publicUrl: ['REELFLOW_SERVICE_PUBLIC_URL', '--public-url'],
      concurrency: ['REELFLOW_SERVICE_CONCURRENCY', '--concurrency'],
      emitFailureEvents: ['REELFLOW_SERVICE_EMIT_FAILURE_EVENTS', '--emit-failure-events'],
      quotesPerMinute: ['REELFLOW_SERVICE_QUOTES_PER_MINUTE', '--quotes-per-minute'],
      log: ['REELFLOW_SERVICE_LOG', '--log'],
      render: ['REELFLOW_SERVICE_RENDER', '--render'],
      stubHoldMs: ['REELFLOW_SERVICE_STUB_HOLD_MS', '--stub-hold-ms'],
      stubFixtures: ['REELFLOW_SERVICE_STUB_FIXTURES', '--stub-fixtures'],
    });
    await runService(flags, (line) => process.stdout.write(`${line}\n`));
    // Keep running: the listener holds the event loop open until a signal stops it.
  });
}
