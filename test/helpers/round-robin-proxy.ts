import * as http from 'node:http';
import { request } from 'undici';

/**
 * One webhook address in front of several bridges, standing in for nginx on loopback: round robin,
 * and a connection error moves the request to the next upstream (`proxy_next_upstream error`).
 */
export interface RoundRobinProxy {
  url: string;
  /** Requests answered, by upstream index. */
  served: number[];
  close(): Promise<void>;
}

export async function startProxy(upstreams: () => string[]): Promise<RoundRobinProxy> {
  const served: number[] = [];
  let next = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', async () => {
      const targets = upstreams();
      const body = Buffer.concat(chunks);
      const headers = Object.fromEntries(
        Object.entries(req.headers).filter(([k]) => !['host', 'connection', 'content-length'].includes(k)),
      ) as Record<string, string>;
      const first = next++;
      for (let i = 0; i < targets.length; i += 1) {
        const index = (first + i) % targets.length;
        try {
          const answer = await request(`${targets[index]}${req.url ?? '/'}`, {
            method: req.method as 'POST',
            headers,
            body,
          });
          const text = await answer.body.arrayBuffer();
          served[index] = (served[index] ?? 0) + 1;
          res.writeHead(answer.statusCode, {
            'content-type': String(answer.headers['content-type'] ?? 'application/json'),
          });
          res.end(Buffer.from(text));
          return;
        } catch {
          // Not answering (stopped): try the next bridge, as nginx's proxy_next_upstream error does.
        }
      }
      res.writeHead(502);
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}/webhooks`,
    served,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
