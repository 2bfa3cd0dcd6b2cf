import { isCancellation } from '@temporalio/workflow';
import { FAILURE_TYPES } from '../../../contract/failure-types';
import type { ApprovalStep } from '../../../pipeline-spec/spec';
import { referencedStepIds } from '../../../pipeline-spec/references';
import type { ApprovalOutput, ApprovalView } from '../../approval-types';
import { workflowFailure } from '../../errors';
import type { StepSummary } from '../../pipeline-types';
import type { StepKind } from '../kind';
import { awaitApproval } from './await-approval';
import { approvalGates } from './gates';

/**
 * The approval gate as a kind of step (`"op": "approval"`): the pipeline waits for a person's
 * decision (`awaitApproval`, woken by the `decideApproval` update) before any later step starts.
 * Approved: the gate completes with its preview as output ({@link ApprovalOutput}). Rejected (by a
 * person or `onTimeout`): it fails with `ApprovalRejected`, and the pipeline ends `rejected`.
 */
export const approvalStep: StepKind<ApprovalStep> = {
  key: 'approval',
  open: () => void approvalGates(),
  dependencies: (step) => referencedStepIds(step.input),
  // Nothing is fetched or paid: the preview is for a person.
  preflights: () => false,
  summary: (step) => ({
    op: 'approval',
    approval: {
      ...(step.input.note !== undefined ? { note: step.input.note } : {}),
      timeoutHours: step.timeoutHours,
      onTimeout: step.onTimeout,
    },
  }),
  async run(step, run) {
    // The step's row: what the gate shows, and its output once approved (the pipeline reads outputs from rows).
    const row: { view?: ApprovalView; output?: ApprovalOutput } = {};
    const progress = {
      view: (): Partial<StepSummary> => {
        const { view, output } = row;
        return {
          ...(view ? { approval: view, phase: view.decision ? 'done' : 'person' } : {}),
          ...(output ? { output } : {}),
        };
      },
      // The gate hands nothing over, so the archive copies of earlier outputs may start while it waits.
      submitted: () => true,
      holdsTaskOpen: () => false,
    };
    const preview = previewOf(run.input.preview);
    const decided = awaitApproval(step.id, {
      ...(preview !== undefined ? { preview } : {}),
      ...(step.input.note !== undefined ? { note: step.input.note } : {}),
      timeoutHours: step.timeoutHours,
      onTimeout: step.onTimeout,
      observe: (next) => {
        row.view = next;
        run.observe(progress);
      },
    });
    // Cancelled while it waits (an operator's cancelStep, or the pipeline's cancel): no decision, nothing later starts.
    const decision = await decided.catch((error: unknown) => {
      if (isCancellation(error)) return undefined;
      throw error;
    });
    if (!decision) return { status: 'cancelled' };
    if (decision.decision === 'reject') {
      const who = decision.timedOut ? `its timeout (${step.timeoutHours} h)` : (decision.by ?? 'a person');
      throw workflowFailure(
        FAILURE_TYPES.approvalRejected,
        `step ${step.id} was rejected by ${who}${decision.reason ? `: ${decision.reason}` : ''}`,
        decision,
      );
    }
    const output: ApprovalOutput = { ...(preview !== undefined ? { preview } : {}), approval: decision };
    row.output = output;
    run.observe(progress);
    return { status: 'completed', result: output };
  },
  // A decided approval is carried as it is: its decision is in its output; nobody is asked again.
  resume: (_step, carried) => ({ status: 'completed', carriedFrom: carried.paidInRunId, output: carried.output }),
  revokeAhead: async () => {},
  settled: async () => {},
};

/**
 * The preview as URLs: a reference resolves to the output's URL, or to its archived copy, which
 * keeps that URL (the copy itself is for the steps that read it).
 */
function previewOf(value: unknown): string | string[] | undefined {
  const urlOf = (item: unknown): string =>
    typeof item === 'string' ? item : String((item as { url?: unknown } | null)?.url ?? '');
  if (value === undefined) return undefined;
  return Array.isArray(value) ? value.map(urlOf) : urlOf(value);
}
