import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { ServiceContext } from '../context';
import { hashKey, keyIdFor } from '../http/auth';
import { ServiceProblem } from '../http/errors';

/** A new random API key (`rfk_` + 32 random bytes, base64url). */
export function newApiKey(): string {
  return `rfk_${randomBytes(32).toString('base64url')}`;
}

/** Balance, ledger and API keys of the (single) account. */
export function registerAccountRoutes(app: FastifyInstance, context: () => ServiceContext): void {
  app.get('/v1/account/balance', async () => ({ credits: context().store.state.balance }));

  app.get('/v1/account/ledger', async () => {
    const state = context().store.state;
    return {
      credits: state.balance,
      entries: state.ledger.map((e) => ({
        seq: e.seq,
        kind: e.kind,
        amount: e.amount,
        request_id: e.requestId,
        at: new Date(e.at).toISOString(),
      })),
    };
  });

  // The key is in the answer once; only its hash is stored.
  app.post('/v1/account/keys', async (_request, reply) => {
    const ctx = context();
    const key = newApiKey();
    const hash = hashKey(key);
    const record = { id: keyIdFor(hash), hash, createdAt: Date.now(), revokedAt: null };
    ctx.store.commit({ t: 'key.created', key: record });
    return reply.code(201).send({ id: record.id, key, created_at: new Date(record.createdAt).toISOString() });
  });

  app.get('/v1/account/keys', async () => ({
    keys: [...context().store.state.keys.values()].map((k) => ({
      id: k.id,
      created_at: new Date(k.createdAt).toISOString(),
      revoked_at: k.revokedAt === null ? null : new Date(k.revokedAt).toISOString(),
    })),
  }));

  // Revocation takes effect at once (the spec allows up to about a minute).
  app.delete<{ Params: { id: string } }>('/v1/account/keys/:id', async (request, reply) => {
    const ctx = context();
    const key = ctx.store.state.keys.get(request.params.id);
    if (!key) throw new ServiceProblem('not_found', `no API key ${request.params.id}`);
    if (key.revokedAt === null) ctx.store.commit({ t: 'key.revoked', id: key.id, at: Date.now() });
    return reply.code(204).send();
  });
}
