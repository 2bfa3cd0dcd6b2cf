import { z } from 'zod';
import { modelIdSchema, validateModelInput, type FieldError, type UriRules } from '../../contract';
import { pollPacingSchema, safeNameSchema, startDeadlineSecondsSchema, stepRetrySchema } from '../step-fields';
import type { SpecStepKind } from './kind';

/** A paid job of the service: `model` and its input (docs/service-api.md), with resubmits and pacing. */
export const jobStepSchema = z.strictObject({
  id: safeNameSchema,
  model: modelIdSchema,
  input: z.record(z.string(), z.unknown()),
  retry: stepRetrySchema.optional(),
  pacing: pollPacingSchema.optional(),
  /** A job still IN_QUEUE this many seconds after its submit is cancelled (free) and the step fails StartDeadlineExceeded. */
  startDeadlineSeconds: startDeadlineSecondsSchema.optional(),
  /** false: skip the preflight check of this step's inputs (docs/preflight.md). Default true. */
  preflight: z.boolean().optional(),
});

/** A step that runs one paid job. */
export type JobStep = z.infer<typeof jobStepSchema>;

/** The paid job as a kind of step: marked by `model`; its input is checked against that model's schema. */
export const jobStepKind = {
  key: 'model',
  schema: jobStepSchema,
  checkInput(step: JobStep, literal: unknown, rules?: UriRules): FieldError[] {
    const checked = validateModelInput(step.model, literal, rules);
    return checked.ok ? [] : checked.errors;
  },
} as const satisfies SpecStepKind<typeof jobStepSchema>;
