import { InvalidArgumentError, Option, type Command } from 'commander';
import { runUntilSignal } from '../../workers/run-until-signal';
import { startServiceProcess } from '../../workers/service';
import { portOption } from '../options';
import { addRenderFlags, renderOptions, type RenderFlags } from '../render-options';

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

function integer(name: string, min: number, max: number) {
  return (value: string): number => {
    const n = Number(value);
    if (!Number.isInteger(n) || n < min || n > max) throw new InvalidArgumentError(`${name} must be an integer from ${min} to ${max}, got "${value}"`);
    return n;
  };
}

/** Runs a local service in the foreground until SIGINT or SIGTERM (the service process's own entry point). */
export async function runServiceForeground(options: {
  port: number;
  host: string;
  dataDir: string;
  apiKey: string[];
  adminKey?: string;
  credits?: number;
  allowPrivateWebhooks: boolean;
  publicUrl?: string;
  concurrency?: number;
  emitFailureEvents?: boolean;
  quotesPerMinute?: number;
  log: boolean;
} & RenderFlags): Promise<void> {
  const write = (line: string) => process.stdout.write(`${line}\n`);
  const service = await startServiceProcess(
    {
      port: options.port,
      host: options.host,
      dataDir: options.dataDir,
      apiKeys: options.apiKey,
      ...(options.adminKey !== undefined ? { adminKey: options.adminKey } : {}),
      ...(options.credits !== undefined ? { credits: options.credits } : {}),
      allowPrivateWebhooks: options.allowPrivateWebhooks,
      ...(options.publicUrl ? { publicUrl: options.publicUrl } : {}),
      ...(options.concurrency !== undefined ? { concurrencyPerModel: options.concurrency } : {}),
      ...(options.emitFailureEvents !== undefined ? { emitFailureEvents: options.emitFailureEvents } : {}),
      ...(options.quotesPerMinute !== undefined ? { quoteLimits: { perMinute: options.quotesPerMinute, burst: options.quotesPerMinute } } : {}),
      logger: options.log ? { level: 'info' } : false,
      ...renderOptions(options),
    },
    write,
  );
  await runUntilSignal({
    stop: async () => {
      write('reelflow service: stopping');
      await service.close();
    },
  });
  write('reelflow service stopped');
}

/** `reelflow service`: the local implementation of the service API. */
export function registerServiceCommand(program: Command): void {
  const command = program
    .command('service')
    .description('Run the local service (queue, credits, ffmpeg models, signed webhooks) in the foreground')
    .requiredOption('--data-dir <dir>', 'directory for durable state and output files')
    .option('--port <port>', 'port to listen on (0 picks a free one)', portOption, 0)
    .option('--host <host>', 'address to bind', '127.0.0.1')
    .option('--api-key <key>', 'API key to accept (repeatable); stored hashed', collect, [])
    .addOption(
      new Option('--admin-key <key>', 'admin credential: enables the admin routes (fault injection, credit grants, job clocks), which accept it and no API key').env(
        'REELFLOW_SERVICE_ADMIN_KEY',
      ),
    )
    .option('--credits <n>', 'credit balance of a fresh data directory (default 100000)', integer('--credits', 0, Number.MAX_SAFE_INTEGER))
    .option('--allow-private-webhooks', 'allow private/loopback/http webhook and input URLs (local use only)', false)
    .option('--public-url <url>', 'base URL clients see (default http://<host>:<port>)')
    .option('--concurrency <n>', 'jobs running at once per model (default 2)', integer('--concurrency', 1, 64))
    .option('--emit-failure-events', 'also send generation.failed and generation.cancelled events')
    .option('--quotes-per-minute <n>', 'quotes each API key may make per minute, also its burst (default 120, burst 30)', integer('--quotes-per-minute', 1, 1_000_000))
    .option('--log', 'log requests and webhook attempts as JSON (keys and secrets are never logged)', false);
  addRenderFlags(command).action(async (options: Parameters<typeof runServiceForeground>[0]) => {
    await runServiceForeground(options);
  });
}
