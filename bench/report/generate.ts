/**
 * The benchmark report, generated from `.bench/*.json` (never hand-copied numbers):
 *  - the tables of docs/benchmarks.md between `<!-- bench:generated:start -->` and `<!-- bench:generated:end -->`;
 *  - SVG charts in docs/benchmarks/: hand-off latency CDF, throughput vs concurrency, worker RSS vs
 *    waiting pipelines; each names the commit, the machine and the date;
 *  - with --with-before, beside every figure the recorded "before" run (bench/results/before.json).
 * With `quick`, everything goes under the bench directory instead (docs/ untouched).
 *   npx tsx bench/report/generate.ts [bench dir] [--save-before]   # regenerate from existing JSON
 *   npx tsx bench/report/generate.ts <bench dir> --doc docs/x.md    # into another document's section
 *   npx tsx bench/report/generate.ts [bench dir] --with-before     # with the "before" run's columns beside this run's
 *   npx tsx bench/report/generate.ts --history                     # only the history table (bench/report/history.ts)
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { RunInfo } from '../lib/run-info';
import { orchestrationCpu } from '../lib/cpu';
import { HOPS } from '../lib/hops';
import { percentile, round, type Summary } from '../lib/stats';
import { ROOT } from '../lib/stack';
import type { HandoffResult } from '../handoff';
import type { Level, ThroughputResult } from '../throughput';
import type { BridgeResult, FootprintResult } from '../footprint';
import { BATCH_FULL, type BatchResult } from '../batch';
import { cdfPoints, lineChart, type Series } from './svg';
import { checkCharts } from './check-charts';
import { HISTORY_START, historyEntry, readHistory, recordHistory, replaceHistory } from './history';

type Load = { loadavg1: { min: number; max: number; mean: number }; busy: { mean: number; max: number } };
type Run = RunInfo & { quick: boolean; seconds: number; load: Load };
interface Results {
  handoff?: HandoffResult & { run: Run };
  throughput?: ThroughputResult & { run: Run };
  footprint?: FootprintResult & { run: Run };
  bridge?: BridgeResult & { run: Run };
  /** `npm run bench -- --only batch`: a batch at scale, its rerun, a large manifest cancelled. */
  batch?: BatchResult & { run: Run };
  /** `npm run bench -- --cluster`: the same benches on the `npm run cluster` cluster. */
  'handoff-cluster'?: HandoffResult & { run: Run };
  'throughput-cluster'?: ThroughputResult & { run: Run };
  /** `--worker-cache n,…`: the footprint and bridge benches with the worker cache capped at n. */
  caches?: Array<{
    label: string;
    cache: number;
    heapMiB?: number;
    footprint: FootprintResult & { run: Run };
    bridge: BridgeResult & { run: Run };
  }>;
}

export const START_MARKER = '<!-- bench:generated:start -->';
export const END_MARKER = '<!-- bench:generated:end -->';
export const BEFORE_FILE = path.join(ROOT, 'bench', 'results', 'before.json');
export const CHARTS = ['handoff-cdf.svg', 'throughput.svg', 'footprint.svg', 'batch.svg'] as const;

function readResults(dir: string): Results {
  const out: Results = {};
  for (const name of [
    'handoff',
    'throughput',
    'footprint',
    'bridge',
    'batch',
    'handoff-cluster',
    'throughput-cluster',
  ] as const) {
    const file = path.join(dir, `${name}.json`);
    if (fs.existsSync(file)) (out as Record<string, unknown>)[name] = JSON.parse(fs.readFileSync(file, 'utf8'));
  }
  const caches = (fs.existsSync(dir) ? fs.readdirSync(dir) : [])
    .map((file) => /^footprint-cache-((\d+)(?:-heap-(\d+))?)\.json$/.exec(file))
    .filter((m): m is RegExpExecArray => m !== null && fs.existsSync(path.join(dir, `bridge-cache-${m[1]}.json`)))
    .map((m) => ({
      label: m[1]!,
      cache: Number(m[2]),
      ...(m[3] !== undefined ? { heapMiB: Number(m[3]) } : {}),
      footprint: JSON.parse(fs.readFileSync(path.join(dir, m[0]), 'utf8')) as FootprintResult & { run: Run },
      bridge: JSON.parse(fs.readFileSync(path.join(dir, `bridge-cache-${m[1]}.json`), 'utf8')) as BridgeResult & {
        run: Run;
      },
    }))
    .sort((a, b) => a.cache - b.cache || (a.heapMiB ?? Infinity) - (b.heapMiB ?? Infinity));
  if (caches.length) out.caches = caches;
  return out;
}

/** Reads the recorded "before" run (all benches in one file), if any. */
export function readBefore(): Results | null {
  return fs.existsSync(BEFORE_FILE) ? (JSON.parse(fs.readFileSync(BEFORE_FILE, 'utf8')) as Results) : null;
}

/** Saves the JSON of `dir` as the "before" run (bench/results/before.json). */
export function saveBefore(dir: string): string {
  fs.mkdirSync(path.dirname(BEFORE_FILE), { recursive: true });
  fs.writeFileSync(BEFORE_FILE, `${JSON.stringify(readResults(dir), null, 2)}\n`);
  return BEFORE_FILE;
}

const anyRun = (r: Results | null): Run | undefined =>
  r?.handoff?.run ?? r?.throughput?.run ?? r?.footprint?.run ?? r?.bridge?.run ?? r?.batch?.run;
const dateOf = (run: Run) => run.date.slice(0, 16).replace('T', ' ') + ' UTC';
const machineOf = (run: Run) =>
  `${run.machine.cpus} vCPU ${run.machine.cpuModel}, ${run.machine.memoryGiB} GiB, ${run.machine.platform}, Node ${run.machine.node}`;
/** How the run's worker submitted (runs that did not record it ran the default, `unknown`). */
const submitsOf = (run: Run) =>
  (run.serviceIdempotency ?? 'unknown') === 'honoured'
    ? 'submits as local activities (REELFLOW_SERVICE_IDEMPOTENCY=honoured, as `reelflow dev` runs the local service)'
    : 'submits as activities (REELFLOW_SERVICE_IDEMPOTENCY=unknown)';
const commitOf = (run: Run) => `${run.commit}${run.dirty ? '+changes' : ''}`;
const loadOf = (run: Run) =>
  `load avg ${run.load.loadavg1.mean} (${run.load.loadavg1.min}–${run.load.loadavg1.max}), CPUs busy ${Math.round(run.load.busy.mean * 100)} % mean`;
