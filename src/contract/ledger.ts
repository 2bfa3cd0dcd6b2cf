import { z } from 'zod';

/**
 * The account ledger, `GET {base_url}/v1/account/ledger` (the local service's answer; spec-decisions
 * record it). Loose objects: a service may add fields. `amount` is signed: a charge is negative.
 */
export const ledgerEntrySchema = z.looseObject({
  seq: z.number().int().optional(),
  kind: z.string().min(1),
  amount: z.number(),
  request_id: z.string().min(1).nullable(),
  at: z.string().min(1),
});

export const accountLedgerSchema = z.looseObject({
  credits: z.number().optional(),
  entries: z.array(ledgerEntrySchema),
});
export type AccountLedger = z.infer<typeof accountLedgerSchema>;

/** A job found by `GET {base_url}/v1/queue/requests?idempotency_key=` (local extension). */
export const keyLookupSchema = z.looseObject({
  idempotency_key: z.string(),
  requests: z.array(
    z.looseObject({
      request_id: z.string().min(1),
      status: z.string(),
      cancel_url: z.string().optional(),
      credits_charged: z.number().optional(),
    }),
  ),
});
export type KeyLookup = z.infer<typeof keyLookupSchema>;
