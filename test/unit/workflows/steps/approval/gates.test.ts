import { checkDecision, type Gate } from '../../../../../src/workflows/steps/approval/gates';

describe("decideApproval's validator", () => {
  const gates = new Map<string, Gate>([
    ['review', { step: 'review' }],
    ['final', { step: 'final', decision: { decision: 'approve', by: 'ann', at: 0 } }],
  ]);
  const refusal = (args: unknown) => {
    try {
      checkDecision(gates, args);
    } catch (error) {
      return (error as Error).message;
    }
    throw new Error('expected a refusal');
  };

  it('takes a decision for a gate that waits', () => {
    expect(checkDecision(gates, { step: 'review', decision: 'reject', reason: 'no', by: 'bob' })).toBe(
      gates.get('review'),
    );
  });

  it('refuses a step that is no waiting gate, naming the ones that wait', () => {
    expect(refusal({ step: 'upscale', decision: 'approve' })).toBe(
      'step: upscale is not an approval gate waiting for a decision (waiting: review)',
    );
  });

  it('refuses a gate decided already, saying how', () => {
    expect(refusal({ step: 'final', decision: 'reject' })).toBe(
      'step: final was already approved by ann; a gate is decided once',
    );
  });

  it('refuses malformed arguments with the field', () => {
    expect(refusal(null)).toMatch(/^decideApproval needs \{"step"/);
    expect(refusal({ decision: 'approve' })).toBe('step: must name an approval gate (waiting: review)');
    expect(refusal({ step: 'review', decision: 'yes' })).toBe('decision: must be "approve" or "reject" (got "yes")');
    expect(refusal({ step: 'review', decision: 'reject', reason: 'x'.repeat(2001) })).toMatch(/^reason: /);
    expect(refusal({ step: 'review', decision: 'reject', by: 42 })).toMatch(/^by: /);
  });
});
