import { z } from 'zod';
import { uriProblem, type FieldError, type UriRules } from '../../contract';
import { safeNameSchema, stepReferenceSchema } from '../step-fields';
import type { SpecStepKind } from './kind';

/** Limits of an approval gate: how long it may wait (a year) and how much it may show. */
const APPROVAL_LIMITS = {
  defaultTimeoutHours: 72,
  maxTimeoutHours: 8760,
  maxPreviews: 20,
  maxNote: 2000,
} as const;

/** One thing to look at: a URL (https, or a data URI) or an earlier step's output. */
const previewItemSchema = z.union([z.string().min(1, 'must not be empty'), stepReferenceSchema]);

/** What a gate's `input` says, as written (references not yet resolved). */
export interface ApprovalInput {
  /** What to look at (shown in the console, the status and the report); passed on as the gate's output. */
  preview?: PreviewItem | PreviewItem[];
  /** A line for the person deciding. */
  note?: string;
}
type PreviewItem = z.infer<typeof previewItemSchema>;

/**
 * Typed as a record too, like a paid job's input: code that reads any step's `input` by field name
 * keeps compiling (the schema itself still refuses any other field).
 */
const approvalInputSchema: z.ZodType<ApprovalInput & Record<string, unknown>, ApprovalInput> = z.strictObject({
  preview: z.union([previewItemSchema, z.array(previewItemSchema).min(1).max(APPROVAL_LIMITS.maxPreviews)]).optional(),
  note: z.string().max(APPROVAL_LIMITS.maxNote).optional(),
});

/**
 * An approval gate (`"op": "approval"`): the pipeline waits for a person to approve or reject
 * (`reelflow approve|reject`, or the `decideApproval` update) before anything after it starts. It
 * costs nothing; `onTimeout` decides once `timeoutHours` passed without a decision.
 */
export const approvalStepSchema = z.strictObject({
  id: safeNameSchema,
  op: z.literal('approval'),
  input: approvalInputSchema,
  timeoutHours: z
    .number()
    .positive('must be more than 0 hours')
    .max(APPROVAL_LIMITS.maxTimeoutHours, `must be at most ${APPROVAL_LIMITS.maxTimeoutHours} hours (a year)`)
    .default(APPROVAL_LIMITS.defaultTimeoutHours),
  onTimeout: z.enum(['reject', 'approve']).default('reject'),
});

/** An approval gate as validated (defaults filled in). */
export type ApprovalStep = z.infer<typeof approvalStepSchema>;

/** The gate as a kind of step: marked by `"op": "approval"`; each literal preview must be a URL the service's rules accept. */
export const approvalStepKind = {
  key: 'approval',
  schema: approvalStepSchema,
  checkInput(_step: ApprovalStep, literal: unknown, rules?: UriRules): FieldError[] {
    const preview = (literal as { preview?: unknown }).preview;
    if (preview === undefined) return [];
    const items = Array.isArray(preview)
      ? preview.map((item, i) => [`preview.${i}`, item] as const)
      : [['preview', preview] as const];
    return items.flatMap(([path, item]) => {
      const problem = typeof item === 'string' ? uriProblem(item, rules) : null;
      return problem ? [{ path, message: problem }] : [];
    });
  },
} as const satisfies SpecStepKind<typeof approvalStepSchema>;
