import { validatePipelineSpec } from '../../../../src/pipeline-spec';
import { approvalStepKind, approvalStepSchema } from '../../../../src/pipeline-spec/steps/approval';

const render = { id: 'render', model: 'service-upscale-video-fast', input: { video_url: 'https://example.com/a.mp4' } };

/** The field errors of a spec whose second step is `gate` (after a paid job it may read). */
function errorsOf(gate: Record<string, unknown>) {
  const result = validatePipelineSpec({ name: 'gated', steps: [render, { id: 'review', op: 'approval', ...gate }] });
  if (result.ok) throw new Error('expected the spec to be refused');
  return result.errors;
}

describe('the approval gate as a kind of step', () => {
  it('fills the defaults: 72 hours, then reject', () => {
    const step = approvalStepSchema.parse({ id: 'review', op: 'approval', input: {} });
    expect(step).toEqual({ id: 'review', op: 'approval', input: {}, timeoutHours: 72, onTimeout: 'reject' });
  });

  it('accepts a preview that is a URL, an earlier output, or a list of them, with a note', () => {
    for (const preview of [
      'https://example.com/cut.mp4',
      { $from: 'render' },
      ['https://example.com/a.png', { $from: 'render', path: 'videos[0].url' }],
    ]) {
      const result = validatePipelineSpec({
        name: 'gated',
        steps: [
          render,
          { id: 'review', op: 'approval', input: { preview, note: 'ok?' }, timeoutHours: 0.5, onTimeout: 'approve' },
        ],
      });
      expect(result).toMatchObject({ ok: true });
    }
  });

  it('refuses a timeout of 0 hours', () => {
    expect(errorsOf({ input: {}, timeoutHours: 0 })).toEqual([
      { path: 'steps.1.timeoutHours', message: 'must be more than 0 hours' },
    ]);
  });

  it('refuses a timeout over a year', () => {
    expect(errorsOf({ input: {}, timeoutHours: 8761 })).toEqual([
      { path: 'steps.1.timeoutHours', message: 'must be at most 8760 hours (a year)' },
    ]);
  });

  it('refuses an onTimeout other than reject or approve', () => {
    expect(errorsOf({ input: {}, onTimeout: 'wait' })).toEqual([
      { path: 'steps.1.onTimeout', message: expect.stringMatching(/reject.*approve/) },
    ]);
  });

  it("refuses an unknown field of the gate's input at its own path, and a step of two kinds", () => {
    expect(errorsOf({ input: {}, model: 'service-upscale-video-fast' })).toEqual([
      { path: 'steps.1', message: 'is marked as two kinds of step (model, approval): a step is one' },
    ]);
    expect(errorsOf({ input: { video_url: 'https://example.com/a.mp4' } })).toEqual([
      { path: 'steps.1.input.video_url', message: 'is not a known field' },
    ]);
  });

  it('refuses a preview that is no URL the service rules accept', () => {
    expect(errorsOf({ input: { preview: 'http://example.com/a.mp4' } })).toEqual([
      { path: 'steps.1.input.preview', message: 'must use https (or be a base64 data URI)' },
    ]);
    expect(errorsOf({ input: { preview: ['https://example.com/a.mp4', 'not a url'] } })).toEqual([
      { path: 'steps.1.input.preview.1', message: 'must be an https URL or a base64 data URI' },
    ]);
  });

  it('refuses an empty preview list and a preview that is neither text nor a reference', () => {
    expect(errorsOf({ input: { preview: [] } })[0]?.path).toBe('steps.1.input.preview');
    expect(errorsOf({ input: { preview: 42 } })[0]?.path).toBe('steps.1.input.preview');
  });

  it('refuses a preview read from a later or unknown step', () => {
    expect(errorsOf({ input: { preview: { $from: 'later' } } })).toEqual([
      { path: 'steps.1.input.preview.$from', message: 'must name an earlier step (got "later")' },
    ]);
  });

  it('refuses a note over 2,000 characters', () => {
    expect(errorsOf({ input: { note: 'x'.repeat(2001) } })[0]?.path).toBe('steps.1.input.note');
  });

  it('checks literal previews with the given rules (a local service’s own origin)', () => {
    const step = approvalStepSchema.parse({ id: 'review', op: 'approval', input: {} });
    const literal = { preview: 'http://127.0.0.1:8787/files/a.mp4' };
    expect(approvalStepKind.checkInput(step, literal)).toHaveLength(1);
    expect(approvalStepKind.checkInput(step, literal, { allowedOrigins: ['http://127.0.0.1:8787'] })).toEqual([]);
  });
});