const footerOf = (run: Run, before?: Run) => [
  `commit ${commitOf(run)} · ${dateOf(run)}${run.quick ? ' · QUICK MODE: sizes too small to mean anything' : ''}`,
  `machine: ${machineOf(run)}`,
  `every part its own process on loopback, Temporal dev server; ${loadOf(run)}`,
  ...(before ? [`"before" series: commit ${commitOf(before)} · ${dateOf(before)}`] : []),
];
const fmt = (v: number | undefined) => (v === undefined || Number.isNaN(v) ? '–' : String(v));
const ms = (s: Summary | undefined) => (s ? `${fmt(s.p50)} / ${fmt(s.p99)}` : '–');

const COLORS = { webhook: '#1f77b4', polling: '#ff7f0e', naive: '#2ca02c', reelflow: '#1f77b4', raw: '#d62728' };

function handoffSection(r: Results, b: Results | null, lines: string[]): string | null {
  const h = r.handoff;
  if (!h) return null;
  const bh = b?.handoff;
  const s = h.size;
  lines.push('### 1. Hand-off latency', '');
  lines.push(
    `Service clock: a job's \`completedAt\` → the next job's \`receivedAt\`. Chains of a long-form generation and ${s.revoices} re-voicings; stub renders held ${s.holdMs} ms each; ` +
      `alone = ${s.alone} chain${s.aloneRounds ? ` at a time, ${s.aloneRounds} in a row` : ''}, contended = ${s.chains} chains at once. Polling fallback: endpoint deleted, first poll at ${s.holdMs / 1000} s, ×2, cap ${(4 * s.holdMs) / 1000} s. ` +
      `Naive: polls every ${h.naivePollMs} ms from a random phase. p50 / p99 in ms (n = hand-offs).`,
    '',
  );
  const header = [
    'mode',
    'alone p50 / p99',
    `${s.chains} chains p50 / p99`,
    `${s.chains} chains p90`,
    'n alone / contended',
  ];
  if (bh) header.push(`before: alone p50 / p99`, `before: ${bh.size.chains} chains p50 / p99`);
  lines.push(`| ${header.join(' | ')} |`, `|${header.map(() => '---').join('|')}|`);
  for (const mode of ['webhook', 'polling', 'naive'] as const) {
    const label = {
      webhook: 'reelflow webhook',
      polling: 'reelflow polling fallback',
      naive: `naive (${h.naivePollMs} ms polls)`,
    }[mode];
    const row = [
      label,
      ms(h.latencyMs.alone[mode]),
      ms(h.latencyMs.contended[mode]),
      fmt(h.latencyMs.contended[mode].p90),
      `${h.latencyMs.alone[mode].n} / ${h.latencyMs.contended[mode].n}`,
    ];
    if (bh) row.push(ms(bh.latencyMs.alone[mode]), ms(bh.latencyMs.contended[mode]));
    lines.push(`| ${row.join(' | ')} |`);
  }
  lines.push(
    '',
    `Ratios naive ÷ webhook: ${Object.entries(h.ratios)
      .map(([k, v]) => `${k.replace('naive/webhook ', '')} **${v}**`)
      .join(', ')}.` +
      (bh
        ? ` Before: ${Object.entries(bh.ratios)
            .map(([k, v]) => `${k.replace('naive/webhook ', '')} ${v}`)
            .join(', ')}.`
        : ''),
  );
  lines.push(
    '',
    `Submit received → job created (validation and pricing, not part of the hand-off) p50 / p99 ms: webhook ${ms(h.pricingMs.webhook)}, polling ${ms(h.pricingMs.polling)}, naive ${ms(h.pricingMs.naive)}. Pipelines that did not complete: ${h.failedPipelines}.`,
    '',
  );
  if (h.hops) {
    lines.push(
      "Webhook hand-offs hop by hop (bench/lib/hops.ts: service job clocks and the pipeline's Temporal history event times), p50 / p99 ms:",
      '',
    );
    lines.push('| hop | what it is | alone | contended |', '|---|---|---|---|');
    const what: Record<string, string> = {
      delivery: "job completed → signal in the pipeline's history",
      webhookDispatch: "of which: job completed → webhook sent (the service's dispatch)",
      bridgeToSignal: 'of which: webhook sent → signal in history (bridge and forwarder)',
      taskDispatch: 'signal → workflow task started',
      workflowCode: 'workflow task started → completed',
      activityStart: 'task completed → submit activity started',
      submitRequest: 'activity started → next submit received',
      submitInTask: 'workflow task started → next submit received (local activity)',
      bridgeSubmit: 'webhook sent → next submit received (the bridge submitted the prepared step)',
    };
    for (const [hop, label] of Object.entries(what)) {
      const key = hop as keyof typeof h.hops.alone.hops;
      // A run measures one way of submitting: the other way's hops have no samples (older runs lack submitInTask).
      if (!h.hops.alone.hops[key]?.n && !h.hops.contended.hops[key]?.n) continue;
      lines.push(`| ${hop} | ${label} | ${ms(h.hops.alone.hops[key])} | ${ms(h.hops.contended.hops[key])} |`);
    }
    lines.push('', `Hand-offs broken down: ${h.hops.alone.n} alone, ${h.hops.contended.n} contended.`, '');
  }
  if (h.cpuMsPerHandoff) {
    const phases = ['alone/webhook', 'contended/webhook', 'contended/polling', 'contended/naive'].filter(
      (k) => h.cpuMsPerHandoff![k],
    );
    const procs = [...new Set(phases.flatMap((k) => Object.keys(h.cpuMsPerHandoff![k]!)))].filter((p) => p !== 'total');
    lines.push(
      'CPU ms per hand-off, by process of the stack over each phase (from /proc; the load generators not counted):',
      '',
    );
    lines.push(`| phase | ${procs.join(' | ')} | total |`, `|---|${procs.map(() => '---').join('|')}|---|`);
    for (const k of phases)
      lines.push(
        `| ${k} | ${procs.map((p) => fmt(h.cpuMsPerHandoff![k]![p])).join(' | ')} | **${h.cpuMsPerHandoff[k]!.total}** |`,
      );
    lines.push('');
  }
  if (h.firstSubmit) {
    const f = h.firstSubmit;
    lines.push(
      `\`reelflow run <spec> --detach\` → the service receives the first submit (one-step pipeline, ${f.runs} runs each after a warm-up; spawn instant → service \`receivedAt\`), p50 / max ms: as users run it (\`bin/reelflow.js\`) **${f.userCommandMs.p50}** / ${f.userCommandMs.max}; compiled (\`node dist/cli/main.js\`) **${f.compiledMs.p50}** / ${f.compiledMs.max}.`,
      '',
    );
  }
  if (h.floor)
    lines.push(
      `Floor probe beside it (a signal → one activity → a loopback POST, same server), ${h.floor.latencyMs.n} hand-offs: p50 **${h.floor.latencyMs.p50}** ms, p90 ${h.floor.latencyMs.p90}, p99 ${h.floor.latencyMs.p99}; reelflow's uncontended webhook hand-off p50 is **${round(Math.abs(h.latencyMs.alone.webhook.p50 - h.floor.latencyMs.p50), 1)} ms** ${h.latencyMs.alone.webhook.p50 >= h.floor.latencyMs.p50 ? 'above' : 'below'} it.`,
      '',
    );
  const fc = h.floorContended;
  if (fc) {
    const naive = h.latencyMs.contended.naive.p50;
    const shown = (floor: Summary) =>
      `p50 **${floor.p50}** ms (÷ naive ${round(floor.p50 / naive, 2)}), p90 ${floor.p90}`;
    lines.push(
      `Floor probe under the contended phases' load (after them, same server: ${h.size.chains} chains at once, ${h.size.holdMs} ms before each signal, ${fc.activity.latencyMs.n} hand-offs each): with an activity ${shown(fc.activity.latencyMs)}; with a local activity ${shown(fc.localActivity.latencyMs)}. reelflow's contended webhook hand-off p50: ${h.latencyMs.contended.webhook.p50} ms.`,
      '',
    );
  }
  const u = h.asUsersRunIt;
  if (u) {
    lines.push(
      `**The hand-off as users run it** (bench/archive-handoff.ts): \`reelflow run <spec>\` (bin/reelflow.js, foreground) of a long-form generation and ${u.size.revoices} re-voicings whose outputs are ${u.output.seconds} s of ${u.output.height}p (${round(u.output.bytes / 1048576, 1)} MiB each), stub renders held ${u.size.holdMs} ms, on a stack of its own; ${u.size.runs} runs of each archive mode, alternating. p50 / p90 / max ms:`,
      '',
      '| archive mode | hand-off p50 / p90 / max | n | outputs archived |',
      '|---|---|---|---|',
      `| \`on-expiry-risk\` (the CLI's default: the spec names no mode) | ${u.handoffMs['on-expiry-risk'].p50} / ${u.handoffMs['on-expiry-risk'].p90} / ${u.handoffMs['on-expiry-risk'].max} | ${u.handoffMs['on-expiry-risk'].n} | ${u.archivedCopies['on-expiry-risk']} |`,
      `| \`never\` | ${u.handoffMs.never.p50} / ${u.handoffMs.never.p90} / ${u.handoffMs.never.max} | ${u.handoffMs.never.n} | ${u.archivedCopies.never} |`,
      '',
      `Ratio of the p50s (on-expiry-risk ÷ never): **${u.ratio}**. Each archived output is downloaded to a temporary file and hashed beside the next step (the content-addressed store keeps the stub's one file once).`,
      ...(u.hops
        ? [
            '',
            `Hop by hop (bench/lib/hops.ts), p50 ms, on-expiry-risk / never: ${HOPS.filter(
              (hop) => u.hops!.never.hops[hop]?.n,
            )
              .map(
                (hop) => `${hop} ${fmt(u.hops!['on-expiry-risk'].hops[hop].p50)} / ${fmt(u.hops!.never.hops[hop].p50)}`,
              )
              .join(', ')}.`,
          ]
        : []),
      '',
    );
  }
  lines.push('### 2. Status calls per job', '');
  const header2 = ['job length', 'reelflow webhook', 'reelflow polling fallback', 'naive', 'how'];
  lines.push(`| ${header2.join(' | ')} |`, `|${header2.map(() => '---').join('|')}|`);
  for (const [label, row] of Object.entries(h.statusCallsPerJob))
    lines.push(`| ${label} | ${row.webhook} | ${row.polling} | ${row.naive} | ${row.note} |`);
  lines.push('');
  const series: Series[] = [];
  for (const mode of ['webhook', 'polling', 'naive'] as const) {
    series.push({
      name: `${mode}, ${s.chains} chains`,
      points: cdfPoints(h.samples.contended[mode]),
      color: COLORS[mode],
      step: true,
    });
    series.push({
      name: `${mode}, alone`,
      points: cdfPoints(h.samples.alone[mode]),
      color: COLORS[mode],
      step: true,
      dashed: true,
    });
  }
  if (bh)
    series.push({
      name: `webhook, ${bh.size.chains} ch., before`,
      points: cdfPoints(bh.samples.contended.webhook),
      color: '#7f7f7f',
      step: true,
    });
  return lineChart({
    title: 'Hand-off latency CDF (service clock: completedAt → next receivedAt)',
    xLabel: 'hand-off (ms, log scale)',
    yLabel: 'share of hand-offs ≤ x',
    series,
    footer: footerOf(h.run, bh?.run),
    xLog: true,
    yMin: 0,
    yMax: 1,
  });
}

