import * as http from 'node:http';
import { request } from 'undici';
import type { Registry } from 'prom-client';
import { defaultRegistry, PROMETHEUS_CONTENT_TYPE } from './definitions';

/** Options of a standalone /metrics endpoint (the worker's; the bridge serves /metrics on its own port). */
export interface MetricsServerOptions {
  host?: string;
  port?: number;
  registry?: Registry;
  /**
   * Other Prometheus endpoints whose text is appended (the SDK runtime's exporter), so one scrape
   * target gives reelflow's and the SDK's metrics. A source that does not answer is skipped.
   */
  appendFrom?: string[];
}

/** A listening metrics endpoint. */
export interface MetricsServer {
  url: string;
  port: number;
  close(): Promise<void>;
}

/** Renders the registry plus every `appendFrom` source as one exposition. */
export async function renderAll(registry: Registry, appendFrom: readonly string[] = []): Promise<string> {
  const parts = [await registry.metrics()];
  for (const source of appendFrom) {
    try {
      const response = await request(source, { headersTimeout: 2_000, bodyTimeout: 2_000 });
      const text = await response.body.text();
      if (response.statusCode === 200) parts.push(text.endsWith('\n') ? text : `${text}\n`);
    } catch {
      // A missing SDK exporter must not hide reelflow's own metrics.
    }
  }
  return parts.join('');
}

/** Serves GET /metrics (and /healthz) on `host:port` (port 0: any free port). */
export async function startMetricsServer(options: MetricsServerOptions = {}): Promise<MetricsServer> {
  const registry = options.registry ?? defaultRegistry;
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method === 'GET' && path === '/metrics') {
      renderAll(registry, options.appendFrom).then(
        (text) => {
          res.writeHead(200, { 'content-type': PROMETHEUS_CONTENT_TYPE });
          res.end(text);
        },
        () => {
          res.writeHead(500);
          res.end();
        },
      );
      return;
    }
    if (req.method === 'GET' && path === '/healthz') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"status":"ok"}');
      return;
    }
    res.writeHead(404);
    res.end();
  });
  const host = options.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => resolve());
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : (options.port ?? 0);
  const shown = host.includes(':') ? `[${host}]` : host;
  return {
    url: `http://${shown}:${port}/metrics`,
    port,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}
