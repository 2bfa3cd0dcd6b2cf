import { graphLines, placeSteps } from '../../../../src/cli/lib/graph-tree';
import { pipelineLines, waitingLines } from '../../../../src/cli/lib/output';
import type { PipelineSummary, StepItemSummary, StepSummary } from '../../../../src/workflows/pipeline-types';

/** What `reelflow status` and the follow view of `reelflow run` draw for a graph (a version-2 summary). */

const NOW = Date.parse('2026-11-23T12:00:00.000Z');
const at = (secondsBeforeNow: number) => NOW - secondsBeforeNow * 1000;

function node(id: string, dependsOn: string[], overrides: Partial<StepSummary> = {}): StepSummary {
  return {
    id,
    model: 'service-video-cinema-long-form-from-references',
    status: 'pending',
    stepKey: `p/job/${id}`,
    requestIds: [],
    attempts: 0,
    quoted: 0,
    charged: 0,
    refunded: 0,
    polls: 0,
    dependsOn,
    ...overrides,
  } as StepSummary;
}

function item(index: number, overrides: Partial<StepItemSummary> = {}): StepItemSummary {
  return { index, status: 'completed', requestIds: [`req_${index}`], charged: 10, refunded: 0, ...overrides };
}

function graph(steps: StepSummary[], status: PipelineSummary['status'] = 'running'): PipelineSummary {
  return {
    name: 'p',
    status,
    currentStep: null,
    budgetCredits: 500,
    ledger: { quoted: 0, charged: 40, refunded: 10, net: 30 },
    steps,
    outputs: {},
    version: 2,
  };
}

/** The first column of each line, spaces kept, so the tree's shape is what is compared. */
const shape = (lines: string[]) => lines.map((line) => /^ *\S+/.exec(line)?.[0]);

describe('graph tree', () => {
  it('a diamond draws each node once; the join hangs under its last dependency and names the other', () => {
    const steps = [
      node('a', [], {
        status: 'completed',
        requestIds: ['req_a'],
        charged: 10,
        submittedAt: at(30),
        finishedAt: at(18),
      }),
      node('b', ['a'], { status: 'running', phase: 'waiting', requestIds: ['req_b'], waitingFor: 'job' }),
      node('c', ['a'], { status: 'running', phase: 'slot', waitingFor: 'slot' }),
      node('d', ['b', 'c'], { waitingFor: 'dependencies' }),
    ];
    const lines = graphLines(steps, NOW);
    expect(shape(lines)).toEqual(['  a', '    b', '    c', '      d']);
    expect(lines[0]).toMatch(/^ {2}a +completed +req_a +12\.0s +10 credits$/);
    expect(lines[1]).toMatch(/^ {4}b +running\/waiting +req_b .*\(waiting for: job\)$/);
    expect(lines[2]).toMatch(/running\/slot .*\(waiting for: slot\)$/);
    expect(lines[3]).toMatch(/^ {6}d +pending +- +\(after: b; waiting for: dependencies\)$/);
    expect(placeSteps(steps).map((p) => [p.step.id, p.depth, p.after])).toEqual([
      ['a', 0, []],
      ['b', 1, []],
      ['c', 1, []],
      ['d', 2, ['b']],
    ]);
  });

  it('the last dependency is the one last in the spec, whatever order the step names them in', () => {
    const steps = [node('voice', []), node('scenes', []), node('mix', ['scenes', 'voice'])];
    expect(placeSteps(steps).map((p) => [p.step.id, p.depth, p.after])).toEqual([
      ['voice', 0, []],
      ['scenes', 0, []],
      ['mix', 1, ['voice']],
    ]);
  });

  it('a fan-out under onFailure continue: items as children, the failed one with its error, then the next node', () => {
    const scenes = node('scenes', [], {
      status: 'completed',
      requestIds: ['req_0', 'req_1', 'req_2'],
      charged: 30,
      refunded: 10,
      items: [
        item(0, { submittedAt: at(20), finishedAt: at(7.9) } as Partial<StepItemSummary>),
        item(1, { status: 'failed', requestIds: ['req_1'], refunded: 10, error: 'content_policy: refused' }),
        item(2, { carriedFrom: 'run-1' }),
      ],
    });
    const cut = node('cut', ['scenes'], { status: 'completed', requestIds: ['req_cut'], charged: 10 });
    const lines = graphLines([scenes, cut], NOW);
    expect(shape(lines)).toEqual(['  scenes', '    [0]', '    [1]', '    [2]', '    cut']);
    expect(lines[0]).toMatch(/^ {2}scenes +completed +3 items +20 credits \(refunded 10\)$/);
    expect(lines[1]).toMatch(/^ {4}\[0\] +completed +req_0 +12\.1s +10 credits$/);
    expect(lines[2]).toMatch(/^ {4}\[1\] +failed +req_1 +0 credits \(refunded 10\) {2}content_policy: refused$/);
    expect(lines[3]).toMatch(/req_2 +10 credits {2}\(carried from run run-1\)$/);
  });

  it('a running item shows its phase; a node waiting for a person says so', () => {
    const steps = [
      node('variants', [], {
        status: 'running',
        waitingFor: 'job',
        items: [
          item(0, { status: 'running', phase: 'waiting', charged: 0 }),
          item(1, { status: 'pending', requestIds: [], charged: 0 }),
        ],
      }),
      { ...node('pick', ['variants'], { status: 'running', waitingFor: 'person' }), op: 'approval' } as StepSummary,
    ];
    const lines = graphLines(steps, NOW);
    expect(lines[0]).toMatch(/2 items .*\(waiting for: job\)$/);
    expect(lines[1]).toMatch(/^ {4}\[0\] +running\/waiting +req_0$/);
    expect(lines[2]).toMatch(/^ {4}\[1\] +pending +-$/);
    expect(lines[3]).toMatch(/^ {4}pick +running +op: approval +\(waiting for: person\)$/);
  });

  it('while nothing changes, the follow view says what each running node waits for, pending ones not', () => {
    const steps = [
      node('gate', [], { status: 'running', waitingFor: 'person' }),
      node('b', [], { status: 'running', phase: 'waiting', waitingFor: 'job', nextPollAt: NOW + 10_000 }),
      node('c', ['gate'], { waitingFor: 'dependencies' }),
    ];
    expect(waitingLines(graph(steps), NOW)).toEqual([
      '  gate         running: waiting for person',
      '  b            running/waiting: waiting for job, next poll in 10.0s',
    ]);
  });

  it('long ids widen the name column for every line, so the columns stay aligned', () => {
    const lines = graphLines([node('a', []), node('a-very-long-step-name', ['a'])], NOW);
    expect(lines[0]?.indexOf('pending')).toBe(lines[1]?.indexOf('pending'));
  });

  it('pipelineLines draws a version-2 summary as the tree between its header and its ledger', () => {
    const lines = pipelineLines(graph([node('a', []), node('b', ['a'])]), 'pipeline/p', undefined, {}, NOW);
    expect(shape(lines)).toEqual(['pipeline/p:', '  a', '    b', '  credits:']);
    expect(lines.at(-1)).toBe('  credits: charged 40, refunded 10, net 30 of budget 500');
  });
});
