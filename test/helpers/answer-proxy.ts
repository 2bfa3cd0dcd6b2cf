import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';

/**
 * A real HTTP proxy on loopback in front of the local service that can rewrite its answers: it
 * stands for the parts of a real service (or network) reelflow cannot control, such as a key
 * rotation answering 401 to polls, or a 202 whose body breaks the contract. Every request really
 * reaches the service first (a submit creates and bills the job), then `rewrite` may replace the
 * answer the client sees. The service's API URLs in bodies are rewritten to the proxy's.
 */
export interface AnswerProxy {
  url: string;
  /** Replaces the answer for a request; return undefined to pass the service's answer through. */
  rewrite: (call: {
    method: string;
    path: string;
    status: number;
    body: unknown;
  }) => { status: number; body: unknown } | undefined;
  /** Requests seen, as `METHOD path`. */
  seen: string[];
  close(): Promise<void>;
}

export async function startAnswerProxy(target: string): Promise<AnswerProxy> {
  const servers: Server[] = [];
  const proxy: AnswerProxy = {
    url: '',
    rewrite: () => undefined,
    seen: [],
    close: () =>
      new Promise<void>((resolve) => {
        const server = servers[0] as Server;
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void (async () => {
        const path = req.url ?? '/';
        proxy.seen.push(`${req.method} ${path.split('?')[0]}`);
        const headers: Record<string, string> = {};
        for (const [name, value] of Object.entries(req.headers))
          if (typeof value === 'string' && name !== 'host' && name !== 'content-length') headers[name] = value;
        const upstream = await request(`${target}${path}`, {
          method: req.method as 'GET',
          headers,
          body: chunks.length ? Buffer.concat(chunks) : undefined,
        });
        const raw = Buffer.from(await upstream.body.arrayBuffer());
        const upstreamType = String(upstream.headers['content-type'] ?? '');
        if (!/json/.test(upstreamType)) {
          res.writeHead(upstream.statusCode, { 'content-type': upstreamType || 'application/octet-stream' });
          res.end(raw);
          return;
        }
        // API URLs (status, result, cancel) lead back through the proxy; output files stay the service's.
        const text = raw.toString('utf8').split(`${target}/v1/`).join(`${proxy.url}/v1/`);
        let body: unknown;
        try {
          body = JSON.parse(text);
        } catch {
          body = text;
        }
        const replaced = proxy.rewrite({ method: req.method ?? 'GET', path, status: upstream.statusCode, body });
        const status = replaced?.status ?? upstream.statusCode;
        res.writeHead(status, {
          'content-type': replaced ? (status >= 400 ? 'application/problem+json' : 'application/json') : upstreamType,
        });
        res.end(replaced ? JSON.stringify(replaced.body) : text);
      })().catch((error: unknown) => {
        res.writeHead(502, { 'content-type': 'text/plain' });
        res.end(String(error));
      });
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  proxy.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return proxy;
}
