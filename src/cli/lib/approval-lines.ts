import { approvalStateText, previewUrls } from '../../pipeline-spec/ui-text';
import type { ApprovalOutput, ApprovalView } from '../../workflows/approval-types';
import type { StepSummary } from '../../workflows/pipeline-types';

/**
 * How the console shows an approval gate: its state in words, what to look at, and while it waits the
 * two commands that decide it; once decided, who decided, when and why.
 */

/** A gate's view, its decision included (a resumed run carries the decision in the output only); undefined for other steps. */
function gateOf(step: StepSummary): ApprovalView | undefined {
  if (!('approval' in step)) return undefined;
  const carried = (step.output as ApprovalOutput | undefined)?.approval;
  return { ...step.approval, ...(!step.approval.decision && carried ? { decision: carried } : {}) };
}

/** `waiting for a person`, `approved by ann`, `rejected (timed out): …`; undefined for a step that is no gate. */
export function gateState(step: StepSummary): string | undefined {
  const gate = gateOf(step);
  if (!gate || (step.status !== 'running' && !gate.decision)) return undefined;
  return approvalStateText(gate);
}

/** The lines under a gate's step line (none for other steps, or a gate not started). */
export function gateLines(step: StepSummary, workflowId: string): string[] {
  const gate = gateOf(step);
  if (!gate) return [];
  const lines = previewUrls(gate).map((url) => `      preview: ${url}`);
  if (gate.note) lines.push(`      note: ${gate.note}`);
  const { decision } = gate;
  if (decision) {
    const when = new Date(decision.at).toISOString();
    lines.push(`      decided ${when}: ${approvalStateText(gate)}`);
  } else if (step.status === 'running') {
    if (gate.deadlineAt !== undefined)
      lines.push(`      ${gate.onTimeout}s by itself at ${new Date(gate.deadlineAt).toISOString()} without a decision`);
    lines.push(`      approve: reelflow approve ${workflowId} ${step.id}`);
    lines.push(`      reject:  reelflow reject ${workflowId} ${step.id} --reason "<why>"`);
  }
  return step.status === 'pending' ? [] : lines;
}
