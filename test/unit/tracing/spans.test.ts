import { currentTraceparent, inSpan, recordSpan, startTracing, stopTracing, activeTracing } from '../../../src/tracing';
import { startOtlpReceiver, type OtlpReceiver } from '../../helpers/otlp-receiver';

/** reelflow's own spans (src/tracing/spans.ts): nothing while tracing is off, parent and child once on. */

let receiver: OtlpReceiver;
beforeAll(async () => {
  receiver = await startOtlpReceiver();
});
afterAll(async () => {
  await stopTracing();
  await receiver.close();
});

it('runs the work alone while tracing is off', async () => {
  const seen = await inSpan('off', {}, async (span, headers) => ({ span, headers }));
  expect(seen).toEqual({ span: undefined, headers: {} });
  expect(currentTraceparent()).toBeUndefined();
  expect(recordSpan('off', undefined, { startTime: 1, endTime: 2 })).toBeUndefined();
});

it('once on, nests spans, records past work under a stored parent and records failures', async () => {
  startTracing({ url: `${receiver.url}/v1/traces`, headers: { 'x-token': 'abc' }, serviceName: 'reelflow-test' });
  const stored = await inSpan('submit', {}, async (_span, headers) => {
    expect(currentTraceparent()).toBe(headers.traceparent);
    return headers.traceparent!;
  });
  const receive = recordSpan('receive', stored, { startTime: Date.now() - 50, endTime: Date.now() });
  await expect(
    inSpan('signal', { parent: receive! }, async () => {
      throw new Error('refused');
    }),
  ).rejects.toThrow('refused');
  await activeTracing()!.flush();
  const byName = new Map(receiver.spans.map((span) => [span.name, span]));
  const submit = byName.get('submit')!;
  expect(byName.get('receive')).toMatchObject({ traceId: submit.traceId, parentSpanId: submit.spanId });
  expect(byName.get('signal')).toMatchObject({ traceId: submit.traceId, parentSpanId: byName.get('receive')!.spanId });
  expect(receiver.requests.every((headers) => headers['x-token'] === 'abc')).toBe(true);
  expect(byName.get('signal')?.service).toBe('reelflow-test');
});
