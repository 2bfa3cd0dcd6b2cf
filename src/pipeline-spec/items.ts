import { ReferenceResolutionError } from './errors';
import { parseReferencePath, readPath, type PathSegment } from './references';

/**
 * A fan-out step's item inside its input: `{"$item": "<field>"}` (a dotted path allowed) is the
 * value of that field of the item the run is for. Pure: workflows import it.
 */

/** An input value read from the current item of a fan-out step (`each`). */
export interface ItemReference {
  $item: string;
}

/** True when a value is shaped like an item reference (an object with an `$item` key). */
export function isItemReference(value: unknown): value is ItemReference {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && '$item' in value;
}

/** Calls `visit` on every item reference inside an input, with its location. */
export function forEachItemReference(
  input: unknown,
  visit: (reference: ItemReference, path: PathSegment[]) => void,
  at: PathSegment[] = [],
): void {
  if (isItemReference(input)) visit(input, at);
  else if (Array.isArray(input)) input.forEach((value, i) => forEachItemReference(value, visit, [...at, i]));
  else if (typeof input === 'object' && input !== null)
    for (const [key, value] of Object.entries(input)) forEachItemReference(value, visit, [...at, key]);
}

/** Why an item reference is malformed (not a single `$item` naming a path), or undefined when it is fine. */
export function itemReferenceProblem(reference: ItemReference): string | undefined {
  const keys = Object.keys(reference);
  if (keys.length !== 1) return `an item reference has only "$item" (got ${keys.map((k) => `"${k}"`).join(', ')})`;
  if (typeof reference.$item !== 'string' || parseReferencePath(reference.$item) === null)
    return 'must name a field of the item, such as "prompt" or "shot.image"';
  return undefined;
}

/**
 * A copy of `input` with every item reference replaced by the item's value at its path. Throws
 * ReferenceResolutionError naming the field when the item has no such value.
 */
export function resolveItemReferences(input: Record<string, unknown>, item: unknown): Record<string, unknown> {
  return mapItems(input, item, []) as Record<string, unknown>;
}

function mapItems(value: unknown, item: unknown, at: PathSegment[]): unknown {
  if (isItemReference(value)) {
    const found = readPath(item, value.$item);
    if (found === undefined) {
      const location = at.join('.');
      throw new ReferenceResolutionError(`${location}: the item has no field ${value.$item}`, location);
    }
    return found;
  }
  if (Array.isArray(value)) return value.map((entry, i) => mapItems(entry, item, [...at, i]));
  if (typeof value === 'object' && value !== null)
    return Object.fromEntries(Object.entries(value).map(([key, entry]) => [key, mapItems(entry, item, [...at, key])]));
  return value;
}
