import type { z } from 'zod';
import type { FieldError, UriRules } from '../../contract';

/**
 * The spec side of a kind of step: the key that marks a step as of this kind, the schema of such a
 * step, and the check of its input a schema cannot make. The workflow side of the same kind (how it
 * runs, its summary, how it resumes) is src/workflows/steps/<kind>/; each is one row of its table
 * (./registry.ts here, src/workflows/steps/registry.ts there).
 */
export interface SpecStepKind<Schema extends z.ZodType = z.ZodType> {
  /** The field whose presence makes a step of this kind (`model`: a paid job). */
  readonly key: string;
  /** The whole step as a spec writes it, `id` and `input` included. */
  readonly schema: Schema;
  /**
   * Problems of the step's input, references already replaced by a valid https URL (the value they
   * become at the call); paths relative to `input` (`(root)` for the input itself).
   */
  checkInput(step: z.output<Schema>, literal: unknown, rules?: UriRules): FieldError[];
}
