/**
 * The history table of docs/benchmarks.md: one row per package version, the latest full `npm run bench`
 * run at that version, kept in bench/results/history.json (in git, so a row outlives `.bench/`).
 *   npx tsx bench/report/generate.ts --history    # rewrite only the history table from history.json
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { round } from '../lib/stats';
import { ROOT } from '../lib/stack';
import type { HandoffResult } from '../handoff';
import type { ThroughputResult } from '../throughput';
import type { BridgeResult, FootprintResult } from '../footprint';

export const HISTORY_FILE = path.join(ROOT, 'bench', 'results', 'history.json');
export const HISTORY_START = '<!-- bench:history:start -->';
export const HISTORY_END = '<!-- bench:history:end -->';

/** The headline figures of one version; a figure its run did not measure is absent. */
export interface HistoryEntry {
  version: string;
  commit: string;
  /** YYYY-MM-DD of the run. */
  date: string;
  handoffAloneP50Ms?: number;
  handoffContendedP50Ms?: number;
  /** Webhook hand-off p50 under 20 chains ÷ the naive 500 ms poller's, same run. */
  contendedVsNaive?: number;
  pipelinesPerSecond?: number;
  /** reelflow's peak pipelines/s ÷ the raw three-activity workflow's peak, same run. */
  throughputRatio?: number;
  bridgePerSecond?: number;
  /** Bridge acknowledged deliveries/s ÷ its null-sink baseline, same run. */
  bridgeRatio?: number;
  /** Worker RSS with 1,000 pipelines waiting, SDK default cache (the top of the measured range). */
  workerRssMiB?: number;
}

interface HistoryInput {
  run: { commit: string; date: string };
  handoff?: HandoffResult;
  throughput?: ThroughputResult;
  bridge?: BridgeResult;
  footprint?: FootprintResult;
}

/** The history row of a full run at `version`. */
export function historyEntry(version: string, r: HistoryInput): HistoryEntry {
  const h = r.handoff?.latencyMs;
  const entry: HistoryEntry = { version, commit: r.run.commit.slice(0, 7), date: r.run.date.slice(0, 10) };
  if (h) {
    entry.handoffAloneP50Ms = h.alone.webhook.p50;
    entry.handoffContendedP50Ms = h.contended.webhook.p50;
    entry.contendedVsNaive = round(h.contended.webhook.p50 / h.contended.naive.p50, 2);
  }
  if (r.throughput) {
    entry.pipelinesPerSecond = r.throughput.peaks.reelflow.perSecond;
    entry.throughputRatio = round(r.throughput.peaks.ratio, 2);
  }
  if (r.bridge) {
    entry.bridgePerSecond = r.bridge.bridge.deliveriesPerSecond;
    entry.bridgeRatio = round(r.bridge.ratio, 2);
  }
  if (r.footprint) entry.workerRssMiB = r.footprint.waitingRssMiB.max;
  return entry;
}

/** Reads bench/results/history.json (oldest version first). */
export function readHistory(file = HISTORY_FILE): HistoryEntry[] {
  return fs.existsSync(file) ? (JSON.parse(fs.readFileSync(file, 'utf8')) as HistoryEntry[]) : [];
}

/** Puts `entry` in place of the row of its version (or appends it) and saves the file. */
export function recordHistory(entry: HistoryEntry, file = HISTORY_FILE): HistoryEntry[] {
  const rows = readHistory(file).filter((row) => row.version !== entry.version);
  rows.push(entry);
  rows.sort((a, b) => compareVersions(a.version, b.version));
  fs.writeFileSync(file, `${JSON.stringify(rows, null, 2)}\n`);
  return rows;
}

function compareVersions(a: string, b: string): number {
  const pa = a.split('.').map(Number);
  const pb = b.split('.').map(Number);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const d = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

const show = (v: number | undefined, unit = '') => (v === undefined ? '–' : `${v.toLocaleString('en')}${unit}`);
const withRatio = (v: number | undefined, ratio: number | undefined, unit = '') =>
  v === undefined ? '–' : `${show(v, unit)}${ratio === undefined ? '' : ` (${ratio})`}`;

/** The history table as markdown. */
export function historyTable(rows: HistoryEntry[]): string {
  const lines = [
    '| version | run | hand-off p50 alone | hand-off p50, 20 chains (÷ naive poller) | pipelines/s at the peak (÷ raw) | bridge deliveries/s (÷ null sink) | worker RSS, 1,000 waiting |',
    '|---|---|---|---|---|---|---|',
  ];
  for (const r of rows)
    lines.push(
      `| ${r.version} | ${r.commit}, ${r.date} | ${show(r.handoffAloneP50Ms, ' ms')} | ${withRatio(r.handoffContendedP50Ms, r.contendedVsNaive, ' ms')} | ${withRatio(r.pipelinesPerSecond, r.throughputRatio)} | ${withRatio(r.bridgePerSecond, r.bridgeRatio)} | ${show(r.workerRssMiB, ' MiB')} |`,
    );
  return lines.join('\n');
}

/** Replaces the history table between its markers in `doc`. */
export function replaceHistory(doc: string, rows: HistoryEntry[]): string {
  const start = doc.indexOf(HISTORY_START);
  const end = doc.indexOf(HISTORY_END);
  if (start < 0 || end < start) throw new Error(`the report has no ${HISTORY_START} … ${HISTORY_END} section`);
  return `${doc.slice(0, start + HISTORY_START.length)}\n${historyTable(rows)}\n${doc.slice(end)}`;
}
