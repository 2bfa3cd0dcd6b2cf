import type { z } from 'zod';
import type { ProcessingSpeed } from '../limits';

/**
 * zod's namespace as a model's schema builder receives it. A model module imports zod as a type
 * only and is handed the namespace by `createModelInputSchemas` (src/contract/model-inputs.ts), so
 * the module stays plain data that workflows may import without zod in their bundle.
 */
export type Zod = typeof z;

/** Schema of one URI input field, built by the caller with its URI rules (`makeUriSchema`). */
export type UriSchema = z.ZodType<string>;

/** An input as the generic rules read it: validated by the model's schema, or a spec step's input. */
export type LooseInput = Readonly<Record<string, unknown>>;

/** How a model is billed. */
export type PricingUnit = 'per-output-second' | 'per-request';

/** A price from the contract's own table: known from the input alone, without asking the service. */
export interface TablePriceRule {
  kind: 'table';
  /** Credits of one request with this input (the spec's defaults fill what it leaves out). */
  price(input: LooseInput): number;
}

/**
 * A price per second of output, which only the service's quote endpoint knows for sure: the output
 * keeps the length of the input clip in `clipField`, which is what is billed.
 */
export interface PerSecondPriceRule {
  kind: 'per-second';
  /** The input field holding the clip whose probed length is billed. */
  clipField: string;
  /** The longest clip the service accepts, in seconds (quotes and submits of longer ones are refused). */
  maxClipSeconds?: number;
  /** Credits per output second at the local service, by processing speed (docs/spec-decisions.md). */
  localRates: Readonly<Record<ProcessingSpeed, number>>;
}

export type PriceRule = TablePriceRule | PerSecondPriceRule;

/** What preflight checks of this model beyond the media type and size of every URI input. */
export interface PreflightRule {
  /** A clip whose length preflight reads from its first bytes, refusing one longer than `maxSeconds`. */
  clipLength?: {
    field: string;
    maxSeconds: number;
    /** How the refusal names the model's job (`longer than the 10 minutes re-voicing accepts`). */
    doing: string;
  };
}

/**
 * Everything the contract knows of one model, in the model's own module (src/contract/models/).
 * Plain data and pure functions only: workflows import it.
 */
export interface ModelDefinition<Id extends string = string> {
  /** The service's model id, as in `POST /v1/<model>`. */
  id: Id;
  /** What the model does, in one sentence (CLI and docs show it). */
  purpose: string;
  /** Builds the input schema; `uri` is the schema of a URI field under the caller's rules. */
  inputSchema(zod: Zod, uri: UriSchema): z.ZodType<object>;
  /** The spec's limits of this model's input, by name. */
  limits: Readonly<Record<string, number>>;
  /** Input fields that name a URI (single) or URI list; used to feed outputs forward and by preflight. */
  uriFields: readonly string[];
  uriListFields: readonly string[];
  /**
   * Rough expected run time in seconds for a typical job; pacing of fallback polls starts here.
   * Not in the spec: reelflow's own estimate.
   */
  expectedRunSeconds: number;
  /** For a model that resizes its input clip: how many times its width and height the output has. */
  frameScale?: number;
  /** Length in seconds of the output, when the input alone says it (a requested duration); else null. */
  outputSeconds(input: LooseInput): number | null;
  price: PriceRule;
  preflight: PreflightRule;
}

/** The unit a price rule bills in. */
export function pricingUnitOf(rule: PriceRule): PricingUnit {
  return rule.kind === 'table' ? 'per-request' : 'per-output-second';
}