function throughputSection(r: Results, b: Results | null, lines: string[]): string | null {
  const t = r.throughput;
  if (!t) return null;
  const bt = b?.throughput;
  lines.push('### 3. Throughput ceilings', '');
  lines.push(
    `Closed loop, concurrency doubling until two levels in a row gain less than 10 %. ` +
      `raw = three trivial activities on their own worker (same server); reelflow = the three-step pipeline through the webhook path, stub renders with no hold. ` +
      `Windows: reelflow ${t.size.reelflowWindowS} s, raw ${t.size.rawWindowS} s per level.`,
    '',
  );
  const header = [
    'concurrency',
    'raw workflows/s',
    'reelflow pipelines/s',
    'reelflow ÷ raw',
    'reelflow p50 ms',
    'service ms / pipeline',
    'hand-off ms / pipeline',
  ];
  if (bt) header.push('before: raw/s', 'before: reelflow/s');
  lines.push(`| ${header.join(' | ')} |`, `|${header.map(() => '---').join('|')}|`);
  const levels = [...new Set([...t.raw, ...t.reelflow].map((l) => l.concurrency))].sort((a, b2) => a - b2);
  for (const c of levels) {
    const raw = t.raw.find((l) => l.concurrency === c);
    const reel = t.reelflow.find((l) => l.concurrency === c);
    const ratio = t.ratioAtEqualConcurrency.find((x) => x.concurrency === c)?.ratio;
    const row = [
      String(c),
      fmt(raw?.perSecond),
      fmt(reel?.perSecond),
      fmt(ratio),
      fmt(reel?.latencyMs.p50),
      fmt(reel?.serviceMsPerPipeline),
      fmt(reel?.handoffMsPerPipeline),
    ];
    if (bt)
      row.push(
        fmt(bt.raw.find((l) => l.concurrency === c)?.perSecond),
        fmt(bt.reelflow.find((l) => l.concurrency === c)?.perSecond),
      );
    lines.push(`| ${row.join(' | ')} |`);
  }
  lines.push('');
  lines.push(
    `**Peaks:** raw ${t.peaks.raw.perSecond}/s at c=${t.peaks.raw.concurrency}, reelflow ${t.peaks.reelflow.perSecond}/s at c=${t.peaks.reelflow.concurrency}; ratio of peaks **${t.peaks.ratio}**` +
      (bt
        ? ` (before: raw ${bt.peaks.raw.perSecond}/s at c=${bt.peaks.raw.concurrency}, reelflow ${bt.peaks.reelflow.perSecond}/s at c=${bt.peaks.reelflow.concurrency}, ratio ${bt.peaks.ratio})`
        : '') +
      `. Failed runs: raw ${t.raw.reduce((n, l) => n + l.failed, 0)}, reelflow ${t.reelflow.reduce((n, l) => n + l.failed, 0)}. Status calls in the run: ${t.statusCalls}.`,
    '',
  );
  const cpuRows = [
    ['reelflow', t.peaks.reelflow.cpuMsPerRun, 'three-step pipeline'],
    ['raw', t.peaks.raw.cpuMsPerRun, 'three-activity workflow'],
  ] as const;
  if (cpuRows.every(([, c]) => c)) {
    const procs = [...new Set(cpuRows.flatMap(([, c]) => Object.keys(c!)))].filter((p) => p !== 'total');
    lines.push(
      'CPU ms per completed run at each peak, by process (from /proc; the whole level, so runs still in flight at its close are charged to the completed ones):',
      '',
    );
    lines.push(`| run | ${procs.join(' | ')} | total |`, `|---|${procs.map(() => '---').join('|')}|---|`);
    for (const [name, c, what] of cpuRows)
      lines.push(
        `| ${name} (${what}, c=${name === 'raw' ? t.peaks.raw.concurrency : t.peaks.reelflow.concurrency}) | ${procs.map((p) => fmt(c![p])).join(' | ')} | **${c!.total}** |`,
      );
    lines.push('');
  }
  const real = t.realRenders;
  if (real) {
    lines.push(
      `**With real ffmpeg renders** (a fresh stack, renders at nice 19): reelflow ${real.perSecond} pipelines/s at c=${real.concurrency} (${real.completed} in ${t.size.realWindowS} s), p50 ${real.latencyMs.p50} ms, service ms / pipeline ${fmt(real.serviceMsPerPipeline)}, hand-off ms / pipeline ${fmt(real.handoffMsPerPipeline)}` +
        (bt?.realRenders ? ` (before: ${bt.realRenders.perSecond}/s)` : '') +
        '.',
      '',
    );
  }
  const pts = (levels2: Level[]) => levels2.map((l) => [l.concurrency, l.perSecond] as [number, number]);
  const series: Series[] = [
    { name: 'reelflow pipelines/s', points: pts(t.reelflow), color: COLORS.reelflow, markers: true },
    { name: 'raw workflows/s', points: pts(t.raw), color: COLORS.raw, markers: true },
  ];
  if (bt) {
    series.push({ name: 'reelflow, before', points: pts(bt.reelflow), color: COLORS.reelflow, dashed: true });
    series.push({ name: 'raw, before', points: pts(bt.raw), color: COLORS.raw, dashed: true });
  }
  return lineChart({
    title: 'Throughput vs concurrency (closed loop, stub renders)',
    xLabel: 'concurrency (callers, log scale)',
    yLabel: 'completed per second (log scale)',
    series,
    footer: footerOf(t.run, bt?.run),
    xLog: true,
    yLog: true,
  });
}

