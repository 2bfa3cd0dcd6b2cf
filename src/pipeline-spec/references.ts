import { ReferenceResolutionError } from './errors';

/**
 * References from one step's input to an earlier step's output, e.g.
 * `{ "$from": "generate", "path": "videos[0].url" }`. Pure: workflows import it.
 */

/** Path used when a reference names none: the first output video's URL. */
export const DEFAULT_REFERENCE_PATH = 'videos[0].url';

/**
 * Stands in for a reference while literal inputs are checked against the model schema: the
 * reference will become a URL, so any valid https URL keeps the check honest.
 */
export const REFERENCE_PLACEHOLDER_URL = 'https://reference.reelflow.invalid/placeholder.mp4';

/** An input value taken from an earlier step's output. */
export interface StepReference {
  $from: string;
  /** Dotted path with `[n]` indices into the earlier step's result; default `videos[0].url`. */
  path?: string;
}

/** True when a value is shaped like a reference (an object with a `$from` key). */
export function isReference(value: unknown): value is StepReference {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && '$from' in value;
}

/** One segment of a parsed path: a property name or an array index. */
export type PathSegment = string | number;

const PATH_TOKEN = /([A-Za-z_$][\w$-]*)|\[(\d+)\]|(\.)/gy;

/** Parses `videos[0].url` into `['videos', 0, 'url']`; returns null when the syntax is wrong. */
export function parseReferencePath(path: string): PathSegment[] | null {
  const segments: PathSegment[] = [];
  PATH_TOKEN.lastIndex = 0;
  let expectName = true;
  let index = 0;
  while (index < path.length) {
    PATH_TOKEN.lastIndex = index;
    const match = PATH_TOKEN.exec(path);
    if (!match) return null;
    if (match[1] !== undefined) {
      if (!expectName) return null;
      segments.push(match[1]);
      expectName = false;
    } else if (match[2] !== undefined) {
      if (segments.length === 0) return null;
      segments.push(Number(match[2]));
    } else {
      if (expectName) return null;
      expectName = true;
    }
    index = PATH_TOKEN.lastIndex;
  }
  return segments.length > 0 && !expectName ? segments : null;
}

/** Reads `path` from `value`; undefined when any segment is missing. */
export function readPath(value: unknown, path: string): unknown {
  const segments = parseReferencePath(path);
  if (!segments) return undefined;
  let current: unknown = value;
  for (const segment of segments) {
    if (current === null || typeof current !== 'object') return undefined;
    current = (current as Record<string | number, unknown>)[segment];
  }
  return current;
}

/** Calls `visit` on every reference inside an input, with its location (`video_url`, `image_urls.0`). */
export function forEachReference(
  input: unknown,
  visit: (reference: StepReference, path: PathSegment[]) => void,
  at: PathSegment[] = [],
): void {
  if (isReference(input)) {
    visit(input, at);
  } else if (Array.isArray(input)) {
    input.forEach((item, i) => forEachReference(item, visit, [...at, i]));
  } else if (typeof input === 'object' && input !== null) {
    for (const [key, value] of Object.entries(input)) forEachReference(value, visit, [...at, key]);
  }
}

/** Returns a copy of `input` with every reference replaced by `replace(reference, location)`. */
export function mapReferences(
  input: unknown,
  replace: (reference: StepReference, path: PathSegment[]) => unknown,
  at: PathSegment[] = [],
): unknown {
  if (isReference(input)) return replace(input, at);
  if (Array.isArray(input)) return input.map((item, i) => mapReferences(item, replace, [...at, i]));
  if (typeof input === 'object' && input !== null) {
    return Object.fromEntries(
      Object.entries(input).map(([key, value]) => [key, mapReferences(value, replace, [...at, key])]),
    );
  }
  return input;
}

/**
 * Replaces every reference in `input` with the value at its path in the named step's output.
 * Throws ReferenceResolutionError (naming the field) when a step has no output or the path is empty.
 */
export function resolveReferences(
  input: Record<string, unknown>,
  outputs: Readonly<Record<string, unknown>>,
  /** What a resolved value becomes (the pipeline swaps in archived copies of outputs); default itself. */
  substitute: (value: string) => unknown = (value) => value,
): Record<string, unknown> {
  return mapReferences(input, (reference, at) => {
    const location = at.join('.');
    const output = outputs[reference.$from];
    if (output === undefined) {
      throw new ReferenceResolutionError(`${location}: step "${reference.$from}" has no output to read`, location);
    }
    const path = reference.path ?? DEFAULT_REFERENCE_PATH;
    const value = readPath(output, path);
    if (typeof value !== 'string' || value.length === 0) {
      throw new ReferenceResolutionError(
        `${location}: output of step "${reference.$from}" has no string at ${path}`,
        location,
      );
    }
    return substitute(value);
  }) as Record<string, unknown>;
}
