import { whenChanged } from '../../../../src/workflows/steps/publish';

describe('whenChanged (patch publish-changes)', () => {
  it('runs the upsert for the first value and for every change, never for a repeat', () => {
    const sent: unknown[] = [];
    const upsert = whenChanged((value: unknown) => sent.push(value));
    upsert([{ key: 'ReelflowStatus', value: 'running' }]);
    upsert([{ key: 'ReelflowStatus', value: 'running' }]);
    upsert([{ key: 'ReelflowStatus', value: 'completed' }]);
    upsert([{ key: 'ReelflowStatus', value: 'completed' }]);
    upsert([{ key: 'ReelflowStatus', value: 'running' }]);
    expect(sent).toEqual([
      [{ key: 'ReelflowStatus', value: 'running' }],
      [{ key: 'ReelflowStatus', value: 'completed' }],
      [{ key: 'ReelflowStatus', value: 'running' }],
    ]);
  });

  it('compares by value, not by identity (a summary rebuilt each time counts as unchanged)', () => {
    let calls = 0;
    const upsert = whenChanged(() => (calls += 1));
    upsert({ summary: { status: 'running', steps: [{ id: 'a' }] } });
    upsert({ summary: { status: 'running', steps: [{ id: 'a' }] } });
    expect(calls).toBe(1);
  });
});
