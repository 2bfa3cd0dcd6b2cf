import { FAILURE_TYPES } from '../../contract/failure-types';
import type { ReelflowActivities, SubmitAs } from '../../activities';
import { proxyReelflowLocalActivities } from '../activity-proxy';
import { workflowFailure } from '../errors';
import type { PipelineWorkflowInput } from '../pipeline-types';
import type { PipelineState } from '../pipeline-state';
import { kindOf } from '../steps/registry';

/** Checks that need zod or read the first bytes of inputs: local activities, outside the workflow sandbox. */
const checks = proxyReelflowLocalActivities<ReelflowActivities>({
  startToCloseTimeout: '1 minute',
  retry: { maximumAttempts: 3 },
});

/**
 * What a pipeline checks before anything is paid, in one local activity: the spec, then every step's
 * literal inputs at once (a bad input of step 3 stops the pipeline before step 1 is charged). A
 * refusal ends the pipeline here; otherwise it returns how the worker runs the pipeline's submits.
 */
export async function checkBeforeAnyPay(
  input: PipelineWorkflowInput,
  state: PipelineState,
): Promise<SubmitAs | undefined> {
  const { spec } = input;
  const preflighted =
    input.preflight === false
      ? []
      : spec.steps.flatMap((step, index) =>
          !('preflight' in step && step.preflight === false) && kindOf(step).preflights(step) ? [index] : [],
        );
  state.preflighting(preflighted);
  const checked = await state.inLocalActivity(() => checks.checkPipeline(spec, input.uriRules, preflighted));
  state.preflighting([]);
  if (!checked.ok)
    state.stop(
      'failed',
      workflowFailure(FAILURE_TYPES.invalidPipelineSpec, `invalid pipeline spec:\n${checked.message}`, {
        errors: checked.errors,
      }),
    );
  const errors: { path: string; message: string }[] = [];
  for (const { index, problems } of checked.refused) {
    const located = problems.map((p) => ({ path: `steps.${index}.input.${p.path}`, message: p.message }));
    const error = `preflight: ${located.map((p) => `${p.path}: ${p.message}`).join('; ')}; nothing was submitted`;
    state.update(index, { status: 'failed', error });
    errors.push(...located);
  }
  if (errors.length === 0) return checked.submitAs;
  const inputs = errors.length === 1 ? 'an input' : `${errors.length} inputs`;
  const refused = errors.map((e) => `${e.path}: ${e.message}`).join('; ');
  state.stop('failed', (summary) =>
    workflowFailure(
      FAILURE_TYPES.preflightRefused,
      `pipeline ${summary.name}: preflight refused ${inputs} before anything was submitted or charged: ${refused}`,
      summary,
      { errors },
    ),
  );
}
