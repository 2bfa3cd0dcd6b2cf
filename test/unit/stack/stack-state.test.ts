import { readFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { freePort } from '../../../src/stack/stack-state';

/** TCP states of the sockets bound to local `port` (/proc/net/tcp, hex state codes: 06 = TIME_WAIT, 0A = LISTEN). */
function socketStates(port: number): string[] {
  const hexPort = port.toString(16).toUpperCase().padStart(4, '0');
  return readFileSync('/proc/net/tcp', 'utf8')
    .split('\n')
    .slice(1)
    .map((line) => line.trim().split(/\s+/))
    .filter((fields) => fields[1]?.endsWith(`:${hexPort}`))
    .map((fields) => fields[3] ?? '');
}

function listen(port: number): Promise<{ port: number; close(): Promise<void> }> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () =>
      resolve({
        port: (server.address() as AddressInfo).port,
        close: () => new Promise<void>((done) => server.close(() => done())),
      }),
    );
  });
}

const linux = process.platform === 'linux' ? describe : describe.skip;

linux('freePort', () => {
  it('leaves the port in TIME_WAIT, so bind(0) does not hand it out again before its user binds it', async () => {
    const port = await freePort();
    expect(socketStates(port)).toContain('06');
    // While the TIME_WAIT socket holds the port, the kernel's own picks skip it.
    for (let i = 0; i < 200; i++) {
      const other = await listen(0);
      await other.close();
      expect(other.port).not.toBe(port);
    }
  });

  it('returns a port its user can still bind explicitly (SO_REUSEADDR, as Node and Go listeners set it)', async () => {
    const port = await freePort();
    const server = await listen(port);
    expect(server.port).toBe(port);
    expect(socketStates(port)).toContain('0A');
    await server.close();
  });
});
