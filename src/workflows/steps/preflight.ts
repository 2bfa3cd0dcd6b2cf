import { ActivityFailure, ApplicationFailure } from '@temporalio/workflow';
import { FAILURE_TYPES } from '../../contract/failure-types';
import type { PreflightFailureDetails } from '../../activities/preflight';
import { MODELS } from '../../contract/model-metadata';
import type { PipelineStep } from '../../spec/spec';
import type { PipelineSummary } from '../pipeline-types';
import type { PipelineState } from '../pipeline-state';
import { preflightActivities } from './proxies';

/** True when a step gives at least one URI input literally (a reference to an earlier output is not checked). */
function hasLiteralMedia(step: PipelineStep): boolean {
  const meta = MODELS[step.model];
  return [...meta.uriFields, ...meta.uriListFields].some((field) => {
    const value = step.input[field];
    return typeof value === 'string' || (Array.isArray(value) && value.some((item) => typeof item === 'string'));
  });
}

/**
 * Checks every step's literal inputs before anything is paid, all steps at once (a bad voice track
 * for step 3 stops the pipeline before step 1 is charged). Returns the failure to end the pipeline
 * with (made from the final summary), naming each field (`steps.1.input.audio_url: host … does not resolve`), or null when every
 * input passed. Steps with `preflight: false` are skipped.
 */
export async function preflightSteps(
  steps: readonly PipelineStep[],
  state: PipelineState,
): Promise<((summary: PipelineSummary) => ApplicationFailure) | null> {
  const checked = steps.flatMap((step, index) =>
    step.preflight !== false && hasLiteralMedia(step) ? [{ step, index }] : [],
  );
  if (checked.length === 0) return null;
  state.preflighting(checked.map(({ index }) => index));
  const outcomes = await Promise.all(
    checked.map(({ step, index }) =>
      preflightActivities.preflightJob(step.model, step.input).then(
        () => null,
        (error: unknown) => ({ index, error }),
      ),
    ),
  );
  const errors: { path: string; message: string }[] = [];
  state.preflighting([]);
  for (const outcome of outcomes) {
    if (!outcome) continue;
    const cause = outcome.error instanceof ActivityFailure ? outcome.error.cause : undefined;
    if (
      !(cause instanceof ApplicationFailure) ||
      (cause.type !== FAILURE_TYPES.preflightRefused && cause.type !== FAILURE_TYPES.preflightUnavailable)
    )
      throw outcome.error;
    const problems =
      cause.type === FAILURE_TYPES.preflightRefused
        ? ((cause.details?.[0] as PreflightFailureDetails | undefined)?.problems ?? [])
        : [];
    // An input that could not be checked in time (PreflightUnavailable after its retries) stops the step too.
    const found = problems.length > 0 ? problems : [{ path: '(input)', message: cause.message }];
    const located = found.map((p) => ({ path: `steps.${outcome.index}.input.${p.path}`, message: p.message }));
    const error = `preflight: ${located.map((p) => `${p.path}: ${p.message}`).join('; ')}; nothing was submitted`;
    state.update(outcome.index, { status: 'failed', error });
    errors.push(...located);
  }
  if (errors.length === 0) return null;
  return (summary) =>
    ApplicationFailure.create({
      type: FAILURE_TYPES.preflightRefused,
      nonRetryable: true,
      message: `pipeline ${summary.name}: preflight refused ${errors.length === 1 ? 'an input' : `${errors.length} inputs`} before anything was submitted or charged: ${errors.map((e) => `${e.path}: ${e.message}`).join('; ')}`,
      details: [summary, { errors }],
    });
}
