import { z } from 'zod';
import { graphStepFields, type GraphStepFields } from '../step-fields';
import { jobStepKind } from './job';
import type { SpecStepKind } from './kind';
import { stepKindKeyOf, type StepKindKey } from './match';

export type { StepKindKey } from './match';

/**
 * Every kind of step, by name: the one table the step schema is built from. A new kind is one module
 * beside ./job.ts, one row here and one in ./match.ts (how a written step is told to be of it), and its
 * workflow side in src/workflows/steps/registry.ts; the compiler asks for each.
 */
export const STEP_KINDS = {
  model: jobStepKind,
} as const satisfies { [K in StepKindKey]: SpecStepKind };

/** A step of the kind marked by `K`, as validated: its kind's fields and the graph's (version 2). */
export type StepOfKind<K extends StepKindKey> = z.output<(typeof STEP_KINDS)[K]['schema']> & GraphStepFields;

/** A step of any kind, as validated. */
export type PipelineStep = { [K in StepKindKey]: StepOfKind<K> }[StepKindKey];

/** A step of any kind, as a spec file writes it (defaults not yet filled in). */
export type PipelineStepInput = {
  [K in StepKindKey]: z.input<(typeof STEP_KINDS)[K]['schema']> & GraphStepFields;
}[StepKindKey];

/**
 * One schema for a step of any kind: each kind's schema with the graph's fields (`after`, `each`,
 * `onFailure`; ../graph.ts refuses them outside version 2). With one kind it is that kind's schema;
 * with several, a union of them, where each kind's schema requires its own key.
 */
function stepSchemaOf(kinds: Record<string, SpecStepKind>): z.ZodType<PipelineStep, PipelineStepInput> {
  const [first, ...rest] = Object.values(kinds).map((kind) =>
    kind.schema instanceof z.ZodObject ? kind.schema.extend(graphStepFields) : kind.schema,
  );
  if (!first) throw new Error('no kind of step is registered');
  const schema = rest.length === 0 ? first : z.union([first, ...rest]);
  return schema as z.ZodType<PipelineStep, PipelineStepInput>;
}

/** The schema of one pipeline step, built from STEP_KINDS. */
export const pipelineStepSchema = stepSchemaOf(STEP_KINDS);

/** The kind of `step`, a validated step (so there is one). */
export function stepKindOf(step: PipelineStep): SpecStepKind {
  const key = stepKindKeyOf(step);
  if (!key) throw new Error(`step ${step.id} has no kind (none of ${Object.keys(STEP_KINDS).join(', ')})`);
  return STEP_KINDS[key] as SpecStepKind;
}
