import type { z } from 'zod';
import { MODEL_INPUT_SCHEMAS, modelIdSchema, type ModelId, type ModelInputs } from './models';

/** One problem with an input: where it is (`image_urls.3`) and why it is wrong. */
export interface FieldError {
  path: string;
  message: string;
}

export type Validation<T> = { ok: true; value: T } | { ok: false; errors: FieldError[] };

/** Joins a zod issue path into the dotted form used in errors and problem documents. */
export function formatPath(path: readonly PropertyKey[]): string {
  return path.length === 0 ? '(root)' : path.map(String).join('.');
}

/** Turns zod issues into field errors; `prefix` nests them (e.g. `steps.1.input`). */
export function toFieldErrors(error: z.ZodError, prefix: readonly PropertyKey[] = []): FieldError[] {
  return error.issues.map((issue) => ({
    path: formatPath([...prefix, ...issue.path]),
    message: issue.message,
  }));
}

/** Validates with any schema, returning field errors instead of throwing. */
export function validateWith<T>(schema: z.ZodType<T>, value: unknown, prefix: readonly PropertyKey[] = []): Validation<T> {
  const parsed = schema.safeParse(value);
  return parsed.success ? { ok: true, value: parsed.data } : { ok: false, errors: toFieldErrors(parsed.error, prefix) };
}

/** Validates a model's input against every limit of the spec. */
export function validateModelInput<M extends ModelId>(model: M, input: unknown): Validation<ModelInputs[M]> {
  return validateWith(MODEL_INPUT_SCHEMAS[model] as unknown as z.ZodType<ModelInputs[M]>, input);
}

/** Validates a model identifier coming from outside (a path segment, a spec file). */
export function validateModelId(model: unknown): Validation<ModelId> {
  return validateWith(modelIdSchema, model);
}

/** Renders field errors for a person: one `path: reason` per line. */
export function describeFieldErrors(errors: readonly FieldError[]): string {
  return errors.map((e) => `${e.path}: ${e.message}`).join('\n');
}
