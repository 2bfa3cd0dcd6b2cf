import { InvalidArgumentError, Option, type Command } from 'commander';
import { startLocalService } from '../../service';
import { announceGeneratedKey } from '../../service/generated-key';

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

/** Runs a local service in the foreground until SIGINT or SIGTERM. */
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
  log: boolean;
}): Promise<void> {
  const service = await startLocalService({
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
    logger: options.log ? { level: 'info' } : false,
  });
  process.stdout.write(`reelflow service listening on ${service.url}\n`);
  process.stdout.write(`data directory: ${options.dataDir}; credits: ${service.balance()}\n`);
  if (options.allowPrivateWebhooks) {
    process.stdout.write('warning: --allow-private-webhooks: private, loopback and plain-http webhook and input URLs are allowed (local use only)\n');
  }
  if (service.generatedApiKey) {
    // In full only on the terminal of the person who started the service; masked when stdout is a log.
    process.stdout.write(`${announceGeneratedKey(service.generatedApiKey, options.dataDir, process.stdout.isTTY === true)}\n`);
  }
  await new Promise<void>((resolve) => {
    const stop = (signal: NodeJS.Signals) => {
      process.stdout.write(`reelflow service: ${signal}, stopping\n`);
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve();
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
  await service.close();
  process.stdout.write('reelflow service stopped\n');
}

/** `reelflow service`: the local implementation of the service API. */
export function registerServiceCommand(program: Command): void {
  program
    .command('service')
    .description('Run the local service (queue, credits, ffmpeg models, signed webhooks) in the foreground')
    .requiredOption('--data-dir <dir>', 'directory for durable state and output files')
    .option('--port <port>', 'port to listen on (0 picks a free one)', integer('--port', 0, 65535), 0)
    .option('--host <host>', 'address to bind', '127.0.0.1')
    .option('--api-key <key>', 'API key to accept (repeatable); stored hashed', collect, [])
    .addOption(
      new Option('--admin-key <key>', 'admin credential: enables the admin routes (fault injection, credit grants), which accept it and no API key').env(
        'REELFLOW_SERVICE_ADMIN_KEY',
      ),
    )
    .option('--credits <n>', 'credit balance of a fresh data directory (default 100000)', integer('--credits', 0, Number.MAX_SAFE_INTEGER))
    .option('--allow-private-webhooks', 'allow private/loopback/http webhook and input URLs (local use only)', false)
    .option('--public-url <url>', 'base URL clients see (default http://<host>:<port>)')
    .option('--concurrency <n>', 'jobs running at once per model (default 2)', integer('--concurrency', 1, 64))
    .option('--emit-failure-events', 'also send generation.failed and generation.cancelled events')
    .option('--log', 'log requests and webhook attempts as JSON (keys and secrets are never logged)', false)
    .action(async (options: Parameters<typeof runServiceForeground>[0]) => {
      await runServiceForeground(options);
    });
}
