import { z } from 'zod';
import { formatPath, toFieldErrors, type FieldError, type UriRules } from '../contract';
import { forEachMediaRef, isMediaRef, mediaRefProblem } from '../media/reference';
import { PipelineSpecError, ReferenceResolutionError } from './errors';
import { specVersion } from './graph';
import { graphErrors } from './graph-checks';
import { resolveItemReferences } from './items';
import {
  REFERENCE_PLACEHOLDER_URL,
  forEachReference,
  mapReferences,
  referencePlaceholder,
  type StepReference,
} from './references';
import {
  PIPELINE_LIMITS,
  pollPacingSchema,
  safeNameSchema,
  startDeadlineSecondsSchema,
  stepReferenceSchema,
} from './step-fields';
import { pipelineStepSchema, specFieldErrors, stepKindOf, type PipelineStep } from './steps/registry';

/**
 * The pipeline spec: a named, ordered list of steps, each of a kind (./steps/: a paid job, `model`
 * and its input), where an input value may reference an earlier step's output. Pure (zod +
 * contract): validated at the edges (CLI, activities); workflows import its types only.
 */

export { pollPacingSchema, safeNameSchema, stepReferenceSchema } from './step-fields';
export type { PipelineStep } from './steps/registry';
export type { JobStep } from './steps/job';
export type { ApprovalStep } from './steps/approval';

/**
 * When outputs are copied into the media store (docs/media-store.md): every output (`always`), none
 * (`never`, what a spec without the field gets), or the outputs still needed after the service may
 * have deleted them — read by a later step or final outputs of the pipeline (`on-expiry-risk`, what
 * the CLI fills in).
 */
export const ARCHIVE_MODES = ['always', 'never', 'on-expiry-risk'] as const;
export type ArchiveMode = (typeof ARCHIVE_MODES)[number];
/** What `reelflow run` / `batch` and the demo use when a spec names no archive mode (the workflow's own default is `never`). */
export const DEFAULT_CLI_ARCHIVE: ArchiveMode = 'on-expiry-risk';

export const pipelineSpecSchema = z.strictObject({
  /** 2: a step runs once the steps it reads (`$from`) and names (`after`) are done; independent ones in parallel. */
  version: z.union([z.literal(1), z.literal(2)]).optional(),
  name: safeNameSchema,
  steps: z.array(pipelineStepSchema).min(1).max(PIPELINE_LIMITS.maxSteps),
  /** Most credits the pipeline may spend (net of refunds); checked against each quote before submitting. */
  budgetCredits: z.number().int().positive().optional(),
  archive: z.enum(ARCHIVE_MODES).optional(),
  /** Default `startDeadlineSeconds` of every job step that sets none. */
  startDeadlineSeconds: startDeadlineSecondsSchema.optional(),
  /**
   * 1 (highest) … 5; default 3: the order in which the account's slots are granted (before fair
   * share) and Temporal's task-queue priority. `reelflow run --priority` overrides it.
   */
  priority: z.number().int().min(1).max(5).optional(),
});

export type PipelineSpec = z.infer<typeof pipelineSpecSchema>;
export type PollPacingOverrides = z.infer<typeof pollPacingSchema>;

export type SpecValidation = { ok: true; value: PipelineSpec } | { ok: false; errors: FieldError[] };

/**
 * Validates a pipeline spec: shape, unique step ids, references that point to earlier steps,
 * and literal inputs against the model's schema (references count as a valid https URL there).
 * `rules.allowedOrigins` accepts a local service's own http URLs as inputs.
 */
