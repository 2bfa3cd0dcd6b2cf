import { currentDetailsMarkdown, type PipelineView, type StepView } from '../../../src/pipeline-spec/ui-text';

const row = (id: string, more: Partial<StepView>): StepView => ({
  id,
  status: 'pending',
  requestIds: [],
  quoted: 0,
  charged: 0,
  refunded: 0,
  ...more,
});

describe("a graph's current details in the Temporal UI", () => {
  it('shows which steps run, what each waits for, and a fan-out step by its items', () => {
    const summary: PipelineView = {
      status: 'running',
      currentStep: 'right',
      budgetCredits: null,
      ledger: { quoted: 0, charged: 160, refunded: 0, net: 160 },
      steps: [
        row('scenes', {
          status: 'completed',
          dependsOn: [],
          items: [{ status: 'completed' }, { status: 'failed' }, { status: 'completed' }],
        }),
        row('left', { status: 'running', dependsOn: ['scenes'], waitingFor: 'job', requestIds: ['r-1'] }),
        row('right', { status: 'running', dependsOn: ['scenes'], waitingFor: 'slot' }),
        row('join', { dependsOn: ['left', 'right'], waitingFor: 'dependencies' }),
      ],
    };
    const details = currentDetailsMarkdown(summary, 0);
    expect(details).toMatch(/^\*\*running\*\* · steps `left`, `right` · credits 160 net/);
    expect(details).toContain('| scenes | completed · items 2/3 done, 1 failed |');
    expect(details).toContain('| left | running · waits for a job | `r-1` |');
    expect(details).toContain('| right | running · waits for a slot |');
    expect(details).toContain('| join | pending · waits for `left`, `right` |');
  });
});
