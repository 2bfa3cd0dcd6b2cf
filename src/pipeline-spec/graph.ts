import { referencedStepIds } from './references';
import type { GraphStepFields } from './step-fields';

/**
 * The graph of a version-2 spec: a step runs once its dependencies are done — the steps its `$from`
 * references read and those its `after` names. Pure (no zod): the workflow orders its nodes with it,
 * and the spec's validation (./graph-checks.ts) refuses what cannot run (docs/pipelines.md).
 */

/** What the graph reads of a spec and its steps. */
export interface GraphSpec {
  version?: 1 | 2;
  steps: readonly GraphStep[];
}
export type GraphStep = GraphStepFields & { id: string; input: Record<string, unknown> };

/** The spec's version: 2 runs the graph; 1 (or none) runs each step after the one before it. */
export function specVersion(spec: Pick<GraphSpec, 'version'>): 1 | 2 {
  return spec.version === 2 ? 2 : 1;
}

/** The ids a step of a version-2 spec waits for: those its references read, then those `after` names, each once. */
export function dependenciesOf(step: GraphStep): string[] {
  const ids = referencedStepIds(step.input);
  for (const id of step.after ?? []) if (!ids.includes(id)) ids.push(id);
  return ids;
}

/** The first cycle among the steps' dependencies, as the ids around it (`[a, b, a]`), or undefined. */
export function findCycle(steps: readonly GraphStep[]): string[] | undefined {
  const byId = new Map(steps.map((step) => [step.id, step]));
  const done = new Set<string>();
  const visit = (id: string, trail: string[]): string[] | undefined => {
    if (trail.includes(id)) return [...trail.slice(trail.indexOf(id)), id];
    if (done.has(id)) return undefined;
    const step = byId.get(id);
    for (const dep of step ? dependenciesOf(step) : []) {
      const cycle = visit(dep, [...trail, id]);
      if (cycle) return cycle;
    }
    done.add(id);
    return undefined;
  };
  for (const step of steps) {
    const cycle = visit(step.id, []);
    if (cycle) return cycle;
  }
  return undefined;
}

/** The steps of a version-2 spec in an order where each comes after its dependencies (the spec was validated). */
export function topologicalOrder<S extends GraphStep>(steps: readonly S[]): S[] {
  const placed = new Set<string>();
  const order: S[] = [];
  while (order.length < steps.length) {
    const ready = steps.filter((s) => !placed.has(s.id) && dependenciesOf(s).every((id) => placed.has(id)));
    if (ready.length === 0) throw new TypeError('the steps form a cycle');
    for (const step of ready) {
      placed.add(step.id);
      order.push(step);
    }
  }
  return order;
}