function bridgeSection(r: Results, b: Results | null, lines: string[]): void {
  const g = r.bridge;
  if (!g) return;
  const bg = b?.bridge;
  lines.push('### 4. Bridge', '');
  lines.push(
    `${g.size.n} signed \`generation.completed\` deliveries from ${g.size.generators} load-generator processes (${g.size.concurrency} in flight in total) to the bridge process. ` +
      `Baseline: the same bridge code with a null sink. Bridge: the real entry point, 202 once the event is committed to the inbox; ` +
      `each delivery completes one of the waiting pipelines of the footprint bench.`,
    '',
  );
  const header = ['', 'deliveries/s', 'answer p50 / p99 ms', 'delivery → pipeline closed p50 / p99 ms', 'non-202'];
  if (bg) header.push('before: deliveries/s');
  lines.push(`| ${header.join(' | ')} |`, `|${header.map(() => '---').join('|')}|`);
  lines.push(
    `| baseline: null sink${g.baseline.bursts ? `, the mean of a burst before and one after (${g.baseline.bursts.join(' and ')})` : ''} | ${g.baseline.deliveriesPerSecond} | ${ms(g.baseline.answerMs)} | – | ${g.baseline.non202} |${bg ? ` ${bg.baseline.deliveriesPerSecond} |` : ''}`,
  );
  lines.push(
    `| bridge → Temporal | ${g.bridge.deliveriesPerSecond} | ${ms(g.bridge.answerMs)} | ${ms(g.bridge.deliveryToPipelineClosedMs)} | ${g.bridge.non202} |${bg ? ` ${bg.bridge.deliveriesPerSecond} |` : ''}`,
  );
  lines.push('', `Ratio bridge ÷ baseline: **${g.ratio}**${bg ? ` (before: ${bg.ratio})` : ''}.`, '');
  if (g.bridge.pipelinesClosedDuringBurst !== undefined)
    lines.push(
      `Pipelines closed before the burst's last answer (signalled during it, their work beside the acknowledgements): ${g.bridge.pipelinesClosedDuringBurst} of ${g.size.n}.`,
      '',
    );
  const perThousand = g.bridge.cpuMsPerThousand;
  if (perThousand) {
    const byProcess = (cpu: Record<string, number>) =>
      Object.entries(cpu)
        .filter(([p]) => p !== 'total')
        .map(([p, v]) => `${p} ${v}`)
        .join(', ');
    const nullSink = g.baseline.cpuMsPerThousand;
    lines.push(
      `CPU ms per 1,000 deliveries during the burst, by process (from /proc in 10 ms ticks; the load generators not counted): ${byProcess(perThousand)}; total **${perThousand.total}**` +
        (nullSink
          ? `. During the null sink's bursts (their mean, \`bridge\` being the null sink's process): ${byProcess(nullSink)}; total ${nullSink.total}.`
          : '.'),
      '',
    );
  }
}

