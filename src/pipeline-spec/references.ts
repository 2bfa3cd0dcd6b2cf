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

/** What stands in for `reference` while inputs are checked or quoted: the placeholder URL, a list of it for `[*]`. */
export function referencePlaceholder(reference: StepReference): string | string[] {
  return reference.path?.startsWith('[*]') ? [REFERENCE_PLACEHOLDER_URL] : REFERENCE_PLACEHOLDER_URL;
}

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

/** One segment of a parsed path: a property name, an array index, or every item of a list (ALL_ITEMS). */
export type PathSegment = string | number;

/** The segment `[*]`: every item of a fan-out step's output list (only first in a path). */
export const ALL_ITEMS = '*';

const PATH_TOKEN = /([A-Za-z_$][\w$-]*)|\[(\d+|\*)\]|(\.)/gy;

/**
 * Parses `videos[0].url` into `['videos', 0, 'url']`, and a fan-out step's `[*].videos[0].url` /
 * `[2].videos[0].url` into `['*', 'videos', 0, 'url']` / `[2, 'videos', 0, 'url']`; null when the
 * syntax is wrong (`[*]` anywhere but first among them).
 */
export function parseReferencePath(path: string): PathSegment[] | null {
  const segments: PathSegment[] = [];
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
      const all = match[2] === ALL_ITEMS;
      // An index follows a name or another index, or starts the path (a fan-out step's list); `[*]` only starts it.
      if ((all && segments.length > 0) || (segments.length > 0 && expectName)) return null;
      segments.push(all ? ALL_ITEMS : Number(match[2]));
      expectName = false;
    } else {
      if (expectName) return null;
      expectName = true;
    }
    index = PATH_TOKEN.lastIndex;
  }
  return segments.length > 0 && !expectName ? segments : null;
}

/** Reads `path` from `value`; undefined when any segment is missing. `[*]` reads the rest from every item (a list). */
export function readPath(value: unknown, path: string): unknown {
  const segments = parseReferencePath(path);
  return segments ? readSegments(value, segments) : undefined;
}

function readSegments(value: unknown, segments: readonly PathSegment[]): unknown {
  let current: unknown = value;
  for (const [at, segment] of segments.entries()) {
    if (segment === ALL_ITEMS) {
      if (!Array.isArray(current)) return undefined;
      const rest = segments.slice(at + 1);
      return current.map((item) => readSegments(item, rest));
    }
    if (current === null || typeof current !== 'object') return undefined;
    current = (current as Record<string | number, unknown>)[segment];
  }
  return current;
}

/** True when `path` reads a fan-out step's list (it starts with `[*]` or `[n]`). */
export function readsItems(path: string | undefined): boolean {
  return path !== undefined && path.startsWith('[');
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

/** The ids of the steps `input`'s references read, each once, in the order they first appear. */
export function referencedStepIds(input: unknown): string[] {
  const ids: string[] = [];
  forEachReference(input, ({ $from }) => {
    if (!ids.includes($from)) ids.push($from);
  });
  return ids;
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
    const isText = (v: unknown): v is string => typeof v === 'string' && v.length > 0;
    if (path.startsWith(`[${ALL_ITEMS}]`) && Array.isArray(value) && value.every(isText)) return value.map(substitute);
    if (!isText(value)) {
      const what = path.startsWith(`[${ALL_ITEMS}]`) ? 'list of strings' : 'string';
      throw new ReferenceResolutionError(
        `${location}: output of step "${reference.$from}" has no ${what} at ${path}`,
        location,
      );
    }
    return substitute(value);
  }) as Record<string, unknown>;
}
