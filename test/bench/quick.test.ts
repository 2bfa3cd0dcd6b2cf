import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

/**
 * The benchmark harness cannot rot: `npm run bench -- --quick` (every bench at a small size, every part
 * its own process) must write each bench's JSON and every chart. Asserts nothing about timings.
 */
const ROOT = path.resolve(__dirname, '..', '..');

test('npm run bench -- --quick writes every bench JSON and chart', async () => {
  const out = fs.mkdtempSync(path.join(os.tmpdir(), 'reelflow-bench-quick-'));
  try {
    const { code, output } = await new Promise<{ code: number | null; output: string }>((resolve) => {
      const child = spawn(
        process.execPath,
        ['-r', 'tsx/cjs', path.join(ROOT, 'bench', 'run.ts'), '--quick', '--out', out],
        { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
      );
      let text = '';
      child.stdout.on('data', (chunk: Buffer) => (text += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (text += chunk.toString()));
      child.on('exit', (exitCode) => resolve({ code: exitCode, output: text }));
    });
    expect({ code, tail: code === 0 ? '' : output.slice(-4000) }).toEqual({ code: 0, tail: '' });
    for (const name of ['handoff', 'throughput', 'footprint', 'bridge']) {
      const data = JSON.parse(fs.readFileSync(path.join(out, `${name}.json`), 'utf8')) as { run?: { commit?: string } };
      expect(typeof data.run?.commit).toBe('string');
    }
    for (const chart of ['handoff-cdf.svg', 'throughput.svg', 'footprint.svg']) {
      expect(fs.readFileSync(path.join(out, 'charts', chart), 'utf8')).toMatch(/^<svg [^]*<\/svg>\s*$/);
    }
    // The floor probe beside the hand-offs and the hand-off as users run it, by archive mode.
    const handoff = JSON.parse(fs.readFileSync(path.join(out, 'handoff.json'), 'utf8')) as {
      run: { serviceIdempotency?: string };
      hops?: { alone: { hops: Record<string, { n: number }> } };
      size: { chains: number; revoices: number };
      floor?: { samples: number[] };
      floorContended?: Record<'activity' | 'localActivity', { samples: number[] }>;
      asUsersRunIt?: { samples: Record<string, number[]>; archivedCopies: Record<string, number> };
    };
    expect(handoff.floor?.samples.length).toBeGreaterThan(0);
    // Under the contended load: every chain's every hand-off, with an activity and with a local activity.
    const contendedHandOffs = handoff.size.chains * handoff.size.revoices;
    expect(handoff.floorContended?.activity.samples).toHaveLength(contendedHandOffs);
    expect(handoff.floorContended?.localActivity.samples).toHaveLength(contendedHandOffs);
    expect(handoff.asUsersRunIt?.samples['on-expiry-risk']?.length).toBeGreaterThan(0);
    expect(handoff.asUsersRunIt?.samples.never?.length).toBeGreaterThan(0);
    expect(handoff.asUsersRunIt?.archivedCopies).toEqual({ 'on-expiry-risk': expect.any(Number), never: 0 });
    expect(handoff.asUsersRunIt?.archivedCopies['on-expiry-risk']).toBeGreaterThan(0);
    // The benches' worker submits as local activities (the local service honours Idempotency-Key), so
    // the chains' re-voicings are prepared and the bridge submits them: the hop breakdown finds those
    // hand-offs (webhook sent → next submit received), each after the service's own dispatch.
    expect(handoff.run.serviceIdempotency).toBe('honoured');
    const hops = handoff.hops?.alone.hops;
    expect(hops?.bridgeSubmit?.n).toBeGreaterThan(0);
    expect(hops?.webhookDispatch?.n).toBe((hops?.bridgeSubmit?.n ?? 0) + (hops?.bridgeToSignal?.n ?? 0));
    expect(hops?.bridgeToSignal?.n ?? 0).toBe(hops?.delivery?.n ?? 0);
    // The bridge burst counts the pipelines whose work ran beside its acknowledgements.
    const bridge = JSON.parse(fs.readFileSync(path.join(out, 'bridge.json'), 'utf8')) as {
      baseline: { deliveriesPerSecond: number; bursts?: number[] };
      bridge: { pipelinesClosedDuringBurst?: number };
    };
    expect(bridge.bridge.pipelinesClosedDuringBurst).toEqual(expect.any(Number));
    // The null-sink baseline brackets the real burst: one burst before it, one after; the mean is the baseline.
    const [before, after] = bridge.baseline.bursts ?? [];
    expect(bridge.baseline.bursts).toHaveLength(2);
    expect(bridge.baseline.deliveriesPerSecond).toBeCloseTo(((before ?? 0) + (after ?? 0)) / 2, 0);
    // The CPU ratio's alternating pair at the peaks: both sides measured, the ratio theirs.
    const throughput = JSON.parse(fs.readFileSync(path.join(out, 'throughput.json'), 'utf8')) as {
      cpuPairs?: Array<{ orchestrationMs: number; rawMs: number; ratio: number }>;
    };
    expect(throughput.cpuPairs).toHaveLength(1);
    const [pair] = throughput.cpuPairs ?? [];
    expect(pair?.orchestrationMs).toBeGreaterThan(0);
    expect(pair?.rawMs).toBeGreaterThan(0);
    expect(pair?.ratio).toBeCloseTo((pair?.orchestrationMs ?? 0) / (pair?.rawMs ?? 1), 1);
    const report = fs.readFileSync(path.join(out, 'benchmarks.md'), 'utf8');
    expect(report).toContain('### 3. Throughput ceilings');
    expect(report).toContain('### Targets of lean orchestration');
    expect(report).toContain('the median of 1 alternating raw/reelflow pairs');
    expect(report).toContain("Floor probe under the contended phases' load");
  } finally {
    fs.rmSync(out, { recursive: true, force: true });
  }
}, 900_000);
