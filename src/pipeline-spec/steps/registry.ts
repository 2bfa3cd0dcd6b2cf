import { z } from 'zod';
import { jobStepKind } from './job';
import type { SpecStepKind } from './kind';
import { opStepKind } from './op';
import { stepKindKeyOf, type StepKindKey } from './match';

export type { StepKindKey } from './match';

/**
 * Every kind of step, by name: the one table the step schema is built from. A new kind is one module
 * beside ./job.ts, one row here and one in ./match.ts (how a written step is told to be of it), and its
 * workflow side in src/workflows/steps/registry.ts; the compiler asks for each.
 */
export const STEP_KINDS = {
  model: jobStepKind,
  op: opStepKind,
} as const satisfies { [K in StepKindKey]: SpecStepKind };

/** A step of the kind marked by `K`, as validated. */
export type StepOfKind<K extends StepKindKey> = z.output<(typeof STEP_KINDS)[K]['schema']>;

/** A step of any kind, as validated. */
export type PipelineStep = { [K in StepKindKey]: StepOfKind<K> }[StepKindKey];

/** A step of any kind, as a spec file writes it (defaults not yet filled in). */
export type PipelineStepInput = { [K in StepKindKey]: z.input<(typeof STEP_KINDS)[K]['schema']> }[StepKindKey];

/**
 * One schema for a step of any kind. With one kind it is that kind's schema (version 1's JSON
 * Schema stays exactly what it was). With several, a step is parsed by the one kind ./match.ts says
 * it is of (a step of none by the first kind's, so a step without `model` is still told it lacks
 * one), so its errors are that kind's with their field paths, never an "invalid union".
 */
function stepSchemaOf(kinds: { [K in StepKindKey]: SpecStepKind }): z.ZodType<PipelineStep, PipelineStepInput> {
  const schemas = Object.values(kinds).map((kind) => kind.schema);
  const [first] = schemas;
  if (!first) throw new Error('no kind of step is registered');
  if (schemas.length === 1) return first as z.ZodType<PipelineStep, PipelineStepInput>;
  const picked = z.unknown().transform((value, ctx) => {
    const key =
      typeof value === 'object' && value !== null && !Array.isArray(value)
        ? stepKindKeyOf(value as Record<string, unknown>)
        : undefined;
    const parsed = (key ? kinds[key].schema : first).safeParse(value);
    if (parsed.success) return parsed.data;
    for (const issue of parsed.error.issues) ctx.addIssue({ ...issue } as Parameters<typeof ctx.addIssue>[0]);
    return z.NEVER;
  });
  return picked as unknown as z.ZodType<PipelineStep, PipelineStepInput>;
}

/** The schema of one pipeline step, built from STEP_KINDS. */
export const pipelineStepSchema = stepSchemaOf(STEP_KINDS);

/** The kinds' own schemas as one union: what a spec file may say of a step (the JSON Schema, src/pipeline-spec/json-schema.ts). */
export const pipelineStepShapes = z.union(
  Object.values(STEP_KINDS).map((kind) => kind.schema) as unknown as [z.ZodType, z.ZodType, ...z.ZodType[]],
);

/** The kind of `step`, a validated step (so there is one). */
export function stepKindOf(step: PipelineStep): SpecStepKind {
  const key = stepKindKeyOf(step);
  if (!key) throw new Error(`step ${step.id} has no kind (none of ${Object.keys(STEP_KINDS).join(', ')})`);
  return STEP_KINDS[key] as SpecStepKind;
}
