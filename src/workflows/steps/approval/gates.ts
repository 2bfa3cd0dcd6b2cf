import { setHandler } from '@temporalio/workflow';
import type { ApprovalDecision, DecideApprovalArgs } from '../../approval-types';
import { decideApprovalUpdate } from '../../definitions';
import { OperatorRefusal } from '../../errors';
import type { OperatorAnswer } from '../../pipeline-types';

/** Longest reason and name a decision may carry (they are kept in history and shown in the report). */
const DECISION_LIMITS = { reason: 2000, by: 200 } as const;

/** One gate of this workflow that started waiting: its decision once there is one. */
export interface Gate {
  readonly step: string;
  decision?: ApprovalDecision;
}

let shared: Map<string, Gate> | undefined;

/**
 * This workflow's approval gates, by step id; the first call registers the `decideApproval` update
 * (a gate opens it before the workflow's first await, so a decision is never refused for want of a handler).
 */
export function approvalGates(): Map<string, Gate> {
  if (shared) return shared;
  const gates = (shared = new Map());
  setHandler(decideApprovalUpdate, (args) => decide(gates, args), {
    validator: (args) => void checkDecision(gates, args),
  });
  return gates;
}

function decide(gates: Map<string, Gate>, args: DecideApprovalArgs): OperatorAnswer {
  const gate = checkDecision(gates, args);
  const { decision, reason, by } = args;
  gate.decision = {
    decision,
    ...(reason?.trim() ? { reason: reason.trim() } : {}),
    ...(by?.trim() ? { by: by.trim() } : {}),
    at: Date.now(),
  };
  const message =
    decision === 'approve'
      ? `step ${gate.step} approved: the steps after it start`
      : `step ${gate.step} rejected: nothing after it starts; the pipeline ends rejected`;
  return { ok: true, message };
}

/**
 * The validator of `decideApproval`: refuses bad arguments, a step that is no gate waiting here, and a
 * gate already decided, each naming the field and the reason.
 */
export function checkDecision(gates: ReadonlyMap<string, Gate>, args: unknown): Gate {
  const waiting = [...gates.values()].filter((g) => !g.decision).map((g) => g.step);
  const list = waiting.length ? `waiting: ${waiting.join(', ')}` : 'no gate is waiting';
  if (typeof args !== 'object' || args === null || Array.isArray(args))
    throw new OperatorRefusal(`decideApproval needs {"step": "<gate>", "decision": "approve" | "reject"} (${list})`);
  const { step, decision, reason, by } = args as Record<string, unknown>;
  if (typeof step !== 'string' || step === '') throw new OperatorRefusal(`step: must name an approval gate (${list})`);
  if (decision !== 'approve' && decision !== 'reject')
    throw new OperatorRefusal(`decision: must be "approve" or "reject" (got ${JSON.stringify(decision)})`);
  if (reason !== undefined && (typeof reason !== 'string' || reason.length > DECISION_LIMITS.reason))
    throw new OperatorRefusal(`reason: must be text of at most ${DECISION_LIMITS.reason} characters`);
  if (by !== undefined && (typeof by !== 'string' || by.length > DECISION_LIMITS.by))
    throw new OperatorRefusal(`by: must be text of at most ${DECISION_LIMITS.by} characters`);
  const gate = gates.get(step);
  if (!gate) throw new OperatorRefusal(`step: ${step} is not an approval gate waiting for a decision (${list})`);
  if (gate.decision) {
    const { decision: verdict, by: who } = gate.decision;
    throw new OperatorRefusal(
      `step: ${step} was already ${verdict === 'approve' ? 'approved' : 'rejected'}${who ? ` by ${who}` : ''}; a gate is decided once`,
    );
  }
  return gate;
}
