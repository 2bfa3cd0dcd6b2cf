import type { z } from 'zod';
import { MODEL_INPUT_SCHEMAS, createModelInputSchemas, modelIdSchema, type ModelInputs } from './model-inputs';
import type { ModelId } from './models';
import type { UriRules } from './uri';

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
  return error.issues.flatMap((issue) =>
    // An unknown field is reported at its own path, so a person sees which one to remove.
    issue.code === 'unrecognized_keys'
      ? issue.keys.map((key) => ({
          path: formatPath([...prefix, ...issue.path, key]),
          message: 'is not a known field',
        }))
      : [{ path: formatPath([...prefix, ...issue.path]), message: issue.message }],
  );
}

/** Validates with any schema, returning field errors instead of throwing. */
export function validateWith<T>(
  schema: z.ZodType<T>,
  value: unknown,
  prefix: readonly PropertyKey[] = [],
): Validation<T> {
  const parsed = schema.safeParse(value);
  return parsed.success ? { ok: true, value: parsed.data } : { ok: false, errors: toFieldErrors(parsed.error, prefix) };
}

/**
 * Validates a model's input against every limit of the spec. `rules.allowedOrigins` lets a
 * service accept its own (possibly http) output URLs.
 */
export function validateModelInput<M extends ModelId>(
  model: M,
  input: unknown,
  rules?: UriRules,
): Validation<ModelInputs[M]> {
  const schemas = rules?.allowedOrigins?.length ? createModelInputSchemas(rules) : MODEL_INPUT_SCHEMAS;
  // `model` may come from outside despite its type (a path segment cast to ModelId): answer with
  // a field error rather than a TypeError on a missing (or inherited, e.g. `constructor`) schema.
  if (!Object.hasOwn(schemas, model))
    return { ok: false, errors: [{ path: 'model', message: 'is not a known model' }] };
  return validateWith(schemas[model] as unknown as z.ZodType<ModelInputs[M]>, input);
}

/** Validates a model identifier coming from outside (a path segment, a spec file). */
export function validateModelId(model: unknown): Validation<ModelId> {
  return validateWith(modelIdSchema, model);
}

/** Renders field errors for a person: one `path: reason` per line. */
export function describeFieldErrors(errors: readonly FieldError[]): string {
  return errors.map((e) => `${e.path}: ${e.message}`).join('\n');
}
