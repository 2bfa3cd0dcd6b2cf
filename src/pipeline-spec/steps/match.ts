type WrittenStep = Readonly<Record<string, unknown>>;

/**
 * How a step as written tells which kind it is of, by kind: plain data, so the workflow sandbox
 * (src/workflows/steps/registry.ts) and the spec's validation read the same table. Kinds may share a
 * field (`op`) and tell themselves apart by its value; at most one kind matches a step. The kinds'
 * tables (./registry.ts, src/workflows/steps/registry.ts) are typed by this one's keys, so a kind
 * missing from either does not compile.
 */
const STEP_KIND_MATCHERS = {
  model: (step: WrittenStep) => 'model' in step,
  /** A local media operation: `op` names it (`approval`, a person's decision, is a kind of its own). */
  op: (step: WrittenStep) => 'op' in step && step.op !== 'approval',
  approval: (step: WrittenStep) => step.op === 'approval',
} as const satisfies Record<string, (step: WrittenStep) => boolean>;

/** The name of a kind of step (`model`: a paid job). */
export type StepKindKey = keyof typeof STEP_KIND_MATCHERS;

const KEYS = Object.keys(STEP_KIND_MATCHERS) as StepKindKey[];

/** The name of the kind `step` is of, or undefined when it is of none. */
export function stepKindKeyOf(step: WrittenStep): StepKindKey | undefined {
  return KEYS.find((key) => STEP_KIND_MATCHERS[key](step));
}

/** Every kind `step` matches (a valid step matches one; a step written with two kinds' keys, several). */
export function stepKindKeysOf(step: WrittenStep): StepKindKey[] {
  return KEYS.filter((key) => STEP_KIND_MATCHERS[key](step));
}