function footprintSection(r: Results, b: Results | null, lines: string[]): string | null {
  const f = r.footprint;
  if (!f) return null;
  const bf = b?.footprint;
  lines.push('### 5. Worker footprint', '');
  lines.push(
    `The compiled worker entry point (SDK default cache), ${f.size.n} one-step pipelines each waiting on its webhook (stub jobs held an hour), RSS from /proc, CPU over ${f.size.windowS} s once all wait.`,
    '',
  );
  const header = ['', 'this run'];
  if (bf) header.push(`before (${commitOf(bf.run)})`);
  lines.push(`| ${header.join(' | ')} |`, `|${header.map(() => '---').join('|')}|`);
  const rows: Array<[string, (x: FootprintResult) => string]> = [
    ['pipelines waiting', (x) => `${x.size.n} (ramp ${x.rampSeconds} s)`],
    ['worker RSS idle', (x) => `${x.idleRssMiB} MiB`],
    [`worker RSS with all waiting`, (x) => `${x.waitingRssMiB.min}–${x.waitingRssMiB.max} MiB`],
    ['worker CPU while waiting', (x) => `${x.cpuPercentWhileWaiting} % of one core`],
    ['status calls during the run', (x) => String(x.statusCallsInRun)],
  ];
  for (const [label, get] of rows) lines.push(`| ${label} | ${get(f)} |${bf ? ` ${get(bf)} |` : ''}`);
  lines.push('');
  const series: Series[] = [
    {
      name: 'worker RSS',
      points: f.ramp.map((p) => [p.waiting, p.rssMiB]),
      color: COLORS.reelflow,
      markers: f.ramp.length < 40,
    },
  ];
  if (bf)
    series.push({
      name: 'worker RSS, before',
      points: bf.ramp.map((p) => [p.waiting, p.rssMiB]),
      color: '#7f7f7f',
      dashed: true,
    });
  return lineChart({
    title: 'Worker RSS vs waiting pipelines',
    xLabel: 'pipelines waiting on their webhook',
    yLabel: 'worker RSS (MiB)',
    series,
    footer: footerOf(f.run, bf?.run),
  });
}

/** The targets of lean orchestration (after 0.3.0) against this run. */
function leanTargetsSection(r: Results, lines: string[]): void {
  const rows: string[] = [];
  const row = (label: string, asked: string, shown: string, met: boolean | string) =>
    rows.push(`| ${label} | ${asked} | ${shown} | ${typeof met === 'string' ? met : met ? 'met' : '**missed**'} |`);
  const t = r.throughput;
  const reel = t?.peaks.reelflow.cpuMsPerRun;
  const raw = t?.peaks.raw.cpuMsPerRun;
  if (reel && raw) {
    const climbs = orchestrationCpu(reel, raw);
    const pairs = t?.cpuPairs ?? [];
    const label =
      "orchestration CPU per pipeline (Temporal + worker + bridge) ÷ the raw workflow's (Temporal + its worker), at the peaks";
    if (pairs.length === 0)
      row(
        label,
        '≤ 2.5 (aim 1.5)',
        `${climbs.ratio} (${climbs.orchestrationMs} ms vs ${climbs.rawMs} ms)`,
        climbs.ratio <= 2.5,
      );
    else {
      const median = percentile(
        pairs.map((p) => p.ratio).sort((a, b) => a - b),
        50,
      );
      const shown = pairs.map((p) => `${p.ratio} (${p.orchestrationMs} vs ${p.rawMs} ms)`).join(', ');
      row(
        `${label}: the median of ${pairs.length} alternating raw/reelflow pairs run after the climbs`,
        '≤ 2.5 (aim 1.5)',
        `**${median}**: ${shown}; the climbs' own peaks ${climbs.ratio} (${climbs.orchestrationMs} vs ${climbs.rawMs} ms)`,
        median <= 2.5,
      );
    }
  }
  const h = r.handoff;
  if (h?.floor) {
    const over = round(h.latencyMs.alone.webhook.p50 - h.floor.latencyMs.p50, 1);
    row(
      "hand-off p50 uncontended − the floor probe's p50 beside it",
      '≤ 5 ms',
      `${over} ms (${h.latencyMs.alone.webhook.p50} vs ${h.floor.latencyMs.p50} ms)`,
      over <= 5,
    );
  }
  if (h) {
    const ratio = round(h.latencyMs.contended.webhook.p50 / h.latencyMs.contended.naive.p50, 2);
    row(
      `hand-off p50 under ${h.size.chains} chains ÷ the naive poller's`,
      '≤ 0.33',
      `${ratio} (${h.latencyMs.contended.webhook.p50} vs ${h.latencyMs.contended.naive.p50} ms)`,
      ratio <= 0.33,
    );
  }
  if (h?.floorContended) {
    const floor = h.floorContended.localActivity.latencyMs.p50;
    const ratio = round(floor / h.latencyMs.contended.naive.p50, 2);
    row(
      `the floor probe (local activity) under the same ${h.size.chains} chains ÷ the naive poller's: the bound for a design that signals before the next submit`,
      '(a bound, not a target)',
      `${ratio} (${floor} vs ${h.latencyMs.contended.naive.p50} ms)`,
      ratio <= 0.33 ? 'under 0.33' : '**over 0.33**',
    );
  }
  const g = r.bridge;
  if (g)
    row(
      'bridge acknowledged deliveries/s ÷ its null-sink baseline, same run',
      '≥ 0.8 (aim ≥ 2,000/s)',
      `${g.ratio} (${g.bridge.deliveriesPerSecond}/s vs ${g.baseline.deliveriesPerSecond}/s)`,
      g.ratio >= 0.8,
    );
  const u = h?.asUsersRunIt;
  if (u)
    row(
      `hand-off as users run it (${u.output.seconds} s ${u.output.height}p): the CLI's default archive mode ÷ \`never\`, p50`,
      'within 10 %',
      `${u.ratio} (${u.handoffMs['on-expiry-risk'].p50} vs ${u.handoffMs.never.p50} ms)`,
      Math.abs(u.ratio - 1) <= 0.1,
    );
  if (!rows.length) return;
  lines.push('### Targets of lean orchestration', '', '| target | asked | this run | |', '|---|---|---|---|');
  lines.push(...rows, '');
}

