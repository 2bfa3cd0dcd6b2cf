import { request } from 'undici';
import {
  bridgeMetrics,
  createRegistry,
  PROMETHEUS_CONTENT_TYPE,
  startMetricsServer,
  workerMetrics,
  type MetricsServer,
} from '../../../src/metrics';

let server: MetricsServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function scrape(url: string): Promise<{ status: number; type: string; text: string }> {
  const response = await request(url);
  return {
    status: response.statusCode,
    type: String(response.headers['content-type']),
    text: await response.body.text(),
  };
}

it('serves reelflow counters and histograms with the Node process metrics on one /metrics', async () => {
  const registry = createRegistry();
  const worker = workerMetrics(registry);
  const bridge = bridgeMetrics(registry);
  worker.serviceCalls.inc({ kind: 'submit', outcome: 'ok' });
  worker.serviceCalls.inc({ kind: 'submit', outcome: 'ok' });
  bridge.signalLatency.observe({}, 0.02);
  server = await startMetricsServer({ registry });

  const { status, type, text } = await scrape(server.url);
  expect(status).toBe(200);
  expect(type).toBe(PROMETHEUS_CONTENT_TYPE);
  expect(text).toContain('# TYPE reelflow_service_calls_total counter');
  expect(text).toMatch(/^reelflow_service_calls_total\{kind="submit",outcome="ok"\} 2$/m);
  expect(text).toMatch(/^reelflow_bridge_signal_latency_seconds_bucket\{le="0.025"\} 1$/m);
  expect(text).toMatch(/^reelflow_bridge_signal_latency_seconds_count 1$/m);
  // What the hand-written registry lacked: the process itself (event loop, heap, GC, memory).
  for (const name of [
    'nodejs_eventloop_lag_seconds',
    'nodejs_heap_size_used_bytes',
    'nodejs_gc_duration_seconds',
    'process_resident_memory_bytes',
  ]) {
    expect(text).toContain(`# TYPE ${name} `);
  }
});

it('shares the series when a second bridge or worker in the same process declares the metrics again', () => {
  const registry = createRegistry();
  const first = workerMetrics(registry);
  const second = workerMetrics(registry);
  expect(second.polls).toBe(first.polls);
  expect(() => bridgeMetrics(registry)).not.toThrow();
});

it('refuses a label that the metric does not declare, so a typo cannot create a stray series', () => {
  const metrics = workerMetrics(createRegistry());
  expect(() => metrics.polls.inc({ state: 'COMPLETED' })).toThrow(/label/i);
});

it('appends another exporter (the Temporal SDK runtime) to the same scrape and skips one that does not answer', async () => {
  const sdk = await startMetricsServer({ registry: createRegistry() });
  const registry = createRegistry();
  workerMetrics(registry).submitted.inc({ model: 'm' });
  server = await startMetricsServer({ registry, appendFrom: [sdk.url, 'http://127.0.0.1:9/metrics'] });
  try {
    const { text } = await scrape(server.url);
    expect(text).toMatch(/^reelflow_jobs_submitted_total\{model="m"\} 1$/m);
    // The appended source's process metrics appear a second time: proof that its text is on the scrape.
    expect(text.split('# TYPE process_resident_memory_bytes gauge').length - 1).toBe(2);
  } finally {
    await sdk.close();
  }
});

it("reads the bridge's inbox backlog at scrape time, from the inboxes still watched", async () => {
  const registry = createRegistry();
  const bridge = bridgeMetrics(registry);
  let backlog = 3;
  const unwatch = bridge.watchBacklog(() => backlog);
  bridge.forwardFailures.inc({ kind: 'temporal_retry' });
  bridge.connectionsClosed.inc({ reason: 'idle' });
  server = await startMetricsServer({ registry });
  expect((await scrape(server.url)).text).toMatch(/^reelflow_bridge_inbox_backlog 3$/m);
  backlog = 7;
  const text = (await scrape(server.url)).text;
  expect(text).toMatch(/^reelflow_bridge_inbox_backlog 7$/m);
  expect(text).toMatch(/^reelflow_bridge_forward_failures_total\{kind="temporal_retry"\} 1$/m);
  expect(text).toMatch(/^reelflow_bridge_connections_closed_total\{reason="idle"\} 1$/m);
  unwatch();
  expect((await scrape(server.url)).text).toMatch(/^reelflow_bridge_inbox_backlog 0$/m);
});
