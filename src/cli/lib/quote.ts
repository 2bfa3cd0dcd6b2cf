import {
  localPerSecondPrice,
  modelDefinition,
  type ModelId,
  type ModelInputs,
  type QuoteResponse,
} from '../../contract';
import type { ServiceClient } from '../../client/types';
import { forEachReference } from '../../pipeline-spec/references';
import type { PipelineSpec } from '../../pipeline-spec/spec';

/**
 * Pricing a pipeline before anything is spent. A step whose input is all literal is priced by the
 * service's quote endpoint (exact). A step that reads an earlier step's output cannot be quoted yet:
 * - a model priced by the contract's table (long-form): its price depends only on fields a reference
 *   cannot fill (duration/resolution/speed), so the table gives the exact figure;
 * - per-second models: the clip does not exist yet. Its length is estimated from the earlier step
 *   (a model whose input says its output's length: that; the others keep the clip's length). The figure is marked
 *   as an estimate, and given only for the local service, whose per-second rates reelflow knows
 *   (LOCAL_PER_SECOND_RATES); for any other service the price is unknown until the clip exists.
 */

export type QuoteBasis = 'quote' | 'price-table' | 'estimate' | 'unknown';

export interface StepQuote {
  step: string;
  model: ModelId;
  /** Credits, or null when unknown. */
  credits: number | null;
  basis: QuoteBasis;
  /** Output seconds the figure is based on, when known. */
  seconds: number | null;
  /** The earlier step the input depends on, if any. */
  dependsOn: string | null;
  note?: string;
}

export interface PipelineQuote {
  name: string;
  steps: StepQuote[];
  /** Sum of the known figures (exact and estimated). */
  total: number;
  /** True when every step has an exact price (quote or price table). */
  exact: boolean;
  /** True when some step could not be priced at all. */
  incomplete: boolean;
  budgetCredits: number | null;
}

/** True for a service on this machine (loopback), i.e. the local implementation with known rates. */
export function isLocalServiceUrl(url: string): boolean {
  const host = new URL(url).hostname.replace(/^\[|\]$/g, '');
  return host === 'localhost' || host === '::1' || /^127\./.test(host);
}

/** How a batch quote prices steps the service would be asked about (see quoteBatch). */
export interface QuoteOptions {
  /**
   * Literal steps of table-priced models (long-form) from the contract's price table instead of the
   * quote endpoint (the same figure: the price depends only on duration, resolution and speed).
   */
  longFormByTable?: boolean;
  /** Quote answers by model and input, so identical steps of several items are asked once. */
  cache?: Map<string, Promise<QuoteResponse>>;
}

