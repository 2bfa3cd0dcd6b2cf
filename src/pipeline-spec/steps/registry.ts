import { z } from 'zod';
import { toFieldErrors, type FieldError } from '../../contract';
import { approvalStepKind } from './approval';
import { jobStepKind } from './job';
import type { SpecStepKind } from './kind';
import { stepKindKeyOf, stepKindKeysOf, type StepKindKey } from './match';

export type { StepKindKey } from './match';

/**
 * Every kind of step, by name: the one table the step schema is built from. A new kind is one module
 * beside ./job.ts, one row here and one in ./match.ts (how a written step is told to be of it), and its
 * workflow side in src/workflows/steps/registry.ts; the compiler asks for each.
 */
export const STEP_KINDS = {
  model: jobStepKind,
  approval: approvalStepKind,
} as const satisfies { [K in StepKindKey]: SpecStepKind };

const KINDS = Object.keys(STEP_KINDS).join(', ');

/** A step of the kind marked by `K`, as validated. */
export type StepOfKind<K extends StepKindKey> = z.output<(typeof STEP_KINDS)[K]['schema']>;

/** A step of any kind, as validated. */
export type PipelineStep = { [K in StepKindKey]: StepOfKind<K> }[StepKindKey];

/** A step of any kind, as a spec file writes it (defaults not yet filled in). */
export type PipelineStepInput = { [K in StepKindKey]: z.input<(typeof STEP_KINDS)[K]['schema']> }[StepKindKey];

/**
 * One schema for a step of any kind. With one kind it is that kind's schema (version 1's JSON
 * Schema stays exactly what it was); with several, a union of them, where each kind's schema
 * requires its own key.
 */
function stepSchemaOf(kinds: Record<string, SpecStepKind>): z.ZodType<PipelineStep, PipelineStepInput> {
  const [first, ...rest] = Object.values(kinds).map((kind) => kind.schema);
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
