import type { ProcessingSpeed } from './limits';
import {
  MODEL_DEFINITIONS,
  MODEL_IDS,
  modelDefinition,
  type LooseInput,
  type ModelId,
  type PerSecondPriceRule,
} from './models';

/**
 * The price rules of every model read alike: each model's rule is in its module (src/contract/models/),
 * a table (`TablePriceRule`) or a per-second rate (`PerSecondPriceRule`).
 */

/** Ids of the models priced per second of output. */
export type PerSecondModelId = {
  [M in ModelId]: (typeof MODEL_DEFINITIONS)[M]['price'] extends PerSecondPriceRule ? M : never;
}[ModelId];

/**
 * Per-second rates of the local service (the spec leaves them to the quote endpoint; these are
 * the local implementation's own, recorded in docs/spec-decisions.md). Credits per output second.
 */
export const LOCAL_PER_SECOND_RATES = Object.fromEntries(
  MODEL_IDS.flatMap((id) => {
    const rule = modelDefinition(id).price;
    return rule.kind === 'per-second' ? [[id, rule.localRates]] : [];
  }),
) as Record<PerSecondModelId, Readonly<Record<ProcessingSpeed, number>>>;

/** Credits for a per-second model: whole seconds, rounded up, at least one second. */
export function pricePerSecond(rate: number, clipSeconds: number): number {
  return rate * Math.max(1, Math.ceil(clipSeconds - 1e-6));
}

/**
 * The local service's credits for `seconds` of a per-second model's output at the input's
 * `processing_speed` (standard when absent); undefined for a model without a local per-second rate.
 */
export function localPerSecondPrice(
  model: string,
  input: { processing_speed?: unknown },
  seconds: number,
): number | undefined {
  if (!Object.hasOwn(LOCAL_PER_SECOND_RATES, model)) return undefined;
  const rates = (LOCAL_PER_SECOND_RATES as Record<string, Readonly<Record<ProcessingSpeed, number>>>)[model]!;
  return pricePerSecond(rates[input.processing_speed === 'ultra-fast' ? 'ultra-fast' : 'standard'], seconds);
}

/**
 * The price of a model priced by the contract's own table (the same rule the service charges by, so
 * no call is needed); undefined for a model whose price only the service's quote knows.
 */
export function tablePrice(model: ModelId, input: LooseInput): number | undefined {
  const rule = modelDefinition(model).price;
  return rule.kind === 'table' ? rule.price(input) : undefined;
}
