import type { CallKind } from './types';

/**
 * What a span of one service call says: the method and the route as a template (never the URL with
 * its request id, nor a service-given URL's query, which may be signed), the server, the call's kind.
 * Never the API key or a body.
 */

/** The route of each kind of call, as the service's API documents it (docs/service-api.md). */
const ROUTE_TEMPLATES: Record<CallKind | 'ledger' | 'lookup', string> = {
  submit: '/v1/queue/{model_id}',
  status: '/v1/queue/requests/{request_id}/status',
  result: '/v1/queue/requests/{request_id}',
  cancel: '/v1/queue/requests/{request_id}/cancel',
  quote: '/v1/pricing/quote',
  ledger: '/v1/account/ledger',
  lookup: '/v1/queue/requests',
};

/** The call's span name: `POST /v1/queue/{model_id}`. */
export function serviceCallSpanName(call: { kind: CallKind | 'ledger' | 'lookup'; method: string }): string {
  return `${call.method} ${ROUTE_TEMPLATES[call.kind]}`;
}

/** The call's span attributes (OpenTelemetry's HTTP client conventions, and reelflow's call kind). */
export function serviceCallAttributes(call: {
  kind: CallKind | 'ledger' | 'lookup';
  method: string;
  url: string;
}): Record<string, string | number> {
  const url = new URL(call.url);
  const port = url.port !== '' ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
  return {
    'http.request.method': call.method,
    'url.template': ROUTE_TEMPLATES[call.kind],
    'url.scheme': url.protocol.replace(':', ''),
    'server.address': url.hostname,
    'server.port': port,
    'reelflow.service.call': call.kind,
  };
}
