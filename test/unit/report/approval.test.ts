import { approvalHtml, reportApproval } from '../../../src/report/approval';
import { escapeHtml } from '../../../src/report/render';
import type { ReportVideo } from '../../../src/report/model';
import type { StepSummary } from '../../../src/workflows/pipeline-types';
import { stepSummary } from '../../helpers/step-summary';

const CUT = 'https://service.test/files/cut.mp4';

function gateRow(extra: Partial<StepSummary> & Record<string, unknown> = {}): StepSummary {
  const { model: _model, ...row } = stepSummary('review', { status: 'running' }) as StepSummary & { model: string };
  return {
    ...row,
    op: 'approval',
    approval: { preview: [CUT, 'https://media.test/frame.png'], timeoutHours: 72, onTimeout: 'reject' },
    ...extra,
  } as StepSummary;
}

describe('an approval gate in the report', () => {
  const shown = [{ url: CUT, src: 'media/cut.mp4' } as ReportVideo];

  it('plays a preview from the copy the report holds of that output, and shows an image preview as an image', () => {
    const approval = reportApproval(gateRow(), shown);
    expect(approval).toEqual({
      state: 'waiting for a person',
      previews: [
        { url: CUT, src: 'media/cut.mp4', kind: 'video' },
        { url: 'https://media.test/frame.png', src: 'https://media.test/frame.png', kind: 'image' },
      ],
    });
    const html = approvalHtml(approval!, 'step review', escapeHtml);
    expect(html).toContain('<video controls preload="metadata" playsinline src="media/cut.mp4"');
    expect(html).toContain('<img src="https://media.test/frame.png" alt="step review: preview 2">');
  });

  it('shows the decision: who, when and why, and the one a resumed run carried in the output', () => {
    const at = Date.parse('2026-11-29T01:00:00.000Z');
    const decision = { decision: 'reject' as const, reason: 'wrong logo', by: 'ann', at };
    const rejected = reportApproval(
      gateRow({ status: 'rejected', approval: { timeoutHours: 72, onTimeout: 'reject', decision } }),
      shown,
    );
    expect(rejected).toMatchObject({
      state: 'rejected by ann: wrong logo',
      decision: { decision: 'reject', by: 'ann', reason: 'wrong logo', at: '2026-11-29T01:00:00.000Z' },
    });
    expect(approvalHtml(rejected!, 'step review', escapeHtml)).toContain(
      '<p class="decision" data-decision="reject">rejected by ann: wrong logo · <time datetime="2026-11-29T01:00:00.000Z">',
    );
    const carried = reportApproval(
      gateRow({
        status: 'completed',
        approval: { timeoutHours: 72, onTimeout: 'reject' },
        output: { approval: { decision: 'approve', at, timedOut: true } },
      }),
      shown,
    );
    expect(carried?.state).toBe('approved (timed out)');
  });

  it('is nothing for a step that is no gate', () => {
    expect(reportApproval(stepSummary('upscale'), shown)).toBeUndefined();
  });
});
