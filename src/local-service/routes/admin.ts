import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { toFieldErrors } from '../../contract';
import type { ServiceContext } from '../context';
import { injectedFaults } from '../faults';
import { ServiceProblem } from '../http/errors';

const grantSchema = z.strictObject({ credits: z.number().int().positive() });

const admin = { config: { access: 'admin' as const } };

/**
 * Fault injection at run time (and the faults it injected), and credit grants, for tests and benchmarks. Registered only when
 * the service has an admin credential (`--admin-key`); they take that credential and no other.
 */
export function registerAdminRoutes(app: FastifyInstance, context: () => ServiceContext): void {
  app.get('/v1/admin/faults', admin, async () => context().getFaults());

  // What the service really injected (journalled as it fired), for tests that explain each outcome.
  app.get('/v1/admin/faults/injected', admin, async () => ({ faults: injectedFaults(context().store.state) }));

  app.put<{ Body: unknown }>('/v1/admin/faults', admin, async (request) => {
    try {
      return context().setFaults(request.body ?? {});
    } catch (error) {
      if (error instanceof z.ZodError)
        throw new ServiceProblem('validation_failed', 'invalid fault configuration', { errors: toFieldErrors(error) });
      throw error;
    }
  });

  app.post<{ Body: unknown }>('/v1/admin/credits', admin, async (request) => {
    const ctx = context();
    const parsed = grantSchema.safeParse(request.body ?? {});
    if (!parsed.success)
      throw new ServiceProblem('validation_failed', 'invalid credit grant', { errors: toFieldErrors(parsed.error) });
    const state = ctx.store.state;
    ctx.store.commit({
      t: 'ledger',
      entry: {
        seq: state.nextLedgerSeq(),
        kind: 'grant',
        amount: parsed.data.credits,
        requestId: null,
        at: Date.now(),
      },
    });
    return { credits: state.balance };
  });
}
