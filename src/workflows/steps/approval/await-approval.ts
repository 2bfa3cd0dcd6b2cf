import { condition } from '@temporalio/workflow';
import { TIMER_SUMMARIES } from '../../../pipeline-spec/ui-text';
import type { ApprovalDecision, ApprovalVerdict, ApprovalView } from '../../approval-types';
import { approvalGates, type Gate } from './gates';

/** How long a gate waits when nothing says (hours), and the longest it may (a year). */
const DEFAULT_TIMEOUT_HOURS = 72;
const MAX_TIMEOUT_HOURS = 8760;
const HOUR_MS = 3_600_000;

/** Options of {@link awaitApproval}. */
export interface AwaitApprovalOptions {
  /** What the person looks at: one URL or several (shown by `reelflow status` and the Temporal UI's details). */
  preview?: string | string[];
  /** A line for the person deciding. */
  note?: string;
  /** Hours to wait for a decision; default 72, at most 8760. */
  timeoutHours?: number;
  /** The decision once `timeoutHours` passed with none; default `reject`. */
  onTimeout?: ApprovalVerdict;
  /** Told when the gate starts waiting and when it is decided (a pipeline shows it in the step's row). */
  observe?: (view: ApprovalView) => void;
}

/**
 * Waits in the calling workflow for a person to approve or reject `step`: a durable timer and a
 * condition, woken by the `decideApproval` update (`reelflow approve|reject <workflow> <step>`, or the
 * Temporal UI's "Send an Update" with `{"step": "<step>", "decision": "approve"}`). Costs no credits and
 * no activity. Resolves with the decision, `timedOut` when `onTimeout` made it; a rejection is not
 * thrown (the caller decides what it means). Each `step` may be awaited once per workflow run; a
 * cancel of the caller's scope ends the wait with a `CancelledFailure`.
 *
 * @example
 * const { decision, reason } = await awaitApproval('final-cut', { preview: cut.videos[0]!.url, timeoutHours: 24 });
 * if (decision === 'reject') throw ApplicationFailure.nonRetryable(`rejected: ${reason ?? 'no reason'}`);
 */
export async function awaitApproval(step: string, options: AwaitApprovalOptions = {}): Promise<ApprovalDecision> {
  const hours = options.timeoutHours ?? DEFAULT_TIMEOUT_HOURS;
  if (!(hours > 0 && hours <= MAX_TIMEOUT_HOURS))
    throw new RangeError(`timeoutHours: must be more than 0 and at most ${MAX_TIMEOUT_HOURS} (got ${hours})`);
  const onTimeout = options.onTimeout ?? 'reject';
  const gates = approvalGates();
  if (gates.has(step)) throw new Error(`step: the approval gate ${step} was already awaited in this workflow run`);
  const gate: Gate = { step };
  gates.set(step, gate);
  const view: ApprovalView = {
    ...(options.preview !== undefined ? { preview: options.preview } : {}),
    ...(options.note !== undefined ? { note: options.note } : {}),
    timeoutHours: hours,
    onTimeout,
    deadlineAt: Date.now() + hours * HOUR_MS,
  };
  options.observe?.(view);
  try {
    const decided = await condition(() => gate.decision !== undefined, hours * HOUR_MS, {
      summary: TIMER_SUMMARIES.approval(step, hours, onTimeout),
    });
    if (!decided) gate.decision = { decision: onTimeout, at: Date.now(), timedOut: true };
  } finally {
    // A wait cancelled before any decision: the gate no longer waits, so a late decision is refused.
    if (!gate.decision) gates.delete(step);
  }
  const decision = gate.decision as ApprovalDecision;
  const { deadlineAt: _deadline, ...shown } = view;
  options.observe?.({ ...shown, decision });
  return decision;
}