/** The worker cache sizes measured with `--worker-cache`, beside the default of the main run. */
function cacheSection(r: Results, lines: string[]): void {
  if (!r.caches?.length || !r.footprint || !r.bridge) return;
  lines.push('### Worker cache size', '');
  lines.push(
    `The footprint and bridge benches again with the worker's sticky cache capped (\`REELFLOW_MAX_CACHED_WORKFLOWS\`): ${r.footprint.size.n} pipelines waiting, then one delivery each. A pipeline evicted from the cache is replayed from its history when its delivery comes, so the cap trades memory against the delivery → pipeline closed time.`,
    '',
  );
  lines.push(
    '| worker cache | V8 old space | RSS with all waiting | CPU while waiting | deliveries/s | delivery → pipeline closed p50 / p99 ms |',
    '|---|---|---|---|---|---|',
  );
  const row = (label: string, heap: string, f: FootprintResult, g: BridgeResult) =>
    lines.push(
      `| ${label} | ${heap} | ${f.waitingRssMiB.min}–${f.waitingRssMiB.max} MiB | ${f.cpuPercentWhileWaiting} % | ${g.bridge.deliveriesPerSecond} | ${ms(g.bridge.deliveryToPipelineClosedMs)} |`,
    );
  row('worker default (this run)', 'Node default', r.footprint, r.bridge);
  for (const c of r.caches)
    row(
      String(c.cache),
      c.heapMiB !== undefined ? `--max-old-space-size=${c.heapMiB}` : 'Node default',
      c.footprint,
      c.bridge,
    );
  lines.push('');
}

/**
 * The batch row: one batch through the real CLI against independent pipelines on the same stack, its
 * rerun after faults, a large manifest accepted and cancelled. The chart puts the batch's items/s at its
 * --concurrency beside the climb of independent pipelines.
 */
function batchSection(r: Results, lines: string[]): string | null {
  const x = r.batch;
  if (!x) return null;
  const { batch: b, rerun, manifest: m, throughput: t } = x;
  const full = x.size.items === BATCH_FULL.items && x.size.manifestRows === BATCH_FULL.manifestRows;
  const main = anyRun(r);
  lines.push('### 6. Batch at scale', '');
  if (main && main.commit !== x.run.commit)
    lines.push(`(Batch run: commit ${commitOf(x.run)}, ${dateOf(x.run)}, ${loadOf(x.run)}.)`, '');
  lines.push(
    `\`npm run bench -- --only batch\` (not in the default run). One stack, the worker as production runs it (workflow cache ${x.worker.maxCachedWorkflows}, \`--max-old-space-size=${x.worker.heapMiB}\`, \`MALLOC_ARENA_MAX=${x.worker.mallocArenaMax ?? 'unset'}\`), stub renders with no hold; ` +
      `every batch started by the real CLI (\`reelflow batch <csv> --concurrency ${b.concurrency}\`, one spec of the throughput bench's three steps, its image and voice as files in the media store). ` +
      `The service fails ${round(b.jobFailureRate * 100, 2)} % of jobs during the batch (about 5 % of three-step items); items/s counts every item that ran to its end over the CLI's wall time (loading the CSV included), against the peak of independent pipelines climbed on the same stack (${x.size.throughputWindowS} s windows).` +
      (full
        ? ''
        : ` **Reduced size** (${x.size.items} items, ${x.size.manifestRows} rows): a check of the harness, not the figures asked.`),
    '',
  );
  const met = (ok: boolean) => (ok ? 'met' : '**missed**');
  lines.push('| figure | this run | asked | |', '|---|---|---|---|');
  lines.push(`| items, \`--concurrency\` | ${b.items}, ${b.concurrency} | 10,000 | ${met(b.items >= 10_000)} |`);
  lines.push(
    `| wall time (CLI) / batch workflow's own | ${b.wallSeconds} s / ${b.workflowSeconds} s (batch runs: ${b.runs}) | | |`,
  );
  lines.push(
    `| items/s ÷ peak of independent pipelines | ${b.ratioToThroughputPeak} (${b.itemsPerSecond}/s vs ${t.peak.perSecond}/s at c=${t.peak.concurrency}) | ≥ 0.8 | ${met(b.ratioToThroughputPeak >= 0.8)} |`,
  );
  lines.push(
    `| worker RSS, sampled each second: peak (mean) | ${b.workerRssMiB.peak} MiB (${b.workerRssMiB.mean} MiB, ${b.workerRssMiB.samples} samples) | ≤ 512 MiB | ${met(b.workerRssMiB.peak <= 512)} |`,
  );
  lines.push(
    `| largest history of a batch run | ${b.largestRunHistoryEvents} events | < 10,000 (Temporal's limit: 51,200) | ${met(b.largestRunHistoryEvents < 10_000)} |`,
    `| largest history of a batch run, bytes | ${round((b.largestRunHistoryBytes ?? 0) / 2 ** 20, 1)} MiB | < 50 MiB (Temporal's limit) | ${met((b.largestRunHistoryBytes ?? 0) < 50 * 2 ** 20)} |`,
  );
  const c = b.callsPerItem;
  lines.push(
    `| service calls per item: submits / status / result / quote / cancel | ${c.submits} / ${c.statusCalls} / ${c.resultCalls} / ${c.quoteCalls} / ${c.cancelCalls} = **${c.total}** | | |`,
  );
  lines.push(
    `| jobs at the service, idempotency keys twice, most in flight | ${b.jobs}, ${b.duplicateKeys}, ${b.maxJobsInFlight} | no key twice | ${met(b.duplicateKeys === 0)} |`,
  );
  lines.push(
    `| \`--rerun-failed\`: failed items → items resubmitted at the service | ${rerun.failedItems} → ${rerun.resubmittedItems} (${rerun.newJobs} jobs), ${rerun.completed} completed, ${rerun.wallSeconds} s | exactly the failed | ${met(rerun.exact)} |`,
  );
  lines.push(
    `| manifest accepted and started (\`--detach\`) | ${m.rows} rows (${round(m.bytes / 2 ** 20, 1)} MiB stored) in ${m.acceptSeconds} s | 100,000 rows | ${met(m.rows >= 100_000)} |`,
  );
  lines.push(
    `| \`reelflow cancel\` with jobs in flight → left in flight at the service, pipelines running | ${m.jobsInFlightAtCancel} → ${m.leftInFlightAtService}, ${m.runningPipelines} (cancel took ${m.cancelSeconds} s; batch ${m.temporalStatus.toLowerCase()}, ${m.counts.cancelled} items cancelled, ${m.counts.skipped} skipped) | 0, 0 | ${met(m.leftInFlightAtService === 0 && m.runningPipelines === 0)} |`,
  );
  lines.push(
    `| worker RSS peak: rerun / manifest and cancel | ${rerun.workerRssPeakMiB} / ${m.workerRssPeakMiB} MiB | ≤ 512 MiB | ${met(Math.max(rerun.workerRssPeakMiB, m.workerRssPeakMiB) <= 512)} |`,
  );
  lines.push('');
  const series: Series[] = [
    {
      name: 'independent pipelines/s',
      points: t.levels.map((l) => [l.concurrency, l.perSecond] as [number, number]),
      color: COLORS.reelflow,
      markers: true,
    },
    {
      name: 'batch items/s',
      points: [[b.concurrency, b.itemsPerSecond]],
      color: COLORS.naive,
      markers: true,
    },
  ];
  return lineChart({
    title: 'Batch items/s against independent pipelines (three steps, stub renders)',
    xLabel: 'concurrency (pipelines in flight, log scale)',
    yLabel: 'completed per second',
    series,
    footer: [
      ...footerOf(x.run),
      ...(full
        ? []
        : [`reduced size: ${x.size.items} items, ${x.size.manifestRows} manifest rows (a check of the harness)`]),
    ],
    xLog: true,
    yMin: 0,
  });
}

