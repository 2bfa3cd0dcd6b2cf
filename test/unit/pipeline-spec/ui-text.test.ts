import {
  batchCurrentDetails,
  batchDetails,
  batchRates,
  batchStatusLines,
  sumBatchCredits,
  batchSummaryLine,
  currentDetailsMarkdown,
  type PipelineView,
  type StepView,
  describeDataUri,
  pipelineDetails,
  pipelineSummaryLine,
  shortId,
  stepElapsed,
  withoutInlineMedia,
} from '../../../src/pipeline-spec/ui-text';
import type { PipelineSpec } from '../../../src/pipeline-spec/spec';
import type { PipelineSummary, StepSummary } from '../../../src/workflows/pipeline-types';

const IMAGE = `data:image/png;base64,${'A'.repeat(4096)}`;
const spec: PipelineSpec = {
  name: 'launch-en',
  budgetCredits: 500,
  steps: [
    {
      id: 'generate',
      model: 'service-video-cinema-long-form-from-references',
      input: { image_urls: [IMAGE], duration: '5' },
    },
    {
      id: 'upscale',
      model: 'service-upscale-video-fast',
      input: { video_url: { $from: 'generate' } },
      retry: { maxResubmits: 2 },
    },
  ],
};

function row(id: string, extra: Partial<StepSummary> & Record<string, unknown>): StepSummary {
  return {
    id,
    model: 'service-upscale-video-fast',
    status: 'pending',
    stepKey: `x/job/${id}`,
    requestIds: [],
    attempts: 0,
    quoted: 0,
    charged: 0,
    refunded: 0,
    polls: 0,
    ...extra,
  } as StepSummary;
}

describe('what the Temporal UI shows', () => {
  it('summarises a pipeline on one line: name, steps in order, budget', () => {
    expect(pipelineSummaryLine(spec)).toBe('launch-en: generate → upscale · budget 500 credits');
    expect(pipelineSummaryLine({ ...spec, budgetCredits: undefined })).toBe(
      'launch-en: generate → upscale · no budget',
    );
    const long = {
      ...spec,
      steps: Array.from({ length: 20 }, (_, i) => ({ ...spec.steps[0]!, id: `step-with-a-long-name-${i}` })),
    };
    expect(pipelineSummaryLine(long).length).toBeLessThanOrEqual(200);
    expect(batchSummaryLine('nightly', 12, 4, true)).toBe(
      'nightly: 12 pipelines · concurrency 4 · re-run of the failed items',
    );
  });

  it('details the spec without inlined media', () => {
    const details = pipelineDetails(spec);
    expect(details).not.toContain('AAAA');
    expect(details).toContain('<inline image/png, 3.0 KiB>');
    expect(details).toContain('2. `upscale` — service-upscale-video-fast (up to 2 resubmits)');
    expect(details).toContain('"$from": "generate"');
    expect(describeDataUri('data:text/plain,hello')).toBe('inline text/plain, 0.0 KiB');
    expect(withoutInlineMedia({ a: [IMAGE, 'https://x.test/a.png'], b: 3 })).toEqual({
      a: ['<inline image/png, 3.0 KiB>', 'https://x.test/a.png'],
      b: 3,
    });
    // A huge spec is cut, never over the limit.
    const huge = { ...spec, steps: [{ ...spec.steps[0]!, input: { prompt: 'p'.repeat(40_000) } }] };
    expect(pipelineDetails(huge).length).toBeLessThanOrEqual(16 * 1024);
  });

  it('renders the live step table: state, request id, credits, elapsed, output link, errors', () => {
    const summary: PipelineSummary = {
      name: 'launch-en',
      status: 'running',
      currentStep: 'upscale',
      budgetCredits: 500,
      ledger: { quoted: 110, charged: 110, refunded: 0, net: 110 },
      steps: [
        row('generate', {
          status: 'completed',
          requestIds: ['7f2e0000-aaaa'],
          quoted: 100,
          charged: 100,
          startedAt: 1_000,
          finishedAt: 7_500,
          output: {
            request_id: '7f2e0000-aaaa',
            status: 'COMPLETED',
            model: 'm',
            credits_used: 100,
            videos: [{ url: 'http://127.0.0.1:1/files/a (1).mp4', file_name: 'a|b.mp4', content_type: 'video/mp4' }],
          },
        }),
        row('upscale', {
          status: 'running',
          phase: 'waiting',
          requestIds: ['c3f1'],
          quoted: 10,
          charged: 10,
          startedAt: 8_000,
          error: 'first | attempt failed',
        }),
      ],
      outputs: {},
    };
    const md = currentDetailsMarkdown(summary, 20_000);
    expect(md.split('\n')).toEqual([
      '**running** · step `upscale` · credits 110 net of budget 500 (charged 110, refunded 0)',
      '',
      '| Step | State | Request id | Credits | Elapsed | Output |',
      '|---|---|---|---|---|---|',
      '| generate | completed | `7f2e0000-aaaa` | 100 | 6.5 s | [a\\|b.mp4](http://127.0.0.1:1/files/a%20%281%29.mp4) |',
      '| upscale | running (waiting) | `c3f1` | 10 | 12.0 s | — |',
      '',
      '**Errors**',
      '- `upscale`: first \\| attempt failed',
    ]);
    expect(stepElapsed({}, 5)).toBe('—');
    // An op step: its state while ffmpeg runs, and a frame's image linked as an output.
    const frame = {
      request_id: 'launch-en/op/still',
      status: 'COMPLETED' as const,
      model: 'op:frame',
      credits_used: 0,
      videos: [],
      images: [{ url: 'https://media.test/s.png', file_name: 'still-ab.png', content_type: 'image/png' }],
    };
    const ops = currentDetailsMarkdown(
      {
        ...summary,
        steps: [
          row('cut', { status: 'running', phase: 'editing', startedAt: 8_000 }),
          row('still', { status: 'completed', output: frame }),
        ],
      },
      20_000,
    );
    expect(ops).toContain('| cut | running (editing) | — | — | 12.0 s | — |');
    expect(ops).toContain('| still | completed | — | — | — | [still-ab.png](https://media.test/s.png) |');
    expect(stepElapsed({ submittedAt: new Date(0).toISOString() }, 125_000)).toBe('2 min 05 s');
    expect(shortId('c0ffee00-1234-c3f1')).toBe('…c3f1');
  });
});

