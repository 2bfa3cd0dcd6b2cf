import type { PipelineStep } from '../../../../src/pipeline-spec/spec';
import { showWaits } from '../../../../src/workflows/pipeline/graph-view';
import type { StepItemSummary, StepPhase, WaitingFor } from '../../../../src/workflows/pipeline-types';
import { stepSummary } from '../../../helpers/step-summary';

/**
 * What a graph's running step says it waits for, from the phases the steps really set (the keys of
 * this table are every phase today's workflow code sets: a phase added to StepPhase must be placed).
 */
const WAIT_OF_PHASE: Record<Exclude<StepPhase, 'capacity'>, WaitingFor | undefined> = {
  preflight: 'job',
  quoting: 'job',
  slot: 'slot',
  submitting: 'job',
  paused: 'person',
  ambiguous: 'person',
  waiting: 'job',
  'fetching-result': 'job',
  'backing-off': 'job',
  cancelling: 'job',
  editing: 'job',
  person: 'person',
  done: undefined,
};

const step = { id: 'render', model: 'service-video-cinema-long-form-from-references', input: {} } as PipelineStep;
const item = (index: number, phase: StepPhase): StepItemSummary => ({
  index,
  status: 'running',
  phase,
  requestIds: [],
  charged: 0,
  refunded: 0,
});

/** The `waitingFor` showWaits writes for one running step in `phase`, or whose items are in `items`. */
function waitingFor(phase: StepPhase | undefined, items?: StepPhase[]): WaitingFor | undefined {
  const row = stepSummary('render', {
    status: 'running',
    ...(phase ? { phase } : {}),
    ...(items ? { items: items.map((p, i) => item(i, p)) } : {}),
  });
  showWaits([step], [row]);
  return row.waitingFor;
}

describe('showWaits: what a running graph step waits for', () => {
  it.each(Object.entries(WAIT_OF_PHASE))('a step in phase %s waits for %s', (phase, expected) => {
    expect(waitingFor(phase as StepPhase)).toBe(expected);
  });

  it('a fan-out step waits for what its items wait for: a person first, then a slot, then the job', () => {
    expect(waitingFor(undefined, ['waiting', 'slot', 'done'])).toBe('slot');
    expect(waitingFor(undefined, ['slot', 'paused', 'waiting'])).toBe('person');
    expect(waitingFor(undefined, ['waiting', 'done'])).toBe('job');
    expect(waitingFor(undefined, ['done', 'done'])).toBeUndefined();
  });
});
