import * as http from 'node:http';
import type { Connection } from '@temporalio/client';
import type { Worker, WorkerStatus } from '@temporalio/worker';

/** What `GET /readyz` answers: whether this worker can take work, and why not. */
export interface WorkerReadiness {
  status: 'ready' | 'not_ready';
  temporal: {
    address: string;
    namespace: string;
    /** The frontend answered a call within the probe's deadline. */
    connected: boolean;
    /** Round trip of that call, ms (when connected). */
    ms?: number;
    /** First line of the error (when not connected); never a key. */
    error?: string;
  };
  worker: {
    taskQueue: string;
    /** The SDK's run state (RUNNING while it polls and works). */
    state: WorkerStatus['runState'];
    workflowPoller: WorkerStatus['workflowPollerState'];
    activityPoller: WorkerStatus['activityPollerState'];
    inFlightActivities: number;
    cachedWorkflows: number;
  };
}

/** The result of one call to the frontend. */
export type TemporalProbe = { connected: true; ms: number } | { connected: false; error: string };

/**
 * The readiness verdict: ready only while the frontend answers and the worker runs with both its
 * workflow and its activity pollers polling. Pure, so the rule is tested on its own.
 */
export function readinessOf(
  status: WorkerStatus,
  probe: TemporalProbe,
  where: { address: string; namespace: string; taskQueue: string },
): WorkerReadiness {
  const polling =
    status.runState === 'RUNNING' &&
    status.workflowPollerState === 'POLLING' &&
    status.activityPollerState === 'POLLING';
  return {
    status: probe.connected && polling ? 'ready' : 'not_ready',
    temporal: {
      address: where.address,
      namespace: where.namespace,
      connected: probe.connected,
      ...(probe.connected ? { ms: probe.ms } : { error: probe.error }),
    },
    worker: {
      taskQueue: where.taskQueue,
      state: status.runState,
      workflowPoller: status.workflowPollerState,
      activityPoller: status.activityPollerState,
      inFlightActivities: status.numInFlightActivities,
      cachedWorkflows: status.numCachedWorkflows,
    },
  };
}

/** One GetSystemInfo call on `connection` within `timeoutMs`. */
export async function probeTemporal(connection: Connection, timeoutMs: number): Promise<TemporalProbe> {
  const started = performance.now();
  try {
    await connection.withDeadline(Date.now() + timeoutMs, () => connection.workflowService.getSystemInfo({}));
    return { connected: true, ms: Math.round(performance.now() - started) };
  } catch (error) {
    return { connected: false, error: (error instanceof Error ? error.message : String(error)).split('\n')[0]! };
  }
}

/** Options of the worker's health endpoint. */
export interface WorkerHealthServerOptions {
  host: string;
  /** 0 picks a free port. */
  port: number;
  worker: Pick<Worker, 'getStatus'>;
  /** A client connection to the worker's frontend (the worker's own is native, without a raw call API). */
  connection: Connection;
  address: string;
  namespace: string;
  taskQueue: string;
  /** Deadline of the frontend call each /readyz makes. */
  probeTimeoutMs?: number;
}

/** A listening health endpoint. */
export interface WorkerHealthServer {
  /** Base URL, e.g. http://127.0.0.1:9091 (GET /readyz, GET /healthz). */
  url: string;
  port: number;
  close(): Promise<void>;
}

/**
 * Serves the worker's health on its own port, whether metrics are on or not: `GET /readyz` (200 ready,
 * 503 not ready; JSON WorkerReadiness: the Temporal connection, checked by a call per request, and the
 * pollers) and `GET /healthz` (200 while the process serves HTTP).
 */
export async function startWorkerHealthServer(options: WorkerHealthServerOptions): Promise<WorkerHealthServer> {
  const timeoutMs = options.probeTimeoutMs ?? 2_000;
  const where = { address: options.address, namespace: options.namespace, taskQueue: options.taskQueue };
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    const json = (code: number, body: unknown) => {
      res.writeHead(code, { 'content-type': 'application/json', 'cache-control': 'no-store' });
      res.end(`${JSON.stringify(body)}\n`);
    };
    if (req.method === 'GET' && path === '/healthz') return json(200, { status: 'ok' });
    if (req.method === 'GET' && path === '/readyz') {
      probeTemporal(options.connection, timeoutMs).then(
        (probe) => {
          const readiness = readinessOf(options.worker.getStatus(), probe, where);
          json(readiness.status === 'ready' ? 200 : 503, readiness);
        },
        () => json(503, { status: 'not_ready' }),
      );
      return;
    }
    json(404, { error: 'not_found' });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => resolve());
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : options.port;
  const shown = options.host.includes(':') ? `[${options.host}]` : options.host;
  return {
    url: `http://${shown}:${port}`,
    port,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}
