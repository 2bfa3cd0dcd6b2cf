import * as http from 'node:http';
import * as net from 'node:net';
import {
  guardConnections,
  listenerTimeouts,
  resolveConnectionLimits,
  type ConnectionCloseReason,
  type ResolvedConnectionLimits,
} from '../../../src/net/connection-guard';

/**
 * The connection guard on a real node:http server over loopback: connections that hold a slot
 * without finishing a request give it up to complete ones; silent and trickling requests are cut;
 * a request whose handler is slow is still answered.
 */

interface Served {
  server: http.Server;
  port: number;
  closed: ConnectionCloseReason[];
  /** Resolves the held handlers (requests to /hold). */
  release(): void;
}

let served: Served | undefined;
const clients: net.Socket[] = [];

async function serve(limits: ResolvedConnectionLimits): Promise<Served> {
  const closed: ConnectionCloseReason[] = [];
  let release!: () => void;
  let held = new Promise<void>((resolve) => (release = resolve));
  const server = http.createServer(listenerTimeouts(limits).http, (request, response) => {
    // Answered before the body is read, as a key check does; node reads the rest afterwards.
    if (request.url === '/early') return response.writeHead(401).end();
    request.resume();
    request.on('end', () => {
      const answer = () => response.end('ok');
      if (request.url === '/hold') void held.then(answer);
      else answer();
    });
  });
  server.requestTimeout = limits.requestTimeoutMs;
  server.setTimeout(limits.idleTimeoutMs);
  guardConnections(server, limits, (reason) => closed.push(reason));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  return {
    server,
    port,
    closed,
    release: () => {
      release();
      held = Promise.resolve();
    },
  };
}

afterEach(async () => {
  for (const socket of clients.splice(0)) socket.destroy();
  if (served) {
    served.release();
    served.server.closeAllConnections();
    await new Promise((resolve) => served!.server.close(resolve));
    served = undefined;
  }
});

/** A connection whose close is recorded: `ended` resolves with what the server sent before closing. */
function connect(port: number): Promise<{ socket: net.Socket; ended: Promise<string> }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    clients.push(socket);
    let text = '';
    socket.on('data', (chunk: Buffer) => (text += chunk.toString()));
    socket.on('error', () => undefined);
    const ended = new Promise<string>((done) => socket.once('close', () => done(text)));
    socket.once('connect', () => resolve({ socket, ended }));
    socket.once('error', reject);
  });
}

/** Headers of a POST announcing `length` bytes, and the first `sent` of them. */
const stalledPost = (length: number, sent: string) =>
  `POST /upload HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: ${length}\r\n\r\n${sent}`;

function completePost(path = '/upload'): string {
  return `POST ${path} HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: 2\r\nconnection: close\r\n\r\n{}`;
}

const limits = (overrides: Partial<ResolvedConnectionLimits> = {}) =>
  resolveConnectionLimits({
    headersTimeoutMs: 60_000,
    requestTimeoutMs: 60_000,
    idleTimeoutMs: 60_000,
    maxConnections: 4,
    ...overrides,
  });

describe('resolveConnectionLimits', () => {
  it('keeps headers inside the request limit and the per-address cap inside the total', () => {
    const resolved = resolveConnectionLimits({
      headersTimeoutMs: 9_000,
      requestTimeoutMs: 5_000,
      idleTimeoutMs: 1_000,
      maxConnections: 8,
      maxConnectionsPerAddress: 20,
    });
    expect(resolved).toMatchObject({ headersTimeoutMs: 5_000, maxConnections: 8, maxConnectionsPerAddress: 8 });
    expect(resolveConnectionLimits({ ...resolved, maxConnectionsPerAddress: undefined }).maxConnectionsPerAddress).toBe(
      6,
    );
    expect(resolveConnectionLimits({ ...resolved, maxConnections: undefined }).maxConnections).toBeGreaterThanOrEqual(
      16,
    );
  });
});

