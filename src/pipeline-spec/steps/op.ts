import { z } from 'zod';
import { makeUriSchema, toFieldErrors, type FieldError, type UriRules } from '../../contract';
import { safeNameSchema } from '../step-fields';
import type { SpecStepKind } from './kind';
import { OP_LIMITS, OP_NAMES } from './op-types';

export { OP_NAMES } from './op-types';

/**
 * A local media operation (`"op": "concat" | "trim" | "mux_audio" | "frame"`): run by the worker with
 * ffmpeg, its output put into the media store (docs/pipelines.md, "Edits (op steps)"). Costs no
 * credits; its input is typed per operation below.
 */
export const opStepSchema = z.strictObject({
  id: safeNameSchema,
  op: z.enum(OP_NAMES),
  input: z.record(z.string(), z.unknown()),
});

/** A step that runs one local media operation. */
export type OpStep = z.infer<typeof opStepSchema>;

const seconds = z.number().finite().min(0).max(OP_LIMITS.maxSeconds);

/** The input schema of each operation; a media value is a URL (references already stand in as one). */
export function createOpInputSchemas(rules?: UriRules) {
  const media = makeUriSchema(rules);
  return {
    concat: z.strictObject({ videos: z.array(media).min(2).max(OP_LIMITS.maxConcatVideos) }),
    trim: z
      .strictObject({ video: media, start: seconds, end: seconds })
      .refine((input) => input.start < input.end, { path: ['end'], message: 'must be after start' }),
    mux_audio: z.strictObject({ video: media, audio: media, mode: z.enum(['replace', 'mix']).optional() }),
    frame: z.strictObject({
      video: media,
      at: z.union([seconds, z.literal('last')], { error: 'must be seconds (a number ≥ 0) or "last"' }),
      format: z.enum(['png', 'jpeg']).optional(),
    }),
  } as const;
}

/** True for a fan-out item's placeholder (`{"$item": "<field>"}`): its value is only known per item. */
function isItemPlaceholder(value: unknown): boolean {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && '$item' in value;
}

/** The paths (`start`, `videos.1`) of the input that hold an item placeholder, whose checks wait for the item. */
function itemPaths(input: unknown): Set<string> {
  const paths = new Set<string>();
  const visit = (value: unknown, at: PropertyKey[]) => {
    if (isItemPlaceholder(value)) paths.add(at.join('.'));
    else if (Array.isArray(value)) value.forEach((item, i) => visit(item, [...at, i]));
    else if (typeof value === 'object' && value !== null)
      for (const [key, item] of Object.entries(value)) visit(item, [...at, key]);
  };
  visit(input, []);
  return paths;
}

/** Checks an operation's input (references replaced by a URL); paths are relative to `input`. */
export function checkOpInput(op: OpStep['op'], literal: unknown, rules?: UriRules): FieldError[] {
  const parsed = createOpInputSchemas(rules)[op].safeParse(literal);
  if (parsed.success) return [];
  const waiting = itemPaths(literal);
  return toFieldErrors(parsed.error).filter((error) => !waiting.has(error.path));
}

/** The local media operation as a kind of step: marked by `op` (any value but `approval`). */
export const opStepKind = {
  key: 'op',
  schema: opStepSchema,
  checkInput: (step: OpStep, literal: unknown, rules?: UriRules): FieldError[] => checkOpInput(step.op, literal, rules),
} as const satisfies SpecStepKind<typeof opStepSchema>;
