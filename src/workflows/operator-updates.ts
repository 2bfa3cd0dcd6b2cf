import type { PipelineSummary, StepSummary } from './pipeline-types';
import { OperatorRefusal } from './errors';
import type { AmbiguousSubmit, ResolveDecision } from './recovery-types';

/**
 * The validators of the operator updates: each refuses bad input with a reason before anything is
 * written to history. Pure functions, so they are tested without a server.
 */

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function stepOf(summary: PipelineSummary, args: unknown, update: string): StepSummary {
  const ids = summary.steps.map((s) => s.id).join(', ');
  if (!isObject(args) || typeof args.step !== 'string' || args.step === '')
    throw new OperatorRefusal(`${update} needs {"step": "<step id>"}; steps: ${ids}`);
  const step = summary.steps.find((s) => s.id === args.step);
  if (!step) throw new OperatorRefusal(`step: no step "${args.step}" in pipeline ${summary.name} (steps: ${ids})`);
  return step;
}

function stillRunning(summary: PipelineSummary): void {
  if (summary.status !== 'running')
    throw new OperatorRefusal(`pipeline ${summary.name} is ${summary.status}; it can no longer be changed`);
}

/** Refuses a cancel of an unknown step, or of one that is over (completed, failed, cancelled, skipped). */
export function checkCancelStep(summary: PipelineSummary, args: unknown): StepSummary {
  stillRunning(summary);
  const step = stepOf(summary, args, 'cancelStep');
  if (step.status !== 'pending' && step.status !== 'running')
    throw new OperatorRefusal(
      `step: ${step.id} is ${step.status}; only a pending or running step can be cancelled${step.status === 'completed' ? ' (its output is already paid for and kept)' : ''}`,
    );
  if (isObject(args) && args.reason !== undefined && typeof args.reason !== 'string')
    throw new OperatorRefusal('reason: must be a string');
  return step;
}

/** Refuses a cancel of a pipeline that is over. */
export function checkCancelPipeline(summary: PipelineSummary, args: unknown): void {
  stillRunning(summary);
  if (args === undefined || args === null) return;
  if (!isObject(args) || (args.reason !== undefined && typeof args.reason !== 'string'))
    throw new OperatorRefusal('cancelPipeline takes no argument or {"reason": "<text>"}');
}

/** Refuses a budget that is not a positive integer, is below what is already spent, or does not raise it. */
export function checkRaiseBudget(summary: PipelineSummary, args: unknown): number {
  stillRunning(summary);
  const credits = isObject(args) ? args.credits : undefined;
  if (typeof credits !== 'number' || !Number.isInteger(credits) || credits <= 0)
    throw new OperatorRefusal('credits: must be a positive whole number of credits, e.g. {"credits": 500}');
  const spent = summary.ledger.net;
  if (credits < spent)
    throw new OperatorRefusal(
      `credits: a budget of ${credits} is below the ${spent} credits this pipeline has already spent`,
    );
  if (summary.budgetCredits !== null && credits <= summary.budgetCredits)
    throw new OperatorRefusal(
      `credits: ${credits} does not raise the current budget of ${summary.budgetCredits} credits`,
    );
  return credits;
}

/** Refuses a retry of a step that is not waiting to resubmit after a failed attempt. */
export function checkRetryStep(summary: PipelineSummary, args: unknown): StepSummary {
  stillRunning(summary);
  const step = stepOf(summary, args, 'retryStep');
  const { phase } = step;
  if (step.status !== 'running' || phase !== 'backing-off')
    throw new OperatorRefusal(
      `step: ${step.id} is ${step.status}${phase && step.status === 'running' ? ` (${phase})` : ''}, not waiting to resubmit after a failed attempt; only such a step can be retried now`,
    );
  return step;
}

/** Request ids the service issues are opaque; this only keeps out what cannot be one (blank, whitespace, paths, huge). */
const REQUEST_ID_PATTERN = /^[A-Za-z0-9._:-]{1,200}$/;

/** `resolveAmbiguousStep`'s validator: throws an Error naming the field and the reason. */
export function validateResolution(waiting: AmbiguousSubmit | undefined, decision: ResolveDecision): void {
  if (!decision || typeof decision !== 'object')
    throw new Error('decision: must be an object {step, action, requestId?}');
  if (!waiting || waiting.state !== 'waiting')
    throw new Error(
      `step: no ambiguous step is waiting for a decision${waiting ? ` (step ${waiting.step} is ${waiting.state})` : ''}`,
    );
  if (decision.step !== waiting.step)
    throw new Error(`step: the waiting ambiguous step is ${waiting.step}, not ${String(decision.step)}`);
  if (decision.action !== 'adopt' && decision.action !== 'resubmit' && decision.action !== 'give-up')
    throw new Error(`action: must be adopt, resubmit or give-up (got ${JSON.stringify(decision.action)})`);
  if (
    decision.action === 'adopt' &&
    (typeof decision.requestId !== 'string' || !REQUEST_ID_PATTERN.test(decision.requestId))
  ) {
    throw new Error('requestId: adopt needs the request id of the job (letters, digits, . _ : -; up to 200)');
  }
  if (decision.action !== 'adopt' && decision.requestId !== undefined)
    throw new Error(`requestId: only adopt takes a request id`);
  if (decision.note !== undefined && (typeof decision.note !== 'string' || decision.note.length > 500))
    throw new Error('note: must be text of at most 500 characters');
}
