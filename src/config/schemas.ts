import { z } from 'zod';

export { portTextSchema } from './port';

/**
 * Parsing rules of the variables' text (see ./variables.ts), in one place so that one kind of value
 * (a port, a boolean, a whole number) is read the same way by every process.
 */

/** TEMPORAL_ADDRESS: `host:port`. */
export const temporalAddressSchema = z
  .string()
  .trim()
  .regex(/^[^\s:/]+:\d{1,5}$/, 'must be host:port, e.g. localhost:7233');

/** TEMPORAL_NAMESPACE and other names that must not be blank. */
export const nonBlankSchema = z.string().trim().min(1, 'must not be empty');

/** REELFLOW_WEBHOOK_SECRETS: comma-separated signing secrets (two during a rotation). */
export const webhookSecretsSchema = z
  .string({ error: 'is required (comma-separated signing secrets)' })
  .transform((text) => text.split(',').map((part) => part.trim()))
  .pipe(z.array(z.string().min(1, 'must not contain an empty secret')).min(1));

/** REELFLOW_SERVICE_URL: an http(s) base URL, returned without a trailing slash. */
export const serviceUrlSchema = z
  .string()
  .trim()
  .pipe(z.url({ protocol: /^https?$/, error: 'must be an http(s) URL such as http://127.0.0.1:8710' }))
  .transform((url) => url.replace(/\/+$/, ''));

/** REELFLOW_SERVICE_IDEMPOTENCY: does the service return the original job for a repeated Idempotency-Key? */
export const serviceIdempotencySchema = z.enum(['honoured', 'unknown'], {
  error: 'must be honoured or unknown (see docs/submit-policy.md)',
});
export type ServiceIdempotency = z.infer<typeof serviceIdempotencySchema>;

/** REELFLOW_CLIENT_AUTH_SCHEME: the `Authorization` scheme; the spec accepts both for the same key. */
export const clientAuthSchemeSchema = z.enum(['Key', 'Bearer'], { error: 'must be Key or Bearer' });
export type ClientAuthScheme = z.infer<typeof clientAuthSchemeSchema>;

/** REELFLOW_CLIENT_CANCEL_METHOD: the HTTP method of `cancel_url` (the spec leaves it "not shown"). */
export const clientCancelMethodSchema = z
  .string()
  .transform((text) => text.toUpperCase())
  .pipe(z.enum(['POST', 'PUT', 'DELETE'], { error: 'must be POST, PUT or DELETE' }));
export type ClientCancelMethod = z.infer<typeof clientCancelMethodSchema>;

/** REELFLOW_WEBHOOK_URL: any http(s) URL; whether it obeys the registration rules is `reelflow doctor`'s check. */
export const webhookUrlSchema = z
  .string()
  .trim()
  .pipe(z.url({ protocol: /^https?$/, error: 'must be an http(s) URL such as https://hooks.example.com/webhooks' }));

/** REELFLOW_EARLY_STATUS_CHECK_SECONDS: seconds, 0 (none) to 600. */
export const earlyCheckSecondsSchema = z
  .string()
  .trim()
  .regex(/^\d+(\.\d+)?$/, 'must be a number of seconds (0 = no early check)')
  .transform(Number)
  .pipe(z.number().max(600, 'must be at most 600 seconds'));

/** A whole number written in decimal digits, from `min` to `max`. */
export function wholeNumberText(min: number, max: number = Number.MAX_SAFE_INTEGER) {
  return z
    .string()
    .regex(/^\d+$/, 'must be a whole number')
    .transform(Number)
    .pipe(z.number().int().min(min, `must be at least ${min}`).max(max, `must be at most ${max}`));
}

/** Booleans: true/false, 1/0, yes/no (any case). */
/** REELFLOW_DEPLOYMENT_NAME: a Worker Deployment name (Temporal joins name and build id with `.` or `:`). */
export const deploymentNameSchema = nonBlankSchema
  .max(255, 'must be at most 255 characters')
  .refine((text) => !/[.:]/.test(text), 'must not contain `.` or `:`');

/** REELFLOW_BUILD_ID: a Worker Deployment build id. */
export const buildIdSchema = nonBlankSchema.max(255, 'must be at most 255 characters');

export const booleanTextSchema = z
  .string()
  .transform((text) => text.toLowerCase())
  .pipe(z.enum(['true', 'false', '1', '0', 'yes', 'no'], { error: 'must be true or false' }))
  .transform((text) => text === 'true' || text === '1' || text === 'yes');

/** pino level names, any case. */
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevelName = (typeof LOG_LEVELS)[number];
export const logLevelSchema = z
  .string()
  .transform((text) => text.toLowerCase())
  .pipe(z.enum(LOG_LEVELS, { error: `must be one of ${LOG_LEVELS.join(', ')}` }));

/**
 * REELFLOW_MODEL_CONCURRENCY: `<model>=<n>,…`, each model one of `models` at most once, each cap a
 * whole number 1–100000 (the provider counts jobs in flight per model).
 */
export function modelCapsSchema(models: readonly string[]) {
  return z.string().transform((text, context) => {
    const caps: Record<string, number> = {};
    for (const [index, part] of text.split(',').entries()) {
      const entry = part.trim();
      const match = /^([^=\s]+)\s*=\s*(\d+)$/.exec(entry);
      const fail = (message: string) => {
        context.addIssue({ code: 'custom', message: `entry ${index + 1} (${JSON.stringify(entry)}) ${message}` });
        return z.NEVER;
      };
      if (!match) return fail('must be <model>=<n>');
      const [, model = '', count = ''] = match;
      if (!models.includes(model)) return fail(`names an unknown model (known: ${models.join(', ')})`);
      if (caps[model] !== undefined) return fail('names its model a second time');
      const cap = Number(count);
      if (cap < 1 || cap > 100_000) return fail('must cap at 1 to 100000');
      caps[model] = cap;
    }
    return caps;
  });
}