/** Prices every step of `spec`; see the module comment for what "estimate" and "unknown" mean. */
export async function quotePipeline(
  spec: PipelineSpec,
  client: ServiceClient,
  serviceUrl: string,
  /** Turns media references into URLs or data URIs before the quote call (see src/media/resolve-input.ts). */
  resolveMedia: (input: Record<string, unknown>) => Promise<Record<string, unknown>> = async (input) => input,
  options: QuoteOptions = {},
): Promise<PipelineQuote> {
  const ask = (model: ModelId, input: Record<string, unknown>): Promise<QuoteResponse> => {
    const key = `${model} ${JSON.stringify(input)}`;
    const cached = options.cache?.get(key);
    if (cached) return cached;
    const asked = (async () => client.quote(model, (await resolveMedia(input)) as ModelInputs[typeof model]))();
    options.cache?.set(key, asked);
    return asked;
  };
  const local = isLocalServiceUrl(serviceUrl);
  const seconds = new Map<string, number | null>();
  const steps: StepQuote[] = [];
  for (const step of spec.steps) {
    // A step of no model (an approval gate) costs nothing.
    if (!('model' in step)) continue;
    let dependsOn: string | null = null;
    forEachReference(step.input, (reference) => {
      dependsOn ??= reference.$from;
    });
    const base = { step: step.id, model: step.model, dependsOn };
    const model = modelDefinition(step.model);
    if (dependsOn === null && !(options.longFormByTable && model.price.kind === 'table')) {
      const quote = await ask(step.model, step.input);
      const length = model.outputSeconds(step.input) ?? quote.billed_seconds ?? null;
      seconds.set(step.id, length);
      steps.push({ ...base, credits: quote.credits, basis: 'quote', seconds: length });
    } else if (model.price.kind === 'table') {
      const length = model.outputSeconds(step.input);
      seconds.set(step.id, length);
      steps.push({ ...base, credits: model.price.price(step.input), basis: 'price-table', seconds: length });
    } else {
      // A per-second step with literal input was quoted above: this one reads an earlier output.
      const length = dependsOn === null ? null : (seconds.get(dependsOn) ?? null);
      seconds.set(step.id, length);
      const estimate = length === null ? undefined : localPerSecondPrice(step.model, step.input, length);
      if (local && length !== null && estimate !== undefined) {
        steps.push({
          ...base,
          credits: estimate,
          basis: 'estimate',
          seconds: length,
          note: `depends on step ${dependsOn} output (~${length} s at the local service's rate)`,
        });
      } else {
        const why =
          length === null
            ? 'its length is not known before it exists'
            : 'this service prices per second only through its quote endpoint';
        steps.push({
          ...base,
          credits: null,
          basis: 'unknown',
          seconds: length,
          note: `depends on step ${dependsOn} output; ${why}`,
        });
      }
    }
  }
  return {
    name: spec.name,
    steps,
    total: steps.reduce((sum, s) => sum + (s.credits ?? 0), 0),
    exact: steps.every((s) => s.basis === 'quote' || s.basis === 'price-table'),
    incomplete: steps.some((s) => s.credits === null),
    budgetCredits: spec.budgetCredits ?? null,
  };
}

/** A batch's price: every item priced as `reelflow quote` prices a spec, and the totals by how exact they are. */
export interface BatchQuote {
  name: string;
  items: PipelineQuote[];
  /** Credits priced by the service (quote endpoint) or its contract's price table: what it will charge. */
  exactCredits: number;
  /** Credits estimated (per-second steps whose clip does not exist yet, at the local service's rates). */
  estimatedCredits: number;
  /** exactCredits + estimatedCredits. */
  total: number;
  /** Steps that could not be priced at all (their credits are in no total). */
  unknownSteps: number;
  /** Quote calls made: identical steps of several items are asked once. */
  quoteCalls: number;
}

/**
 * Prices a whole batch (`reelflow quote --batch`): each item as quotePipeline does, with literal
 * long-form steps from the price table and identical per-second steps quoted once, so a batch of
 * thousands of variants of one spec costs few quote calls against the account's limit.
 */
export async function quoteBatch(
  name: string,
  items: readonly PipelineSpec[],
  client: ServiceClient,
  serviceUrl: string,
  resolveMedia?: (input: Record<string, unknown>) => Promise<Record<string, unknown>>,
): Promise<BatchQuote> {
  const cache = new Map<string, Promise<QuoteResponse>>();
  const priced: PipelineQuote[] = [];
  for (const item of items)
    priced.push(await quotePipeline(item, client, serviceUrl, resolveMedia, { longFormByTable: true, cache }));
  const steps = priced.flatMap((p) => p.steps);
  const sum = (keep: (s: StepQuote) => boolean) => steps.filter(keep).reduce((n, s) => n + (s.credits ?? 0), 0);
  const exactCredits = sum((s) => s.basis === 'quote' || s.basis === 'price-table');
  const estimatedCredits = sum((s) => s.basis === 'estimate');
  return {
    name,
    items: priced,
    exactCredits,
    estimatedCredits,
    total: exactCredits + estimatedCredits,
    unknownSteps: steps.filter((s) => s.credits === null).length,
    quoteCalls: cache.size,
  };
}
