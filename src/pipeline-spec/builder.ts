import type { ModelId, ModelInputs, UriRules } from '../contract';
import type { MediaRef } from '../media/reference';
import type { ItemReference } from './items';
import type { StepReference } from './references';
import type { OnFailureMode } from './step-fields';
import { parsePipelineSpec, type PipelineSpec, type PipelineStep, type PollPacingOverrides } from './spec';

/** A model input where any URI (or URI-list item) may instead reference an earlier step's output or a media-store object. */
export type InputWithReferences<T> = {
  [K in keyof T]: T[K] extends string
    ? T[K] | StepReference | MediaRef | ItemReference
    : T[K] extends readonly (infer U)[]
      ? Array<U | StepReference | MediaRef | ItemReference> | StepReference
      : T[K] | ItemReference;
};

/** Options of one step in the builder. */
export interface StepOptions {
  /** Deliberate resubmits after a FAILED job (default 0). */
  maxResubmits?: number;
  pacing?: PollPacingOverrides;
  /** Version 2: steps this one runs after, beside those its references read. */
  after?: string[];
  /** Version 2: fan-out, one run per item (`item('field')` reads it in the input). */
  each?: Record<string, unknown>[];
  /** Version 2, with `each`: `fail` (default) or `continue`. */
  onFailure?: OnFailureMode;
}

/** A reference to `step`'s output at `path` (default `videos[0].url`). */
export function from(step: string, path?: string): StepReference {
  return path === undefined ? { $from: step } : { $from: step, path };
}

/** The field `field` (a dotted path allowed) of the item a fan-out step runs for. */
export function item(field: string): ItemReference {
  return { $item: field };
}

/**
 * Typed builder of a pipeline spec; `build()` validates and returns the same JSON a file would hold.
 * A step given `after`, `each` or `onFailure` makes the spec version 2 (the graph).
 */
export class PipelineBuilder {
  private readonly steps: PipelineStep[] = [];
  private budgetCredits: number | undefined;
  private version: 2 | undefined;

  constructor(private readonly name: string) {}

  /** Adds a step running `model` on `input`. */
  step<M extends ModelId>(
    id: string,
    model: M,
    input: InputWithReferences<ModelInputs[M]>,
    options: StepOptions = {},
  ): this {
    this.steps.push({
      id,
      model,
      input: input as Record<string, unknown>,
      ...(options.maxResubmits !== undefined ? { retry: { maxResubmits: options.maxResubmits } } : {}),
      ...(options.pacing ? { pacing: options.pacing } : {}),
      ...(options.after ? { after: options.after } : {}),
      ...(options.each ? { each: options.each } : {}),
      ...(options.onFailure ? { onFailure: options.onFailure } : {}),
    });
    if (options.after || options.each || options.onFailure) this.version = 2;
    return this;
  }

  /** Makes the spec version 2 (the graph): each step runs once the steps it reads and names are done. */
  graph(): this {
    this.version = 2;
    return this;
  }

  /** Caps net spend of the pipeline in credits. */
  budget(credits: number): this {
    this.budgetCredits = credits;
    return this;
  }

  /** Validates (throws PipelineSpecError with field paths) and returns the spec. */
  build(rules?: UriRules): PipelineSpec {
    return parsePipelineSpec(
      {
        ...(this.version ? { version: this.version } : {}),
        name: this.name,
        steps: this.steps,
        ...(this.budgetCredits !== undefined ? { budgetCredits: this.budgetCredits } : {}),
      },
      rules,
    );
  }
}

/** Starts a pipeline spec: `pipeline('promo').step(...).step(...).budget(900).build()`. */
export function pipeline(name: string): PipelineBuilder {
  return new PipelineBuilder(name);
}
