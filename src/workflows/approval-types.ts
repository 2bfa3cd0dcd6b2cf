/**
 * The public types of approval gates (`"op": "approval"` in a spec, `awaitApproval` in a team's own
 * workflow): the decision a person sends with the `decideApproval` update, what a gate's row shows,
 * and what an approved gate gives the steps after it. Plain types, read by the CLI and the report.
 */

/** A person's (or the timeout's) answer to a gate. */
export type ApprovalVerdict = 'approve' | 'reject';

/** Arguments of the `decideApproval` update (the Temporal UI's "Send an Update", `reelflow approve|reject`). */
export interface DecideApprovalArgs {
  /** The gate's step id. */
  step: string;
  decision: ApprovalVerdict;
  /** Why (required by `reelflow reject`; up to 2,000 characters). */
  reason?: string;
  /** Who decided (a name or an address; up to 200 characters). */
  by?: string;
}

/** How a gate was decided: by whom and when, or by its timeout (`timedOut`, with `onTimeout`'s verdict). */
export interface ApprovalDecision {
  decision: ApprovalVerdict;
  reason?: string;
  by?: string;
  /** Epoch ms of workflow time. */
  at: number;
  timedOut?: true;
}

/** What a gate shows while it waits and once decided (the kind's own fields of its step row). */
export interface ApprovalView {
  /** The preview URL(s), references resolved, once the gate started. */
  preview?: string | string[];
  note?: string;
  timeoutHours: number;
  onTimeout: ApprovalVerdict;
  /** Epoch ms at which `onTimeout` decides, while it waits. */
  deadlineAt?: number;
  decision?: ApprovalDecision;
}

/**
 * The output of an approved gate, read by later steps: `{"$from": "<gate>", "path": "preview"}` (one
 * URL) or `"preview[1]"` (a list), and `"approval.by"`. No `videos`: a gate makes no media, so a
 * reference without a path (`videos[0].url`) to a gate is an error that names the path.
 */
export interface ApprovalOutput {
  /** The gate's preview as resolved: one URL or a list, as the spec wrote it; absent when it had none. */
  preview?: string | string[];
  approval: ApprovalDecision;
}
