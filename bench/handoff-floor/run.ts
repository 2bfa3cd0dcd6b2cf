/**
 * The hand-off floor: a client signals a waiting workflow, the workflow schedules one activity, the
 * activity POSTs to a loopback HTTP server. Signal sent → POST received is the least any design in
 * which a verified webhook signals the waiting pipeline can cost on this machine (README.md beside).
 * `--json` adds the samples as one `FLOOR {"samples":[…]}` line (bench/handoff.ts runs the probe beside
 * the hand-off bench, on the same server); FLOOR_HAND_OFFS sets how many hand-offs (default 40).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import { request } from 'undici';

const HAND_OFFS = Number(process.env.FLOOR_HAND_OFFS ?? 40);

async function main(): Promise<void> {
  const address = process.env.TEMPORAL_ADDRESS ?? '127.0.0.1:7233';
  let resolveHit: ((t: bigint) => void) | undefined;
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      resolveHit?.(process.hrtime.bigint());
      res.end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const activities = {
    async submit(n: number): Promise<void> {
      await request(`http://127.0.0.1:${port}/submit`, { method: 'POST', body: String(n) }).then((r) => r.body.text());
    },
  };
  const connection = await NativeConnection.connect({ address });
  const workflowsPath = require.resolve(process.env.WF === 'local' ? './wf-local' : './wf');
  const worker = await Worker.create({ connection, taskQueue: 'floor', workflowsPath, activities });
  const client = new Client({ connection });
  const latencies: number[] = [];
  await worker.runUntil(async () => {
    const handle = await client.workflow.start('chain', {
      taskQueue: 'floor',
      workflowId: `floor-${Date.now()}`,
      args: [HAND_OFFS],
    });
    for (let i = 0; i < HAND_OFFS; i++) {
      const hit = new Promise<bigint>((resolve) => (resolveHit = resolve));
      const sentAt = process.hrtime.bigint();
      await handle.signal('go', i);
      latencies.push(Number((await hit) - sentAt) / 1e6);
    }
    await handle.result();
  });
  server.close();
  await connection.close();
  if (process.argv.includes('--json')) console.log(`FLOOR ${JSON.stringify({ samples: latencies })}`);
  latencies.sort((a, b) => a - b);
  const at = (p: number): string =>
    (latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))] ?? NaN).toFixed(1);
  console.log(
    `signal -> activity HTTP hit over ${HAND_OFFS}: p50 ${at(0.5)} ms, p90 ${at(0.9)} ms, p99 ${at(0.99)} ms, min ${at(0)}`,
  );
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
