import { z } from 'zod';
import { parseReferencePath } from './references';

/**
 * The fields every kind of step shares, and the spec's limits: step ids, references to other
 * steps' outputs, fallback-poll pacing and resubmits. The kinds (./steps/) build their step schema
 * from them; ./spec.ts builds the pipeline's.
 */

/** Names that stay readable and unambiguous inside workflow ids (`pipeline/<name>`, `<name>/job/<step>`). */
const SAFE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
const SAFE_NAME_MESSAGE =
  'must be 1-64 characters of letters, digits, ".", "_" or "-", starting with a letter or digit';

/** Largest number of steps in one pipeline, of deliberate resubmits per step and of items of a fan-out step. */
export const PIPELINE_LIMITS = { maxSteps: 20, maxResubmits: 5, maxItems: 100 } as const;

export const safeNameSchema = z.string().regex(SAFE_NAME, SAFE_NAME_MESSAGE);

export const stepReferenceSchema = z.strictObject({
  $from: safeNameSchema,
  path: z
    .string()
    .refine((path) => parseReferencePath(path) !== null, 'must be a path such as videos[0].url')
    .optional(),
});

/** Fallback-poll pacing of a step (see pacing.ts); all optional, defaults from the model. */
export const pollPacingSchema = z.strictObject({
  firstPollSeconds: z.number().positive().optional(),
  factor: z.number().min(1).max(10).optional(),
  capSeconds: z.number().positive().optional(),
  /** The one early status check after the submit, seconds; 0 = none (see pacing.ts). */
  earlyCheckSeconds: z.number().min(0).max(600).optional(),
});

/**
 * Seconds the provider has to start a job (leave IN_QUEUE) from its submit: past them a job still
 * queued is cancelled while that is free, and the step fails `StartDeadlineExceeded` (resubmits apply).
 * At most 7 days.
 */
export const startDeadlineSecondsSchema = z
  .number()
  .int()
  .min(1)
  .max(7 * 24 * 3600);

export const stepRetrySchema = z.strictObject({
  /** Deliberate resubmits after a terminal FAILED (refunded) job; 0 = never resubmit. */
  maxResubmits: z.number().int().min(0).max(PIPELINE_LIMITS.maxResubmits).default(0),
});

/** What a fan-out step does when one of its items fails (docs/pipelines.md). */
export const ON_FAILURE_MODES = ['fail', 'continue'] as const;
export type OnFailureMode = (typeof ON_FAILURE_MODES)[number];

/**
 * The fields a step of any kind may carry in a version-2 spec (the graph): `after` (order without
 * data), `each` (fan-out: one run per item, in parallel) and `onFailure` (what a failed item does).
 */
export const graphStepFields = {
  /** Ids of steps that must be done before this one starts, beside those its `$from` references read. */
  after: z.array(safeNameSchema).max(PIPELINE_LIMITS.maxSteps).optional(),
  /** Fan-out: the step runs once per item; `{"$item": "<field>"}` inside `input` reads the item. */
  each: z
    .array(z.record(z.string(), z.unknown()))
    .min(1, 'needs at least one item')
    .max(PIPELINE_LIMITS.maxItems, `has at most ${PIPELINE_LIMITS.maxItems} items`)
    .optional(),
  /** `fail` (default): the first failed item cancels its running siblings; `continue`: keep the successes. */
  onFailure: z.enum(ON_FAILURE_MODES).optional(),
};

/** The graph fields of a step, as validated. */
export type GraphStepFields = {
  after?: string[];
  each?: Record<string, unknown>[];
  onFailure?: OnFailureMode;
};
