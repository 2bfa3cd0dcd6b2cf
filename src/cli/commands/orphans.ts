import type { Command } from 'commander';
import { cliEnvWithService, withTemporal } from '../lib/context';
import { CliError } from '../lib/errors';
import { EXIT } from '../lib/exit';
import { findOrphans, listPipelineClaims, orphanLines, parseSince } from '../lib/orphans';
import { printJson, say } from '../lib/output';
import { cliServiceClient, serviceCliError } from '../lib/service-client';
import { SEARCH_ATTRIBUTES } from '../../workflows/definitions';

/**
 * What a missing ledger means and what to do instead: the account ledger is the local service's
 * extension, and the request ids pipelines recorded are searchable in Temporal.
 */
export function noLedgerMessage(serviceUrl: string): string {
  return [
    `reelflow orphans: the service at ${serviceUrl} has no account ledger (GET /v1/account/ledger answered 404/405).`,
    "The ledger is an extension of reelflow's local service, not part of the service's API, so charged jobs that no pipeline claims cannot be found from here.",
    'Listed above is what the pipelines recorded themselves: the jobs they abandoned and the submits still ambiguous.',
    "Instead: take the request ids your account was charged for from the provider's billing records, and look each up with",
    `  temporal workflow list --query "${SEARCH_ATTRIBUTES.requestIds.name} = '<request id>'"`,
    'a request id no pipeline lists is an orphan (docs/going-live.md, "What only the local service offers").',
  ].join('\n');
}

/**
 * `reelflow orphans [--since 24h] [--json]`: charged jobs no pipeline claims (service ledger against
 * the request ids pipelines recorded), jobs pipelines abandoned, and unresolved ambiguous submits.
 * Exit 0 when there are none, 1 when there are some (scripts can alert on it), 5 when the service has
 * no account ledger (then only what pipelines recorded is listed, and the message says what to do instead).
 */
export function registerOrphansCommand(program: Command): void {
  program
    .command('orphans')
    .description(
      'List charged jobs no pipeline claims, with state, credits and outputs (exit 0 none, 1 some, 3 unreachable, 5 the service has no ledger)',
    )
    .option('--since <duration>', 'how far back to read the ledger: 30m, 24h, 7d', '24h')
    .option('--json', 'print the report as JSON', false)
    .action(async (options: { since: string; json: boolean }) => {
      const sinceMs = parseSince(options.since);
      if (sinceMs === null)
        throw new CliError(
          `--since: must be a duration such as 30m, 24h or 7d (got ${JSON.stringify(options.since)})`,
          EXIT.usage,
        );
      const env = cliEnvWithService();
      const since = new Date(Date.now() - sinceMs);
      const service = cliServiceClient(env.service);
      try {
        const report = await withTemporal(env, async ({ client }) => {
          const claims = await listPipelineClaims(client, since);
          try {
            return await findOrphans(service, claims, since);
          } catch (error) {
            throw serviceCliError(error, env.service, 'reading the account ledger');
          }
        });
        if (options.json) printJson(report);
        else say(orphanLines(report).join('\n'));
        if (!report.ledger_available) {
          process.stderr.write(`${noLedgerMessage(env.service.url)}\n`);
          process.exitCode = EXIT.extensionMissing;
        } else if (report.orphans.length > 0 || report.ambiguous.length > 0) process.exitCode = EXIT.failed;
      } finally {
        await service.close();
      }
    });
}