/** Dev server and cluster side by side, from one `npm run bench -- --cluster` run. */
function clusterSection(r: Results, lines: string[]): void {
  const hc = r['handoff-cluster'];
  const tc = r['throughput-cluster'];
  if (!hc && !tc) return;
  lines.push('### Dev server and cluster (same run)', '');
  lines.push(
    'The same benches on the Temporal CLI dev server (one process, in-memory SQLite, 1 history shard) and on the cluster of `npm run cluster` (Temporal 1.32.0 server on PostgreSQL 15, 4 history shards, frontend / history / matching / worker as separate processes), every other part identical, on the same 2 cores.',
    '',
  );
  lines.push('| figure | dev server | cluster | cluster ÷ dev server |', '|---|---|---|---|');
  const row = (label: string, dev: number | undefined, cl: number | undefined, unit: string) => {
    if (dev === undefined || cl === undefined) return;
    lines.push(`| ${label} | ${dev} ${unit} | ${cl} ${unit} | ${dev ? round(cl / dev, 2) : '–'} |`);
  };
  const h = r.handoff;
  if (hc && h) {
    row('hand-off webhook p50, alone', h.latencyMs.alone.webhook.p50, hc.latencyMs.alone.webhook.p50, 'ms');
    row('hand-off webhook p99, alone', h.latencyMs.alone.webhook.p99, hc.latencyMs.alone.webhook.p99, 'ms');
    row(
      `hand-off webhook p50, ${h.size.chains} chains`,
      h.latencyMs.contended.webhook.p50,
      hc.latencyMs.contended.webhook.p50,
      'ms',
    );
    row(
      `hand-off webhook p99, ${h.size.chains} chains`,
      h.latencyMs.contended.webhook.p99,
      hc.latencyMs.contended.webhook.p99,
      'ms',
    );
    row(
      `hand-off polling fallback p50, ${h.size.chains} chains`,
      h.latencyMs.contended.polling.p50,
      hc.latencyMs.contended.polling.p50,
      'ms',
    );
    row(
      `naive poller p50, ${h.size.chains} chains`,
      h.latencyMs.contended.naive.p50,
      hc.latencyMs.contended.naive.p50,
      'ms',
    );
  }
  const t = r.throughput;
  if (tc && t) {
    row('three-step pipelines/s at the peak', t.peaks.reelflow.perSecond, tc.peaks.reelflow.perSecond, '/s');
    row('raw three-activity workflows/s at the peak', t.peaks.raw.perSecond, tc.peaks.raw.perSecond, '/s');
    row('reelflow ÷ raw at the peaks', t.peaks.ratio, tc.peaks.ratio, '');
  }
  const failed = (hc?.failedPipelines ?? 0) + (tc ? [...tc.raw, ...tc.reelflow].reduce((n, l) => n + l.failed, 0) : 0);
  lines.push(
    '',
    `Failed pipelines on the cluster: ${failed}.${tc ? ` Peak concurrency on the cluster: reelflow c=${tc.peaks.reelflow.concurrency}, raw c=${tc.peaks.raw.concurrency}.` : ''}`,
    '',
  );
}

/** Builds the generated markdown and the charts; returns [markdown, {file: svg}]. */
export function buildReport(
  results: Results,
  before: Results | null,
  chartPrefix: string,
): { markdown: string; charts: Record<string, string> } {
  const run = anyRun(results);
  const beforeRun = anyRun(before);
  const useBefore =
    before && beforeRun && run && (beforeRun.commit !== run.commit || beforeRun.date !== run.date) ? before : null;
  const lines: string[] = [];
  if (run) {
    lines.push(`Generated by \`npm run bench\` from \`.bench/*.json\` on commit **${commitOf(run)}**, ${dateOf(run)}.`);
    lines.push(
      `Machine: ${machineOf(run)}; every part its own process on loopback, Temporal CLI dev server (in-memory); the worker ${submitsOf(run)}.`,
    );
    if (useBefore && beforeRun)
      lines.push(
        `"Before" columns: the run recorded in \`bench/results/before.json\`, commit **${commitOf(beforeRun)}**, ${dateOf(beforeRun)}; its worker ${submitsOf(beforeRun)}.`,
      );
    lines.push('', '| bench | seconds | machine load while it ran |', '|---|---|---|');
    for (const [name, res] of Object.entries(results) as Array<[string, { run?: Run }]>)
      if (res.run) lines.push(`| ${name} | ${res.run.seconds} | ${loadOf(res.run)} |`);
    for (const c of results.caches ?? [])
      lines.push(
        `| footprint + bridge, worker cache ${c.label}${c.footprint.run.commit !== run.commit ? ` (commit ${commitOf(c.footprint.run)}, ${dateOf(c.footprint.run)})` : ''} | ${c.footprint.run.seconds} | ${loadOf(c.footprint.run)} |`,
      );
    if (useBefore)
      for (const [name, res] of Object.entries(useBefore) as Array<[string, { run: Run }]>)
        lines.push(`| ${name} (before) | ${res.run.seconds} | ${loadOf(res.run)} |`);
    lines.push('');
  }
  const charts: Record<string, string> = {};
  leanTargetsSection(results, lines);
  const handoffChart = handoffSection(results, useBefore, lines);
  if (handoffChart) charts['handoff-cdf.svg'] = handoffChart;
  const throughputChart = throughputSection(results, useBefore, lines);
  if (throughputChart) charts['throughput.svg'] = throughputChart;
  bridgeSection(results, useBefore, lines);
  const footprintChart = footprintSection(results, useBefore, lines);
  if (footprintChart) charts['footprint.svg'] = footprintChart;
  cacheSection(results, lines);
  const batchChart = batchSection(results, lines);
  if (batchChart) charts['batch.svg'] = batchChart;
  clusterSection(results, lines);
  if (Object.keys(charts).length) {
    lines.push('### Charts', '');
    for (const name of Object.keys(charts)) lines.push(`![${name.replace('.svg', '')}](${chartPrefix}${name})`, '');
  }
  return { markdown: lines.join('\n'), charts };
}

