import { renderBatchReport, renderPipelineReport } from '../../../src/report/render';
import type { BatchReport, BatchReportItem, PipelineReport, ReportVideo } from '../../../src/report/model';

function report(items: number): BatchReport {
  const cards: BatchReportItem[] = Array.from({ length: items }, (_, i) => ({
    name: `item-${i + 1}`,
    workflowId: `pipeline/item-${i + 1}`,
    status: i % 10 === 0 ? 'failed' : 'completed',
    ledger: null,
    steps: [],
    finalVideo: null,
  }));
  return {
    kind: 'batch',
    name: 'big',
    workflowId: 'batch/big',
    status: 'completed',
    totals: {
      items,
      byState: { completed: items - Math.ceil(items / 10), failed: Math.ceil(items / 10) },
      credits: { quoted: 0, charged: 0, refunded: 0, net: 0 },
      videoSeconds: 0,
    },
    items: cards,
    generatedAt: '2026-11-25T00:00:00.000Z',
  };
}

const cardsOf = (html: string) => [...html.matchAll(/<h2 id="item-\d+">([^<]+)<\/h2>/g)].map((m) => m[1]);

describe('the batch gallery', () => {
  it('puts a large batch on pages: each its slice of cards, the totals, and links to the others', () => {
    const href = (n: number) => (n === 1 ? 'big.html' : `big-page-${n}.html`);
    const html = renderBatchReport(report(250), { number: 2, count: 3, href, first: 100, size: 100 });
    const cards = cardsOf(html);
    expect(cards).toHaveLength(100);
    expect(cards[0]).toBe('item-101');
    expect(cards.at(-1)).toBe('item-200');
    expect(html).toContain('page 2 of 3');
    expect(html).toContain('<a href="big.html" rel="prev">Previous</a>');
    expect(html).toContain('<a href="big-page-3.html" rel="next">Next</a>');
    expect(html).toContain('<span aria-current="page">2</span>');
    // Totals are the whole batch's; the filter counts say how many of them are on this page.
    expect(html).toMatch(/Pipelines<\/dt>\s*<dd>250/);
    expect(html).toContain('failed (10 of 25)');
  });

  it('keeps a small batch on one page without navigation', () => {
    const html = renderBatchReport(report(3));
    expect(cardsOf(html)).toEqual(['item-1', 'item-2', 'item-3']);
    expect(html).not.toContain('Gallery pages');
  });

  it('says why a paused batch waits and how to resume it', () => {
    const paused = { code: 'insufficient_credits', reason: 'item item-3: the balance is 0', waiting: 1 };
    const html = renderBatchReport({ ...report(3), status: 'paused', paused });
    expect(html).toContain('Paused (insufficient_credits): item item-3: the balance is 0. 1 item(s) wait');
    expect(html).toContain('<code>reelflow batch resume batch/big</code>');
    expect(renderBatchReport(report(3))).not.toContain('Paused (');
  });
});

describe('a pipeline report with an op step', () => {
  it("shows a frame's image as an image, not a player", () => {
    const image: ReportVideo = {
      url: 'file:///media/objects/ab/abc',
      fileName: 'still-0123456789ab.png',
      contentType: 'image/png',
      bytes: 2048,
      durationSeconds: 0,
      width: 192,
      height: 108,
      videoCodec: 'png',
      src: 'data:image/png;base64,AAAA',
      poster: null,
      posterAtSeconds: null,
      archivedFrom: 'sha256:abc',
    };
    const credits = { quoted: 0, charged: 0, refunded: 0, net: 0 };
    const timings = { queuedSeconds: null, renderingSeconds: null, handoffSeconds: null };
    const report: PipelineReport = {
      kind: 'pipeline',
      name: 'ad',
      workflowId: 'pipeline/ad',
      status: 'completed',
      budgetCredits: null,
      ledger: credits,
      startedAt: null,
      closedAt: null,
      steps: [
        {
          id: 'still',
          model: 'frame (local operation)',
          status: 'completed',
          requestIds: [],
          attempts: 0,
          credits,
          timings,
          videos: [image],
        },
      ],
      generatedAt: '2026-11-25T00:00:00.000Z',
    };
    const html = renderPipelineReport(report);
    expect(html).toContain(
      '<img id="video-1-1" src="data:image/png;base64,AAAA" alt="step still output 1: an image, 192×108"',
    );
    expect(html).not.toContain('<video id="video-1-1"');
  });
});
