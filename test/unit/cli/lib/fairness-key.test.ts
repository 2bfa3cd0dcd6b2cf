import { fairnessKeyFrom } from '../../../../src/cli/lib/fairness-key';

/** What `reelflow status` counts a pipeline's or batch's slots under: the key its submits queue with. */
describe('fairnessKeyFrom', () => {
  const batch = (workflowId: string) => ({ kind: 'batch' as const, workflowId });
  const pipeline = (workflowId: string) => ({ kind: 'pipeline' as const, workflowId });
  const parent = (workflowId: string) => ({ workflowId, runId: 'r1' });
  const unset = { priorityKey: 0, fairnessKey: '', fairnessWeight: 0 };

  it('is the key the workflow was started with (--fairness-key, or the one its batch gave an item)', () => {
    const priority = { ...unset, fairnessKey: 'tenant-a' };
    expect(fairnessKeyFrom(batch('batch/nightly'), { priority })).toBe('tenant-a');
    expect(fairnessKeyFrom(pipeline('pipeline/x'), { priority, parentExecution: parent('batch/nightly') })).toBe(
      'tenant-a',
    );
  });

  it("is a batch's own id, and a partition's batch's id (one key for the whole batch)", () => {
    expect(fairnessKeyFrom(batch('batch/nightly'), { priority: unset })).toBe('batch/nightly');
    expect(
      fairnessKeyFrom(batch('batch/nightly/part-1'), { priority: unset, parentExecution: parent('batch/nightly') }),
    ).toBe('batch/nightly');
    // Cut to Temporal's 64 bytes as the batch cut it for its items.
    const long = `batch/${'n'.repeat(70)}`;
    expect(fairnessKeyFrom(batch(`${long}/part-0`), { priority: unset, parentExecution: parent(long) })).toMatch(
      /^batch\/n{49}~[0-9a-f]{8}$/,
    );
    // A batch a user's own workflow started is its own key.
    expect(fairnessKeyFrom(batch('batch/child'), { priority: unset, parentExecution: parent('orders/7') })).toBe(
      'batch/child',
    );
  });

  it("is a lone pipeline's own id, and an item's batch when the item carries no key", () => {
    expect(fairnessKeyFrom(pipeline('pipeline/rush'), {})).toBe('pipeline/rush');
    expect(fairnessKeyFrom(pipeline('pipeline/x'), { priority: unset, parentExecution: parent('batch/old') })).toBe(
      'batch/old',
    );
  });
});
