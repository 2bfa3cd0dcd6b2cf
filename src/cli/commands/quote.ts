import type { Command } from 'commander';
import { cliEnvWithService, cliMediaStore, uriRulesFor } from '../lib/context';
import { createMediaResolver } from '../../media/resolve-input';
import { printJson, say } from '../lib/output';
import { quotePipeline } from '../lib/quote';
import { cliServiceClient, serviceCliError } from '../lib/service-client';
import { loadSpecFile } from '../lib/spec-files';

/** `reelflow quote <spec.json>`: price of every step and the total, before spending anything. */
export function registerQuoteCommand(program: Command): void {
  program
    .command('quote')
    .description(
      'Price every step of a spec and the total via the service quote endpoint, spending nothing. Steps that read an earlier output are ' +
        'priced from the price table (long-form) or estimated from the earlier clip length (local service only), else marked unknown',
    )
    .argument('<spec>', 'pipeline spec (JSON)')
    .option('--json', 'print the quote as JSON', false)
    .action(async (specFile: string, options: { json: boolean }) => {
      const env = cliEnvWithService();
      const { service } = env;
      const media = cliMediaStore(env);
      const spec = await loadSpecFile(specFile, uriRulesFor(env), { store: media.store });
      const resolver = createMediaResolver({ ...media, serviceOrigin: service.url });
      const client = cliServiceClient(service);
      try {
        const quote = await quotePipeline(
          spec,
          client,
          service.url,
          async (input) => (await resolver.resolve(input)).input,
        ).catch((error: unknown) => {
          throw serviceCliError(error, service, 'the quote');
        });
        if (options.json) {
          printJson(quote);
          return;
        }
        say(`quote for ${spec.name} (${service.url}):`);
        for (const s of quote.steps) {
          const credits = s.credits === null ? 'unknown' : `${s.credits}`;
          const basis = s.basis === 'estimate' ? '~ estimate' : s.basis;
          say(
            `  ${s.step.padEnd(12)} ${s.model.padEnd(48)} ${credits.padStart(8)} credits  (${basis}${s.note ? `; ${s.note}` : ''})`,
          );
        }
        const qualifier = quote.incomplete ? ' + unknown steps' : quote.exact ? '' : ' (includes estimates)';
        say(
          `  total: ${quote.total} credits${qualifier}${quote.budgetCredits !== null ? `; budget ${quote.budgetCredits}` : ''}`,
        );
      } finally {
        await client.close();
      }
    });
}