describe('what a batch shows (reelflow status and the UI current details)', () => {
  const progress = {
    name: 'nightly',
    total: 100,
    toRun: 100,
    completed: 30,
    failed: 8,
    cancelled: 0,
    skipped: 2,
    running: ['a', 'b'],
    runs: 2,
    results: [],
    status: 'running' as const,
    credits: { charged: 3000, refunded: 200, net: 2800 },
    budgetCredits: 10_000,
    startedAt: 1_000_000,
    updatedAt: 1_020_000,
  };

  it('counts by state, items/s since the start, the ETA of what is left, and credits against the budget', () => {
    // 40 finished in 20 s: 2 items/s, 60 left: 30 s.
    expect(batchRates(progress, 1_020_000)).toEqual({ finished: 40, itemsPerSecond: 2, etaSeconds: 30 });
    expect(batchStatusLines(progress, 1_020_000)).toEqual([
      '40/100 finished: completed 30 · failed 8 · cancelled 0 · skipped 2 · running 2',
      'rate 2.00 items/s · ETA 30.0 s',
      'credits 2800 net (3000 charged, 200 refunded) of a 10000 budget',
    ]);
    expect(batchCurrentDetails(progress)).toContain('**nightly** · running · run 2');
    // Nothing finished yet: no rate, no ETA.
    expect(batchRates({ ...progress, completed: 0, failed: 0, skipped: 0 }, 1_020_000)).toMatchObject({
      itemsPerSecond: null,
      etaSeconds: null,
    });
  });

  it('says why a paused batch waits, how many items wait, and how to resume it; no ETA while paused', () => {
    const paused = {
      ...progress,
      status: 'paused',
      paused: { code: 'insufficient_credits', reason: 'item b: the balance is 0', waiting: ['a', 'b'] },
    };
    expect(batchRates(paused, 1_020_000).etaSeconds).toBeNull();
    expect(batchStatusLines(paused, 1_020_000).slice(3)).toEqual([
      'paused (insufficient_credits): item b: the balance is 0',
      '2 item(s) wait, nothing failed or paid for it; after a top-up or a new key: reelflow batch resume batch/nightly',
    ]);
    expect(batchCurrentDetails(paused)).toContain('**nightly** · paused');
  });

  it('sums the credits of partitions', () => {
    expect(sumBatchCredits([progress, { credits: { charged: 1, refunded: 1, net: 0 } }, {}])).toEqual({
      charged: 3001,
      refunded: 201,
      net: 2800,
    });
  });

  it('lists a large batch’s first items in its static details and counts the rest', () => {
    const spec = (name: string) => ({ name, steps: [{ id: 'g', model: 'service-horizon-studio', input: {} }] });
    const details = batchDetails(
      'big',
      Array.from({ length: 60 }, (_, i) => spec(`p${i}`) as PipelineSpec),
      10_000,
    );
    expect(details).toContain('**big** · 10000 pipelines');
    expect(details).toContain('- … and 9950 more');
  });
});

const graphRow = (id: string, more: Partial<StepView>): StepView => ({
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
        graphRow('scenes', {
          status: 'completed',
          dependsOn: [],
          items: [{ status: 'completed' }, { status: 'failed' }, { status: 'completed' }],
        }),
        graphRow('left', { status: 'running', dependsOn: ['scenes'], waitingFor: 'job', requestIds: ['r-1'] }),
        graphRow('right', { status: 'running', dependsOn: ['scenes'], waitingFor: 'slot' }),
        graphRow('join', { dependsOn: ['left', 'right'], waitingFor: 'dependencies' }),
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

describe("an approval gate's row in the current details", () => {
  const row = (extra: Record<string, unknown>) => ({
    id: 'review',
    status: 'running',
    requestIds: [],
    quoted: 0,
    charged: 0,
    refunded: 0,
    phase: 'person',
    approval: { preview: 'https://media.test/cut (1).mp4' },
    ...extra,
  });
  const view = (step: Record<string, unknown>) => ({
    status: 'running',
    currentStep: 'review',
    budgetCredits: null,
    ledger: { quoted: 0, charged: 0, refunded: 0, net: 0 },
    steps: [step as never],
  });

  it('says the gate waits for a person and links its preview', () => {
    expect(currentDetailsMarkdown(view(row({})), 0)).toContain(
      '| review | running (waiting for a person) | — | — | — | [preview 1](https://media.test/cut%20%281%29.mp4) |',
    );
  });

  it('says who decided and why once decided', () => {
    const decided = row({
      status: 'rejected',
      approval: { decision: { decision: 'reject', by: 'ann', reason: 'wrong logo' } },
    });
    expect(currentDetailsMarkdown(view(decided), 0)).toContain('| review | rejected (rejected by ann: wrong logo) |');
  });
});
