import type { ModelId, ModelInputs, UriRules } from '../contract';
import type { MediaRef } from '../media/reference';
import type { StepReference } from './references';
import { parsePipelineSpec, type PipelineSpec, type PipelineStep, type PollPacingOverrides } from './spec';

/** A model input where any URI (or URI-list item) may instead reference an earlier step's output or a media-store object. */
export type InputWithReferences<T> = {
  [K in keyof T]: T[K] extends string
    ? T[K] | StepReference | MediaRef
    : T[K] extends readonly (infer U)[]
      ? Array<U | StepReference | MediaRef>
      : T[K];
};

/** Options of one step in the builder. */
export interface StepOptions {
  /** Deliberate resubmits after a FAILED job (default 0). */
  maxResubmits?: number;
  pacing?: PollPacingOverrides;
}

/** A reference to `step`'s output at `path` (default `videos[0].url`). */
export function from(step: string, path?: string): StepReference {
  return path === undefined ? { $from: step } : { $from: step, path };
}

/** Typed builder of a pipeline spec; `build()` validates and returns the same JSON a file would hold. */
export class PipelineBuilder {
  private readonly steps: PipelineStep[] = [];
  private budgetCredits: number | undefined;

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
    });
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
