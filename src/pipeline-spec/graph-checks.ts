import { formatPath, type FieldError } from '../contract';
import { findCycle, specVersion, type GraphSpec, type GraphStep } from './graph';
import { forEachItemReference, itemReferenceProblem } from './items';
import {
  DEFAULT_REFERENCE_PATH,
  forEachReference,
  parseReferencePath,
  readsItems,
  type PathSegment,
} from './references';

/** The checks of a spec's graph fields (./graph.ts), run by the spec's validation (./spec.ts). */

/**
 * What the graph fields of a spec get wrong, with field paths: `after`, `each` and `onFailure` on a
 * version-1 spec; unknown ids; cycles (named); references that do not fit the step they read (a fan-out
 * step's output is a list: `[*]…` or `[n]…` with n below its item count); `$item` outside `each`.
 */
export function graphErrors(spec: GraphSpec): FieldError[] {
  const errors: FieldError[] = [];
  const v2 = specVersion(spec) === 2;
  const byId = new Map(spec.steps.map((step) => [step.id, step]));
  spec.steps.forEach((step, index) => {
    const at = ['steps', index];
    const push = (path: PathSegment[], message: string) => errors.push({ path: formatPath([...at, ...path]), message });
    for (const field of ['after', 'each', 'onFailure'] as const)
      if (!v2 && step[field] !== undefined)
        push([field], 'needs "version": 2 (a version-1 spec runs each step after the one before it)');
    if (step.onFailure !== undefined && step.each === undefined) push(['onFailure'], 'only a step with each has it');
    forEachItemReference(step.input, (reference, where) => {
      const problem = step.each ? itemReferenceProblem(reference) : '$item is read only in a step with each';
      if (problem) push(['input', ...where], problem);
    });
    if (!v2) return;
    step.after?.forEach((id, i) => {
      if (id === step.id) push(['after', i], 'a step cannot come after itself');
      else if (!byId.has(id)) push(['after', i], `names no step of this spec (got "${id}")`);
    });
    forEachReference(step.input, (reference, where) => {
      const target = byId.get(reference.$from);
      if (!target || target === step) return; // spec.ts says why
      const problem = pathProblem(target, reference.path);
      if (problem) push(['input', ...where, 'path'], problem);
    });
  });
  if (v2 && errors.length === 0) errors.push(...cycleErrors(spec));
  return errors;
}

/** Why `path` cannot read `target`'s output, or undefined. */
function pathProblem(target: GraphStep, path: string | undefined): string | undefined {
  const items = target.each?.length;
  if (items === undefined)
    return readsItems(path) ? `step "${target.id}" has no each: its output is not a list` : undefined;
  if (!readsItems(path))
    return `step "${target.id}" fans out: its output is a list; read "[*].${path ?? DEFAULT_REFERENCE_PATH}" or "[n].…"`;
  const first = parseReferencePath(path as string)?.[0];
  if (typeof first === 'number' && first >= items)
    return `step "${target.id}" has ${items} item(s): item ${first} cannot have run`;
  return undefined;
}

/** The cycle among the steps, if any, reported at the field of its first step that closes it. */
function cycleErrors(spec: GraphSpec): FieldError[] {
  const cycle = findCycle(spec.steps);
  if (!cycle) return [];
  const [first, next] = cycle as [string, string];
  const index = spec.steps.findIndex((step) => step.id === first);
  const step = spec.steps[index] as GraphStep;
  let path: PathSegment[] = ['after', (step.after ?? []).indexOf(next)];
  forEachReference(step.input, (reference, where) => {
    if (reference.$from === next) path = ['input', ...where, '$from'];
  });
  return [{ path: formatPath(['steps', index, ...path]), message: `forms a cycle: ${cycle.join(' → ')}` }];
}
