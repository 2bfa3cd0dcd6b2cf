/**
 * The bridge's group commits on the SQLite route store, with SQLite's own checkpoints inside the
 * commits (`checkpoints: 'auto'`, the default) and with them left to the caller (`'caller'`, what the
 * bridge opens): 3,000 deliveries of 1.5 KB appended in commits of 1, 4 and 16, the way the inbox
 * appends a burst. Prints the store's cost per delivery and each commit's p50 and max (a checkpoint
 * inside a commit syncs to disk on the event loop). A script, not a test:
 *
 *   npx tsx bench/route-store-commits.ts
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSqliteRouteStore } from '../src/routing';
import { percentile, round } from './lib/stats';

const DELIVERIES = 3_000;
const BODY = 'x'.repeat(1_500);

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'route-store-commits-'));
  try {
    for (const checkpoints of ['auto', 'caller'] as const) {
      const store = openSqliteRouteStore(join(dir, `${checkpoints}.sqlite`), { checkpoints });
      for (const batch of [1, 4, 16]) {
        const commitsUs: number[] = [];
        const started = process.hrtime.bigint();
        for (let i = 0; i < DELIVERIES; i += batch) {
          const entries = Array.from({ length: batch }, (_, j) => ({
            eventId: `${batch}-${i + j}`,
            requestId: `req-${i + j}`,
            body: BODY,
          }));
          const at = process.hrtime.bigint();
          await store.append(entries, Date.now());
          commitsUs.push(Number(process.hrtime.bigint() - at) / 1_000);
        }
        const perDeliveryUs = Number(process.hrtime.bigint() - started) / 1_000 / DELIVERIES;
        console.log(
          `checkpoints ${checkpoints.padEnd(6)} commits of ${String(batch).padStart(2)}: ${round(perDeliveryUs, 1)} µs per delivery; commit p50 ${round(
            percentile(
              [...commitsUs].sort((a, b) => a - b),
              50,
            ),
          )} µs, max ${round(Math.max(...commitsUs))} µs`,
        );
      }
      await store.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
