import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createServiceClient } from '../../../src/client/service-client';
import { serviceCallAttributes, serviceCallSpanName } from '../../../src/client/call-span';
import { activeTracing, inSpan, startTracing, stopTracing } from '../../../src/tracing';
import { startOtlpReceiver, type OtlpReceiver } from '../../helpers/otlp-receiver';

/** The service client's spans (src/client/call-span.ts): one per HTTP request, its context sent as `traceparent`. */

const API_KEY = 'rfk_call_span_secret';
let service: Server;
let serviceUrl: string;
const seen: IncomingHttpHeaders[] = [];
let receiver: OtlpReceiver;

beforeAll(async () => {
  service = createServer((request, response) => {
    seen.push(request.headers);
    response.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"IN_QUEUE"}');
  });
  await new Promise<void>((resolve) => service.listen(0, '127.0.0.1', resolve));
  serviceUrl = `http://127.0.0.1:${(service.address() as AddressInfo).port}`;
  receiver = await startOtlpReceiver();
});

afterAll(async () => {
  await stopTracing();
  await new Promise((resolve) => service.close(resolve));
  await receiver.close();
});

describe('a span of a service call', () => {
  it('names the route by its template and keeps ids, keys and queries out', () => {
    const call = {
      kind: 'status',
      method: 'GET',
      url: 'https://api.example:8443/v1/x/req_123/status?sig=abc',
    } as const;
    expect(serviceCallSpanName(call)).toBe('GET /v1/queue/requests/{request_id}/status');
    expect(serviceCallAttributes(call)).toEqual({
      'http.request.method': 'GET',
      'url.template': '/v1/queue/requests/{request_id}/status',
      'url.scheme': 'https',
      'server.address': 'api.example',
      'server.port': 8443,
      'reelflow.service.call': 'status',
    });
  });

  it('sends no traceparent while tracing is off', async () => {
    const client = createServiceClient({ baseUrl: serviceUrl, apiKey: API_KEY });
    await client.status('req_off');
    await client.close();
    expect(seen.at(-1)?.traceparent).toBeUndefined();
  });

  it('is a child of the active span and goes to the service as traceparent', async () => {
    startTracing({ url: `${receiver.url}/v1/traces`, headers: {}, serviceName: 'reelflow-test' });
    const client = createServiceClient({ baseUrl: serviceUrl, apiKey: API_KEY });
    await inSpan('caller', {}, () => client.status('req_abc'));
    await client.close();
    await activeTracing()!.flush();
    const [, traceId, spanId] = /^00-([0-9a-f]{32})-([0-9a-f]{16})-01$/.exec(String(seen.at(-1)?.traceparent)) ?? [];
    const call = receiver.spans.find((span) => span.spanId === spanId);
    const caller = receiver.spans.find((span) => span.name === 'caller');
    expect(call).toMatchObject({
      traceId,
      parentSpanId: caller?.spanId,
      name: 'GET /v1/queue/requests/{request_id}/status',
      attributes: { 'http.response.status_code': 200, 'http.request.method': 'GET' },
    });
    expect(JSON.stringify(receiver.spans)).not.toMatch(/rfk_call_span_secret|req_abc/);
  });
});