describe('guardConnections', () => {
  it('makes room for a complete request by closing the oldest stalled connection', async () => {
    served = await serve(limits({ maxConnections: 4, maxConnectionsPerAddress: 4 }));
    const stalled = [];
    for (let i = 0; i < 4; i += 1) {
      const connection = await connect(served.port);
      connection.socket.write(stalledPost(100, '{'));
      stalled.push(connection);
    }
    // The fifth connection sends a whole request: the oldest stalled one gives up its slot.
    const complete = await connect(served.port);
    complete.socket.write(completePost());
    expect(await complete.ended).toMatch(/^HTTP\/1\.1 200 /);
    // One stalled connection (the one the server saw start first) was closed, without an answer.
    expect(await Promise.race(stalled.map((connection) => connection.ended))).toBe('');
    expect(served.closed).toEqual(['cap']);
  });

  it('applies the same rule per client address', async () => {
    served = await serve(limits({ maxConnections: 10, maxConnectionsPerAddress: 2 }));
    const first = await connect(served.port);
    first.socket.write(stalledPost(100, '{'));
    const second = await connect(served.port);
    second.socket.write(stalledPost(100, '{'));
    const complete = await connect(served.port);
    complete.socket.write(completePost());
    expect(await complete.ended).toMatch(/^HTTP\/1\.1 200 /);
    expect(await Promise.race([first.ended, second.ended])).toBe('');
    expect(served.closed).toEqual(['address_cap']);
  });

  it('never closes a connection answering a complete request: a new one is refused instead', async () => {
    served = await serve(limits({ maxConnections: 2, maxConnectionsPerAddress: 2 }));
    let handled = 0;
    const bothHandled = new Promise<void>((resolve) =>
      served!.server.on('request', () => (handled += 1) === 2 && resolve()),
    );
    const working = [await connect(served.port), await connect(served.port)];
    for (const connection of working) connection.socket.write(completePost('/hold'));
    // Both requests reached their (held) handler before the third connection comes.
    await bothHandled;
    const refused = await connect(served.port);
    expect(await refused.ended).toBe('');
    expect(served.closed).toEqual(['refused']);
    served.release();
    for (const connection of working) expect(await connection.ended).toMatch(/^HTTP\/1\.1 200 /);
  });

  it('closes a connection silent mid-body, and one that never sends, after the idle limit', async () => {
    served = await serve(limits({ idleTimeoutMs: 300 }));
    const stalled = await connect(served.port);
    stalled.socket.write(stalledPost(100, '{'));
    const silent = await connect(served.port);
    expect(await stalled.ended).toBe('');
    expect(await silent.ended).toBe('');
    expect(served.closed.filter((reason) => reason === 'idle')).toHaveLength(2);
  });

  it('answers a request whose handler takes longer than the idle limit', async () => {
    served = await serve(limits({ idleTimeoutMs: 200 }));
    const slow = await connect(served.port);
    slow.socket.write(completePost('/hold'));
    // The idle limit passes while the handler holds (the request is complete): the answer still comes.
    await new Promise((resolve) => setTimeout(resolve, 600));
    served.release();
    expect(await slow.ended).toMatch(/^HTTP\/1\.1 200 /);
    expect(served.closed).toEqual([]);
  });

  it('cuts a body that trickles in under the idle limit once the request limit is over (408)', async () => {
    served = await serve(limits({ requestTimeoutMs: 500, headersTimeoutMs: 500, idleTimeoutMs: 60_000 }));
    const trickle = await connect(served.port);
    trickle.socket.write(stalledPost(1_000, '{'));
    let sent = 0;
    const timer = setInterval(() => {
      // Bounded: 100 bytes at most, one every 50 ms.
      if ((sent += 1) > 100 || trickle.socket.destroyed) return clearInterval(timer);
      trickle.socket.write('"');
    }, 50);
    const answer = await trickle.ended;
    clearInterval(timer);
    expect(answer).toMatch(/^HTTP\/1\.1 408 /);
    expect(sent).toBeLessThan(100);
  });

  it('closes a connection answered before its body came once the rest stalls past the idle limit', async () => {
    served = await serve(limits({ idleTimeoutMs: 300 }));
    const early = await connect(served.port);
    early.socket.write(stalledPost(100, '{').replace('/upload', '/early'));
    expect(await early.ended).toMatch(/^HTTP\/1\.1 401 /);
    expect(served.closed).toEqual(['idle']);
  });
});