/** Replaces the text between the markers of `doc` with `generated`. */
export function replaceGenerated(doc: string, generated: string): string {
  const start = doc.indexOf(START_MARKER);
  const end = doc.indexOf(END_MARKER);
  if (start < 0 || end < start) throw new Error(`docs/benchmarks.md has no ${START_MARKER} … ${END_MARKER} section`);
  return `${doc.slice(0, start + START_MARKER.length)}\n${generated}\n${doc.slice(end)}`;
}

/**
 * Writes the report of the JSON in `benchDir`. Full runs: docs/benchmarks.md (generated section and
 * the history row of the package version, bench/report/history.ts) and docs/benchmarks/*.svg. Quick runs, and runs holding a batch row of reduced size: `<benchDir>/benchmarks.md`
 * and `<benchDir>/charts/*.svg`.
 * Charts are then opened in headless Chromium (when installed) to check they render.
 */
export async function generateReport(given: {
  benchDir: string;
  quick: boolean;
  doc?: string;
  /** Show the run of bench/results/before.json beside this one (performance work; off for the report of record). */
  withBefore?: boolean;
}): Promise<string[]> {
  const results = readResults(given.benchDir);
  // A batch row at a reduced size (--items, --manifest-rows) checks the harness: never into docs/.
  const reducedBatch =
    results.batch !== undefined &&
    (results.batch.size.items !== BATCH_FULL.items || results.batch.size.manifestRows !== BATCH_FULL.manifestRows);
  const options = { ...given, quick: given.quick || reducedBatch };
  const docsDir = path.join(ROOT, 'docs');
  // Another document (--doc): its own generated section, its charts named after it, no "before" columns.
  const docName = options.doc ? path.basename(options.doc, '.md') : null;
  const chartsDir = options.quick ? path.join(options.benchDir, 'charts') : path.join(docsDir, 'benchmarks');
  const built = buildReport(
    results,
    options.quick || docName || !options.withBefore ? null : readBefore(),
    options.quick
      ? 'charts/'
      : docName
        ? `${[path.relative(path.dirname(path.resolve(options.doc!)), path.join(docsDir, 'benchmarks')), `${docName}-`].filter(Boolean).join('/')}`
        : 'benchmarks/',
  );
  const markdown = built.markdown;
  const charts = docName
    ? Object.fromEntries(Object.entries(built.charts).map(([name, svg]) => [`${docName}-${name}`, svg]))
    : built.charts;
  fs.mkdirSync(chartsDir, { recursive: true });
  const written: string[] = [];
  for (const [name, svg] of Object.entries(charts)) {
    const file = path.join(chartsDir, name);
    fs.writeFileSync(file, svg);
    written.push(file);
  }
  const docFile = options.quick
    ? path.join(options.benchDir, 'benchmarks.md')
    : options.doc
      ? path.resolve(options.doc)
      : path.join(docsDir, 'benchmarks.md');
  const doc = options.quick
    ? `# Benchmarks (quick mode)\n\n${START_MARKER}\n${END_MARKER}\n`
    : fs.readFileSync(docFile, 'utf8');
  fs.writeFileSync(docFile, withHistory(replaceGenerated(doc, markdown), results, !options.quick && !docName));
  written.push(docFile);
  const checked = await checkCharts(
    written.filter((f) => f.endsWith('.svg')),
    path.join(options.benchDir, 'chart-checks'),
  );
  if (checked) written.push(...checked);
  return written;
}

/** A full run's headline figures become its version's history row; the table is rewritten when `doc` has one. */
function withHistory(doc: string, results: Results, record: boolean): string {
  const run = anyRun(results);
  const version = (JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
  const rows = record && run ? recordHistory(historyEntry(version, { ...results, run })) : readHistory();
  return doc.includes(HISTORY_START) ? replaceHistory(doc, rows) : doc;
}

if (require.main === module) {
  const args = process.argv.slice(2);
  // --history: rewrite only the history table of docs/benchmarks.md from bench/results/history.json.
  if (args.includes('--history')) {
    const file = path.join(ROOT, 'docs', 'benchmarks.md');
    fs.writeFileSync(file, replaceHistory(fs.readFileSync(file, 'utf8'), readHistory()));
    console.log(`written ${path.relative(ROOT, file)}`);
    process.exit(0);
  }
  const dir = path.resolve(
    args.find((a, i) => !a.startsWith('--') && args[i - 1] !== '--doc') ?? path.join(ROOT, '.bench'),
  );
  // --save-before: record this run as the "before" of the next performance work, then report.
  if (args.includes('--save-before')) console.log(`written ${path.relative(ROOT, saveBefore(dir))}`);
  // --doc <file.md>: write the generated section into that document (between the same markers) instead.
  const docAt = args.indexOf('--doc');
  generateReport({
    benchDir: dir,
    quick: dir.includes(`${path.sep}quick`),
    withBefore: args.includes('--with-before'),
    ...(docAt >= 0 ? { doc: args[docAt + 1]! } : {}),
  }).then(
    (files) => files.forEach((f) => console.log(`written ${path.relative(ROOT, f)}`)),
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
}