export function validatePipelineSpec(value: unknown, rules?: UriRules): SpecValidation {
  const written = withoutSchemaKey(value);
  const parsed = pipelineSpecSchema.safeParse(written);
  if (!parsed.success) return { ok: false, errors: specFieldErrors(parsed.error, written) };
  const spec = parsed.data;
  const errors: FieldError[] = [];
  // Version 1: a reference reads an earlier step. Version 2: any other step (the graph orders them; no cycle).
  const readable = new Set<string>(specVersion(spec) === 2 ? spec.steps.map((step) => step.id) : []);
  const earlier = new Set<string>();
  const itemCounts = new Map(spec.steps.map((step) => [step.id, step.each?.length ?? 1]));
  spec.steps.forEach((step, index) => {
    const at = ['steps', index];
    if (earlier.has(step.id))
      errors.push({ path: formatPath([...at, 'id']), message: `duplicates the id of an earlier step ("${step.id}")` });
    forEachReference(step.input, (reference, where) => {
      const path = [...at, 'input', ...where];
      const checked = stepReferenceSchema.safeParse(reference);
      if (!checked.success) {
        errors.push(...toFieldErrors(checked.error, path));
      } else if (reference.$from === step.id) {
        errors.push({ path: formatPath([...path, '$from']), message: 'a step cannot read its own output' });
      } else if (!earlier.has(reference.$from) && !readable.has(reference.$from)) {
        const message = readable.size
          ? `names no step of this spec (got "${reference.$from}")`
          : `must name an earlier step (got "${reference.$from}")`;
        errors.push({ path: formatPath([...path, '$from']), message });
      }
    });
    forEachMediaRef(step.input, (ref, where) => {
      const problem = mediaRefProblem(ref);
      if (problem) errors.push({ path: formatPath([...at, 'input', ...where]), message: problem });
    });
    errors.push(...inputErrors(step, at, itemCounts, rules));
    earlier.add(step.id);
  });
  errors.push(...graphErrors(spec));
  return errors.length > 0 ? { ok: false, errors } : { ok: true, value: spec };
}

/**
 * The step's literal input checked by its kind; a fan-out step's once per item, each item's values
 * in place of its `$item` references (a missing field is the item's error).
 */
function inputErrors(
  step: PipelineStep,
  at: (string | number)[],
  itemCounts: ReadonlyMap<string, number>,
  rules?: UriRules,
): FieldError[] {
  // Step and media references both become URLs at the call, so a valid https URL stands in for them;
  // a `[*]` reference becomes a list as long as the fan-out it reads (a concat of its items needs two).
  const placeholder = (reference: StepReference) => {
    const value = referencePlaceholder(reference);
    return Array.isArray(value)
      ? value.flatMap(() => Array(itemCounts.get(reference.$from) ?? 1).fill(value[0]))
      : value;
  };
  const literal = replaceMediaRefs(mapReferences(step.input, placeholder)) as Record<string, unknown>;
  const located = (problems: FieldError[], prefix = '') =>
    problems.map((e) => ({
      path: formatPath([...at, 'input']) + (e.path === '(root)' ? '' : `.${e.path}`),
      message: prefix + e.message,
    }));
  if (!step.each) return located(stepKindOf(step).checkInput(step, literal, rules));
  const errors: FieldError[] = [];
  const seen = new Set<string>();
  step.each.forEach((item, i) => {
    let input: Record<string, unknown>;
    try {
      input = resolveItemReferences(literal, item);
    } catch (error) {
      if (!(error instanceof ReferenceResolutionError)) throw error;
      errors.push({
        path: formatPath([...at, 'each', i]),
        message: `${error.message} (read by input.${error.location})`,
      });
      return;
    }
    for (const problem of located(stepKindOf(step).checkInput(step, input, rules), `item ${i}: `)) {
      const key = `${problem.path}\u0000${problem.message.replace(/^item \d+: /, '')}`;
      if (!seen.has(key)) errors.push(problem);
      seen.add(key);
    }
  });
  return errors;
}

/**
 * A spec file names its JSON Schema in `$schema` for editors (schemas/pipeline-spec.schema.json): it says
 * nothing about the pipeline, so it is dropped before validation and never reaches a workflow.
 */
function withoutSchemaKey(value: unknown): unknown {
  if (typeof value !== 'object' || value === null || Array.isArray(value) || !('$schema' in value)) return value;
  const { $schema: _schema, ...spec } = value as Record<string, unknown>;
  return spec;
}

function replaceMediaRefs(value: unknown): unknown {
  if (isMediaRef(value)) return REFERENCE_PLACEHOLDER_URL;
  if (Array.isArray(value)) return value.map(replaceMediaRefs);
  if (typeof value === 'object' && value !== null)
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, replaceMediaRefs(v)]));
  return value;
}

/** Like validatePipelineSpec, but throws PipelineSpecError. */
export function parsePipelineSpec(value: unknown, rules?: UriRules): PipelineSpec {
  const result = validatePipelineSpec(value, rules);
  if (!result.ok) throw new PipelineSpecError(result.errors);
  return result.value;
}
