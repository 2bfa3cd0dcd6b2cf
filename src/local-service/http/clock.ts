import type { FastifyInstance } from 'fastify';

/**
 * Stamps `request.receivedAt` (ms since the epoch) as the first thing that happens to a request,
 * once its headers are read and before auth, the body, validation, fetching or pricing: the
 * service's clock of "the submit arrived", from which benchmarks measure hand-offs.
 */
export function stampReceivedAt(app: FastifyInstance): void {
  app.addHook('onRequest', (request, _reply, done) => {
    request.receivedAt = Date.now();
    done();
  });
}

declare module 'fastify' {
  interface FastifyRequest {
    /** When the request arrived (see stampReceivedAt). */
    receivedAt?: number;
  }
}
