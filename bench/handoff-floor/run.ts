/**
 * The hand-off floor: a client signals a waiting workflow, the workflow schedules one activity, the
 * activity POSTs to a loopback HTTP server. Signal sent → POST received is the least any design in
 * which a verified webhook signals the waiting pipeline can cost on this machine (README.md beside).
 * `--json` adds the samples as one `FLOOR {"samples":[…]}` line (bench/handoff.ts runs the probe beside
 * the hand-off bench, on the same server); FLOOR_HAND_OFFS sets how many hand-offs per chain (default 40).
 * FLOOR_CHAINS chains at once (default 1), each waiting FLOOR_HOLD_MS before every signal (default 0):
 * with the hand-off bench's 20 chains of 500 ms jobs, the floor under the same offered load.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client } from '@temporalio/client';
import { Context } from '@temporalio/activity';
import { NativeConnection, Worker } from '@temporalio/worker';
import { request } from 'undici';

const HAND_OFFS = Number(process.env.FLOOR_HAND_OFFS ?? 40);
const CHAINS = Number(process.env.FLOOR_CHAINS ?? 1);
const HOLD_MS = Number(process.env.FLOOR_HOLD_MS ?? 0);

async function main(): Promise<void> {
  const address = process.env.TEMPORAL_ADDRESS ?? '127.0.0.1:7233';
  // `<workflow id>:<step>` → the waiting chain's resolver: chains run at once.
  const hits = new Map<string, (t: bigint) => void>();
  const server = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      hits.get(body)?.(process.hrtime.bigint());
      res.end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const activities = {
    async submit(n: number): Promise<void> {
      const workflowId = Context.current().info.workflowExecution?.workflowId ?? '';
      const body = `${workflowId}:${n}`;
      await request(`http://127.0.0.1:${port}/submit`, { method: 'POST', body }).then((r) => r.body.text());
    },
  };
  const connection = await NativeConnection.connect({ address });
  const workflowsPath = require.resolve(process.env.WF === 'local' ? './wf-local' : './wf');
  const worker = await Worker.create({ connection, taskQueue: 'floor', workflowsPath, activities });
  const client = new Client({ connection });
  const latencies: number[] = [];
  const runChain = async (chain: number) => {
    const workflowId = `floor-${Date.now()}-${chain}`;
    const handle = await client.workflow.start('chain', { taskQueue: 'floor', workflowId, args: [HAND_OFFS] });
    for (let i = 0; i < HAND_OFFS; i++) {
      if (HOLD_MS > 0) await sleep(HOLD_MS);
      const hit = new Promise<bigint>((resolve) => hits.set(`${workflowId}:${i}`, resolve));
      const sentAt = process.hrtime.bigint();
      await handle.signal('go', i);
      latencies.push(Number((await hit) - sentAt) / 1e6);
      hits.delete(`${workflowId}:${i}`);
    }
    await handle.result();
  };
  await worker.runUntil(Promise.all(Array.from({ length: CHAINS }, (_, chain) => runChain(chain))));
  server.close();
  await connection.close();
  if (process.argv.includes('--json')) console.log(`FLOOR ${JSON.stringify({ samples: latencies })}`);
  latencies.sort((a, b) => a - b);
  const at = (p: number): string =>
    (latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))] ?? NaN).toFixed(1);
  console.log(
    `signal -> activity HTTP hit over ${latencies.length} (${CHAINS} chain(s), ${HOLD_MS} ms hold): p50 ${at(0.5)} ms, p90 ${at(0.9)} ms, p99 ${at(0.99)} ms, min ${at(0)}`,
  );
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
