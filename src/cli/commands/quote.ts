import type { Command } from 'commander';
import { cliEnvWithService, cliMediaStore, uriRulesFor } from '../lib/context';
import { createMediaResolver } from '../../media/resolve-input';
import { printJson, say } from '../lib/output';
import * as path from 'node:path';
import { CliError } from '../lib/errors';
import { EXIT } from '../lib/exit';
import { loadManifest } from '../lib/manifest';
import { quoteBatch, quotePipeline, type BatchQuote } from '../lib/quote';
import { cliServiceClient, serviceCliError } from '../lib/service-client';
import { loadSpecFile } from '../lib/spec-files';

/** `reelflow quote <spec.json>` / `reelflow quote --batch <manifest>`: the price before spending anything. */
export function registerQuoteCommand(program: Command): void {
  program
    .command('quote')
    .description(
      'Price every step of a spec and the total via the service quote endpoint, spending nothing. Steps that read an earlier output are ' +
        'priced from the price table (long-form) or estimated from the earlier clip length (local service only), else marked unknown. ' +
        'With --batch, total a whole batch manifest: exact figures and estimates counted apart, identical steps quoted once',
    )
    .argument('[spec]', 'pipeline spec (JSON)')
    .option(
      '--batch <manifest>',
      'price every item of a batch manifest (as `reelflow batch` reads it) instead of one spec',
    )
    .option('--json', 'print the quote as JSON', false)
    .action(async (specFile: string | undefined, options: { json: boolean; batch?: string }) => {
      if ((specFile === undefined) === (options.batch === undefined))
        throw new CliError('quote: give either a spec file or --batch <manifest>, not both', EXIT.usage);
      const env = cliEnvWithService();
      const { service } = env;
      const media = cliMediaStore(env);
      const resolver = createMediaResolver({ ...media, serviceOrigin: service.url });
      const resolveMedia = async (input: Record<string, unknown>) => (await resolver.resolve(input)).input;
      const client = cliServiceClient(service);
      try {
        if (options.batch !== undefined) {
          const manifest = await loadManifest(options.batch, uriRulesFor(env), { store: media.store });
          const name = manifest.name ?? path.basename(options.batch).replace(/\.[^.]+$/, '');
          const quote = await quoteBatch(name, manifest.items, client, service.url, resolveMedia).catch(
            (error: unknown) => {
              throw serviceCliError(error, service, 'the quote');
            },
          );
          if (options.json) printJson(quote);
          else for (const line of batchQuoteLines(quote, service.url)) say(line);
          return;
        }
        const spec = await loadSpecFile(specFile as string, uriRulesFor(env), { store: media.store });
        const quote = await quotePipeline(spec, client, service.url, resolveMedia).catch((error: unknown) => {
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
            `  ${s.step.padEnd(12)} ${s.model.padEnd(48)} ${credits.padStart(8)} credits  (${basis}${s.items ? `; ${s.items} items` : ''}${s.note ? `; ${s.note}` : ''})`,
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

/** The text of a batch quote: totals saying which part is exact, then the items' figures by step. */
export function batchQuoteLines(quote: BatchQuote, serviceUrl: string): string[] {
  const lines = [`quote for batch ${quote.name} (${quote.items.length} items, ${serviceUrl}):`];
  // Steps alike across items (same step, model and basis) are summed on one line.
  const rows = new Map<string, { credits: number; count: number; unknown: number }>();
  for (const item of quote.items) {
    for (const s of item.steps) {
      const key = `${s.step.padEnd(12)} ${s.model.padEnd(48)} ${s.basis === 'estimate' ? '~ estimate' : s.basis}`;
      const row = rows.get(key) ?? { credits: 0, count: 0, unknown: 0 };
      row.count += 1;
      if (s.credits === null) row.unknown += 1;
      else row.credits += s.credits;
      rows.set(key, row);
    }
  }
  for (const [key, row] of rows) {
    const figure = row.unknown === row.count ? 'unknown' : `${row.credits}`;
    lines.push(`  ${key.padEnd(80)} ${figure.padStart(10)} credits over ${row.count} item(s)`);
  }
  lines.push(`  exact: ${quote.exactCredits} credits (quote endpoint or price table: what the service will charge)`);
  if (quote.estimatedCredits > 0)
    lines.push(
      `  estimated: ${quote.estimatedCredits} credits (clips that do not exist yet, at the local service's rates)`,
    );
  if (quote.unknownSteps > 0)
    lines.push(`  unknown: ${quote.unknownSteps} step(s) cannot be priced before their clip exists`);
  const qualifier =
    quote.unknownSteps > 0 ? ' + unknown steps' : quote.estimatedCredits > 0 ? ' (includes estimates)' : '';
  lines.push(`  total: ${quote.total} credits${qualifier}; ${quote.quoteCalls} quote call(s)`);
  return lines;
}
