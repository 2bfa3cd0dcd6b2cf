import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fork } from 'node:child_process';
import { AccountLimits } from '../../../src/client/account-limits';

// The permit tests cover 0.3.0's filesystem permits, deprecated (no worker takes them) until the next minor
// release removes them; the back-off (the last test) is what workers use.
const holder = (n: number) => ({ idempotencyKey: `reelflow:p${n}/job/a:run:1`, workflowId: `pipeline/p${n}` });

describe('AccountLimits', () => {
  let dir: string;
  const opened: AccountLimits[] = [];
  const limits = (options: Partial<ConstructorParameters<typeof AccountLimits>[0]> = {}) => {
    const made = new AccountLimits({ dir, ...options });
    opened.push(made);
    return made;
  };
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reelflow-account-'));
  });
  afterEach(() => {
    for (const made of opened.splice(0)) made.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('without a cap every acquire succeeds and nothing is written', async () => {
    const open = limits();
    expect(open.capped).toBe(false);
    expect(await open.tryAcquire(holder(1))).toBe(true);
    expect(await open.release(holder(1).idempotencyKey)).toBe(false);
    expect(fs.existsSync(path.join(dir, 'slots'))).toBe(false);
  });

  it('hands out at most `concurrency` permits, the same one again to the same key, and takes them back', async () => {
    const capped = limits({ concurrency: 2 });
    expect(await capped.tryAcquire(holder(1))).toBe(true);
    expect(await capped.tryAcquire(holder(1))).toBe(true);
    expect(await capped.tryAcquire(holder(2))).toBe(true);
    expect(await capped.tryAcquire(holder(3))).toBe(false);
    expect(await capped.held()).toBe(2);
    expect(await capped.release(holder(1).idempotencyKey)).toBe(true);
    expect(await capped.release(holder(1).idempotencyKey)).toBe(false);
    expect(await capped.tryAcquire(holder(3))).toBe(true);
    expect(await capped.held()).toBe(2);
  });

  it('never has more holders than permits when many wait at once, and wakes a waiter when one is released', async () => {
    const shared = [limits({ concurrency: 3 }), limits({ concurrency: 3 })];
    let inside = 0;
    let most = 0;
    await Promise.all(
      [...Array(24).keys()].map(async (n) => {
        const store = shared[n % 2] as AccountLimits;
        await store.acquire(holder(n));
        inside += 1;
        most = Math.max(most, inside);
        await new Promise((resolve) => setTimeout(resolve, 5));
        inside -= 1;
        await store.release(holder(n).idempotencyKey);
      }),
    );
    expect(most).toBe(3);
    expect(await shared[0]?.held()).toBe(0);
  });

  it('holds the cap across processes (each acquires with symlink(2) in the same directory)', async () => {
    const script = path.join(dir, 'child.js');
    // A child process through tsx would be slow to start; plain fs calls show the same primitive.
    fs.writeFileSync(
      script,
      `const fs = require('fs'); const p = require('path');
       fs.mkdirSync(p.join(process.argv[2], 'slots'), { recursive: true });
       let got = 0; for (const i of ['0','1','2']) { try { fs.symlinkSync('{"h":"child","w":"c","at":0}', p.join(process.argv[2], 'slots', i)); got += 1; } catch {} }
       process.send(got);`,
    );
    const capped = limits({ concurrency: 3 });
    expect(await capped.tryAcquire(holder(1))).toBe(true);
    const child = fork(script, [dir]);
    const got = await new Promise<number>((resolve) => child.once('message', (m) => resolve(m as number)));
    expect(got).toBe(2);
    expect(await capped.tryAcquire(holder(2))).toBe(false);
  });

  it('a waiter stops when its signal aborts, and a bounded wait gives up', async () => {
    const capped = limits({ concurrency: 1 });
    await capped.acquire(holder(1));
    expect(await capped.acquire(holder(2), { maxWaitMs: 50 })).toBe(false);
    const controller = new AbortController();
    const waiting = capped.acquire(holder(3), { signal: controller.signal });
    controller.abort();
    await expect(waiting).rejects.toThrow();
  });

  it('the reaper frees a permit whose job the service says is over, and one never given a request id after its time', async () => {
    let now = 1_000_000;
    const terminal = new Set<string>();
    const capped = limits({
      concurrency: 2,
      now: () => now,
      reapAfterMs: 1_000,
      orphanAfterMs: 60_000,
      isTerminal: async (requestId) => terminal.has(requestId),
    });
    await capped.tryAcquire(holder(1));
    await capped.attachRequest(holder(1).idempotencyKey, 'req-1');
    await capped.tryAcquire(holder(2));
    now += 10_000;
    expect(await capped.tryAcquire(holder(3))).toBe(false);
    terminal.add('req-1');
    now += 10_000;
    // The sweep runs on a full store, then the next try finds the freed permit.
    expect(await capped.tryAcquire(holder(3))).toBe(false);
    expect(await capped.tryAcquire(holder(3))).toBe(true);
    await capped.attachRequest(holder(3).idempotencyKey, 'req-3');
    now += 60_000;
    expect(await capped.tryAcquire(holder(4))).toBe(false);
    expect(await capped.tryAcquire(holder(4))).toBe(true);
    // holder 2 had no request id: freed by age; holder 3's job is still running.
    expect(await capped.release(holder(2).idempotencyKey)).toBe(false);
    expect(await capped.release(holder(3).idempotencyKey)).toBe(true);
  });

  it('shares one back-off per kind of call, which only grows', async () => {
    let now = 5_000;
    const a = limits({ now: () => now });
    const b = limits({ now: () => now });
    a.limited('submit', 2_000);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(await b.backoffUntil('submit')).toBe(7_000);
    expect(await b.backoffUntil('quote')).toBe(0);
    await b.backOff('submit', 6_000);
    expect(await a.backoffUntil('submit')).toBe(7_000);
    now = 7_000;
    const started = Date.now();
    await b.wait('submit');
    expect(Date.now() - started).toBeLessThan(1_000);
  });
});
