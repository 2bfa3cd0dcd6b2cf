import { InvalidArgumentError, type Command } from 'commander';
import { describeTemporalConnection, loadEnv, loadStackSettings, variableIsSet } from '../../config';
import { openMediaStore } from '../../media/store';
import { processAlive, readRunning, statePaths, type RunningStackRecord } from '../../stack/stack-state';
import { connectTemporal, type CliTemporal } from '../lib/connect';
import {
  checkBridge,
  checkIdempotencyPolicy,
  checkMediaStore,
  checkRouteStore,
  checkSearchAttributes,
  checkService,
  checkTemporal,
  checkWebhookAddress,
  doctorLines,
  readyzUrl,
  routeStoreAddress,
  runCheck,
  tracingLine,
  type CheckResult,
} from '../lib/doctor';
import { EXIT } from '../lib/exit';
import { printJson, say } from '../lib/output';

const DOCTOR_HELP = `
Checks, each within --timeout seconds, each printed with its result and, when it fails, the rule and the fix:
  service             the service answers with REELFLOW_API_KEY (status of an unknown request id: 404 = the key
                      works, 401 = it does not) and which Authorization schemes it takes
  webhook-url         REELFLOW_WEBHOOK_URL obeys the registration rules: https, a public address, port 443 or
                      8443, no credentials (the local stack's own bridge is exempt)
  temporal            Temporal answers with this connection (TEMPORAL_*) and the namespace exists
  search-attributes   the namespace has reelflow's search attributes
  bridge              the bridge answers /readyz (through REELFLOW_WEBHOOK_URL's origin, or the local stack's bridge)
  route-store         REELFLOW_ROUTE_STORE parses as the worker and the bridge parse it, and answers
  media-store         the media store is writable and its signed URLs can be fetched the way the service fetches inputs
  idempotency-policy  REELFLOW_SERVICE_IDEMPOTENCY is set (docs/submit-policy.md)
Then a line says whether tracing is on (OTEL_EXPORTER_OTLP_ENDPOINT) and where spans go, never the export headers.

Exit codes:
  0  every check passes
  2  invalid configuration (a variable's value; the message names it)
  6  at least one check failed or could not run

Run inside a container (\`docker compose exec worker-1 reelflow doctor\`), it checks what that container
runs: the same variables, secrets read from their <NAME>_FILE files included.

docs/going-live.md walks from the local stack to the real service.`;

/** Commander parser of `--timeout`: seconds, 1 to 120. */
function timeoutOption(text: string): number {
  const seconds = Number(text);
  if (!Number.isFinite(seconds) || seconds < 1 || seconds > 120)
    throw new InvalidArgumentError('must be a number of seconds from 1 to 120');
  return seconds;
}

/** The local stack running on REELFLOW_STATE_DIR, when its process lives. */
function runningStack(stateDir: string): RunningStackRecord | null {
  const record = readRunning(statePaths(stateDir));
  return record && processAlive(record.pid) ? record : null;
}

/**
 * `reelflow doctor [--json] [--timeout s]`: checks one configuration (the environment) end to end and
 * prints every check with its result and its fix. Exit 0 only when every check passes, 6 otherwise.
 */
export function registerDoctorCommand(program: Command): void {
  program
    .command('doctor')
    .description('Check this configuration end to end: service key, webhook address, Temporal, bridge, media store')
    .option('--json', 'print the checks as JSON', false)
    .option('--timeout <seconds>', 'time limit of each check', timeoutOption, 10)
    .addHelpText('after', DOCTOR_HELP)
    .action(async (options: { json: boolean; timeout: number }) => {
      const timeoutMs = options.timeout * 1000;
      // A bad value stops here (ConfigError, exit 2): doctor checks a configuration that parses.
      const [env, tracing] = [loadEnv(), tracingLine()];
      const stackSettings = loadStackSettings();
      const stack = runningStack(stackSettings.stateDir);
      // The local service is the stack's own when the configured service is the stack's.
      const ownStack = stack !== null && env.service?.url === stack.serviceUrl ? stack : null;
      const results: CheckResult[] = [];
      const add = (result: CheckResult) => {
        results.push(result);
        if (!options.json) say(doctorLines([result]).slice(0, -1).join('\n'));
      };

      add(
        await runCheck(
          'service',
          'service and API key',
          timeoutMs,
          () => checkService(env.service, timeoutMs),
          'check that REELFLOW_SERVICE_URL is reachable from here',
          env.service?.url,
        ),
      );
      const webhook = await runCheck(
        'webhook-url',
        'public webhook address',
        timeoutMs,
        () => checkWebhookAddress(stackSettings.webhookUrl, ownStack),
        "check the webhook host's DNS",
        stackSettings.webhookUrl,
      );
      add(webhook);

      let temporal: CliTemporal | null = null;
      add(
        await runCheck(
          'temporal',
          'Temporal connection',
          timeoutMs,
          async () => {
            temporal = await connectTemporal(env.temporal);
            return checkTemporal(temporal);
          },
          'check TEMPORAL_ADDRESS, and TEMPORAL_API_KEY or the mTLS certificate and key (docs/production.md)',
          describeTemporalConnection(env.temporal),
        ),
      );
      try {
        const connected = temporal as CliTemporal | null;
        add(
          await runCheck(
            'search-attributes',
            'search attributes',
            timeoutMs,
            async () =>
              connected
                ? checkSearchAttributes(connected)
                : { status: 'skip', detail: 'Temporal is not reachable (see the temporal check)' },
            'check that this identity may list the namespace search attributes',
            env.temporal.address,
          ),
        );
      } finally {
        await (temporal as CliTemporal | null)?.close().catch(() => undefined);
      }

      add(
        await runCheck(
          'bridge',
          'webhook bridge',
          timeoutMs,
          () => checkBridge(stackSettings.webhookUrl, ownStack, webhook, timeoutMs),
          'check that the bridge runs and the TLS front forwards /readyz to it',
          readyzUrl(stackSettings.webhookUrl, ownStack) ?? undefined,
        ),
      );
      add(
        await runCheck(
          'route-store',
          'route store',
          timeoutMs,
          () => checkRouteStore(stackSettings.stateDir, timeoutMs),
          'check that the route store runs and this role may connect',
          routeStoreAddress(stackSettings.stateDir) ?? undefined,
        ),
      );
      add(
        await runCheck(
          'media-store',
          'media store',
          timeoutMs,
          () => checkMediaStore(openMediaStore(env.media), ownStack !== null, timeoutMs),
          'check REELFLOW_MEDIA_STORE and its endpoint',
          env.media.kind === 's3' ? `s3://${env.media.bucket}/${env.media.prefix}` : undefined,
        ),
      );
      add(
        await runCheck(
          'idempotency-policy',
          'idempotency policy',
          timeoutMs,
          async () => checkIdempotencyPolicy(env, variableIsSet('REELFLOW_SERVICE_IDEMPOTENCY')),
          'see docs/submit-policy.md',
        ),
      );

      const ok = results.every((r) => r.status === 'pass');
      if (options.json) printJson({ ok, checks: results, tracing });
      else say(`info  tracing: ${tracing}\n${doctorLines(results).at(-1)!}`);
      process.exitCode = ok ? EXIT.ok : EXIT.checksFailed;
    });
}
