import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../src/stack/stack-state';
import { startTemporalDevServer } from '../../src/stack/temporal-dev-server';

/**
 * The dev server failing at start says why in the error itself: a test's state directory (and the
 * log file in it) is usually gone by the time anyone reads the failure.
 */

let dir: string;
let occupied: Server;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'reelflow-dev-server-'));
  occupied = createServer();
  await new Promise<void>((resolve) => occupied.listen(0, '127.0.0.1', resolve));
});

afterAll(async () => {
  await new Promise<void>((resolve) => occupied.close(() => resolve()));
  rmSync(dir, { recursive: true, force: true });
});

it("a dev server that exits while starting fails with its log's words in the message, not only the file's path", async () => {
  const uiPort = (occupied.address() as AddressInfo).port;
  const start = startTemporalDevServer({
    dbFile: join(dir, 'temporal.db'),
    logFile: join(dir, 'temporal.log'),
    port: await freePort(),
    uiPort,
  });
  await expect(start).rejects.toThrow(
    /exited with code \d+; see .*temporal\.log, which ends:\n.*UI port .*address already in use/s,
  );
});
