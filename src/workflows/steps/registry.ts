import type { PipelineStep } from '../../pipeline-spec/spec';
import type { StepKindKey, StepOfKind } from '../../pipeline-spec/steps/registry';
import { stepKindKeyOf } from '../../pipeline-spec/steps/match';
import { approvalStep } from './approval/kind';
import { jobStep } from './job/kind';
import type { StepKind } from './kind';
import { opStep } from './op/kind';

/**
 * Every kind of step the pipeline runs, by the spec field that marks it: the workflow side of
 * src/pipeline-spec/steps/registry.ts. Typed by that table, so a kind registered there and missing here (or
 * the other way round) does not compile.
 */
const STEP_KINDS: { [K in StepKindKey]: StepKind<StepOfKind<K>> } = {
  model: jobStep,
  op: opStep,
  approval: approvalStep,
};

const KEYS = Object.keys(STEP_KINDS) as StepKindKey[];

/** The kind of `step`: the row its spec side matches (the spec was validated, so there is one). */
export function kindOf(step: PipelineStep): StepKind {
  const key = stepKindKeyOf(step);
  if (!key) throw new TypeError(`step ${step.id} is of no known kind (${KEYS.join(', ')})`);
  return STEP_KINDS[key] as StepKind;
}

/** Every kind, in the table's order (the pipeline opens and closes each). */
export function stepKinds(): StepKind[] {
  return KEYS.map((key) => STEP_KINDS[key] as StepKind);
}
