import { approvalStateText, previewUrls } from '../pipeline-spec/ui-text';
import type { ApprovalOutput } from '../workflows/approval-types';
import type { StepSummary } from '../workflows/pipeline-types';
import type { ReportApproval, ReportVideo } from './model';

/**
 * An approval gate in the report: what the person was shown (played from the copy the report already
 * holds of an earlier step's output when it is one, else from its URL) and how the gate was decided.
 */

const IMAGE = /\.(png|jpe?g|webp|gif|avif)(\?|#|$)/i;

/** The gate's part of its report step; undefined for a step that is no gate. */
export function reportApproval(step: StepSummary, shown: readonly ReportVideo[]): ReportApproval | undefined {
  if (!('approval' in step)) return undefined;
  const carried = (step.output as ApprovalOutput | undefined)?.approval;
  const gate = { ...step.approval, ...(!step.approval.decision && carried ? { decision: carried } : {}) };
  const { decision } = gate;
  return {
    state: step.status === 'pending' ? 'not reached' : approvalStateText(gate),
    previews: previewUrls(gate).map((url) => {
      const copy = shown.find((video) => video.url === url && video.src);
      return { url, src: copy?.src ?? url, kind: IMAGE.test(url) ? 'image' : 'video' };
    }),
    ...(gate.note ? { note: gate.note } : {}),
    ...(decision
      ? {
          decision: {
            decision: decision.decision,
            at: new Date(decision.at).toISOString(),
            ...(decision.reason ? { reason: decision.reason } : {}),
            ...(decision.by ? { by: decision.by } : {}),
            ...(decision.timedOut ? { timedOut: true as const } : {}),
          },
        }
      : {}),
  };
}

/** The gate's previews and decision as HTML rows and media (the caller escapes with `h`). */
export function approvalHtml(approval: ReportApproval, label: string, h: (value: unknown) => string): string {
  const media = approval.previews.map((p, i) =>
    p.kind === 'image'
      ? `<figure><img src="${h(p.src)}" alt="${h(`${label}: preview ${i + 1}`)}"><figcaption><a href="${h(p.url)}">preview ${i + 1}</a></figcaption></figure>`
      : `<figure><video controls preload="metadata" playsinline src="${h(p.src)}" aria-label="${h(`${label}: preview ${i + 1}`)}"></video><figcaption><a href="${h(p.url)}">preview ${i + 1}</a></figcaption></figure>`,
  );
  const { decision } = approval;
  const decided = decision
    ? `<p class="decision" data-decision="${h(decision.decision)}">${h(approval.state)} · <time datetime="${h(decision.at)}">${h(decision.at.replace('T', ' ').replace(/\.\d+Z$/, ' UTC'))}</time></p>`
    : `<p class="decision">${h(approval.state)}</p>`;
  return `${media.length ? `<div class="media">${media.join('\n')}</div>` : ''}${approval.note ? `<p class="meta">${h(approval.note)}</p>` : ''}${decided}`;
}
