import { z } from 'zod';
import { toFieldErrors, type FieldError } from '../../contract';
import { graphStepFields, type GraphStepFields } from '../step-fields';
import { approvalStepKind } from './approval';
import { jobStepKind } from './job';
import type { SpecStepKind } from './kind';
import { opStepKind } from './op';
import { stepKindKeyOf, stepKindKeysOf, type StepKindKey } from './match';

export type { StepKindKey } from './match';

/**
 * Every kind of step, by name: the one table the step schema is built from. A new kind is one module
 * beside ./job.ts, one row here and one in ./match.ts (how a written step is told to be of it), and its
 * workflow side in src/workflows/steps/registry.ts; the compiler asks for each.
 */
export const STEP_KINDS = {
  model: jobStepKind,
  op: opStepKind,
  approval: approvalStepKind,
} as const satisfies { [K in StepKindKey]: SpecStepKind };

const KINDS = Object.keys(STEP_KINDS).join(', ');

/** A step of the kind marked by `K`, as validated: its kind's fields and the graph's (version 2). */
export type StepOfKind<K extends StepKindKey> = z.output<(typeof STEP_KINDS)[K]['schema']> & GraphStepFields;

/** A step of any kind, as validated. */
export type PipelineStep = { [K in StepKindKey]: StepOfKind<K> }[StepKindKey];

/** A step of any kind, as a spec file writes it (defaults not yet filled in). */
export type PipelineStepInput = {
  [K in StepKindKey]: z.input<(typeof STEP_KINDS)[K]['schema']> & GraphStepFields;
}[StepKindKey];

/** A kind's step schema with the graph's fields added. */
function withGraphFields(schema: z.ZodType): z.ZodType {
  return schema instanceof z.ZodObject ? schema.extend(graphStepFields) : schema;
}

/**
 * One schema for a step of any kind: each kind's schema with the graph's fields (`after`, `each`,
 * `onFailure`; ../graph.ts refuses them outside version 2). With one kind it is that kind's schema.
 * With several, a step is parsed by the one kind ./match.ts says it is of (a step of none by the first
 * kind's, so a step without `model` is still told it lacks one), so its errors are that kind's with
 * their field paths, never an "invalid union".
 */
function stepSchemaOf(kinds: { [K in StepKindKey]: SpecStepKind }): z.ZodType<PipelineStep, PipelineStepInput> {
  const byKind = Object.fromEntries(
    Object.entries(kinds).map(([key, kind]) => [key, withGraphFields(kind.schema)]),
  ) as Record<StepKindKey, z.ZodType>;
  const schemas = Object.values(byKind);
  const [first] = schemas;
  if (!first) throw new Error('no kind of step is registered');
  if (schemas.length === 1) return first as z.ZodType<PipelineStep, PipelineStepInput>;
  const picked = z.unknown().transform((value, ctx) => {
    const keys = isRecord(value) ? stepKindKeysOf(value) : [];
    if (keys.length > 1) {
      ctx.addIssue({ code: 'custom', message: `is marked as two kinds of step (${keys.join(', ')}): a step is one` });
      return z.NEVER;
    }
    const [key] = keys;
    const parsed = (key ? byKind[key] : first).safeParse(value);
    if (parsed.success) return parsed.data;
    for (const issue of parsed.error.issues) ctx.addIssue({ ...issue } as Parameters<typeof ctx.addIssue>[0]);
    return z.NEVER;
  });
  return picked as unknown as z.ZodType<PipelineStep, PipelineStepInput>;
}

/** The schema of one pipeline step, built from STEP_KINDS. */
export const pipelineStepSchema = stepSchemaOf(STEP_KINDS);

/**
 * The kinds' own schemas with the graph's fields, as one union: what a spec file may say of a step (the
 * JSON Schema, src/pipeline-spec/json-schema.ts).
 */
export const pipelineStepShapes = z.union(
  Object.values(STEP_KINDS).map((kind) => withGraphFields(kind.schema)) as unknown as [
    z.ZodType,
    z.ZodType,
    ...z.ZodType[],
  ],
);

/** The kind of `step`, a validated step (so there is one). */
export function stepKindOf(step: PipelineStep): SpecStepKind {
  const key = stepKindKeyOf(step);
  if (!key) throw new Error(`step ${step.id} has no kind (none of ${Object.keys(STEP_KINDS).join(', ')})`);
  return STEP_KINDS[key] as SpecStepKind;
}

/**
 * Field errors of a spec whose parse failed: a step that matches no kind's schema is a union's failure
 * (`Invalid input` at the step), so it is checked again against the schema of the kind it is marked
 * as, and its own fields' errors are given instead.
 */
export function specFieldErrors(error: z.ZodError, written: unknown): FieldError[] {
  const steps = (written as { steps?: unknown } | null)?.steps;
  return error.issues.flatMap((issue) => {
    const [field, index] = issue.path;
    const step = Array.isArray(steps) && typeof index === 'number' ? (steps[index] as unknown) : undefined;
    if (issue.code !== 'invalid_union' || field !== 'steps' || issue.path.length !== 2 || !isRecord(step))
      return toFieldErrors(new z.ZodError([issue]));
    const [key, ...more] = stepKindKeysOf(step);
    const at = `steps.${String(index)}`;
    if (!key) return [{ path: at, message: `is of no kind of step: give it "model" or "op" (kinds: ${KINDS})` }];
    if (more.length > 0)
      return [{ path: at, message: `is marked as two kinds of step (${[key, ...more].join(', ')}): a step is one` }];
    const checked = STEP_KINDS[key].schema.safeParse(step);
    return checked.success
      ? toFieldErrors(new z.ZodError([issue]))
      : toFieldErrors(checked.error, ['steps', index as number]);
  });
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
