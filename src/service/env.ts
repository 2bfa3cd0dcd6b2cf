import type { LocalServiceOptions } from './config';

/**
 * Reads local service options from the environment (for `src/workers/service.ts` and containers):
 * REELFLOW_SERVICE_PORT, _HOST, _DATA_DIR (required), _API_KEYS (comma-separated), _ADMIN_KEY, _CREDITS,
 * _ALLOW_PRIVATE_WEBHOOKS (1/true), _PUBLIC_URL, _CONCURRENCY, _EMIT_FAILURE_EVENTS, _LOG,
 * _RENDER (ffmpeg or stub), _STUB_HOLD_MS, _STUB_FIXTURES.
 * Values are checked again by `startLocalService`.
 */
export function serviceOptionsFromEnv(env: NodeJS.ProcessEnv): LocalServiceOptions {
  const get = (name: string): string | undefined => {
    const value = env[`REELFLOW_SERVICE_${name}`];
    return value === undefined || value.trim() === '' ? undefined : value.trim();
  };
  const int = (name: string): number | undefined => {
    const value = get(name);
    if (value === undefined) return undefined;
    if (!/^\d+$/.test(value)) throw new Error(`REELFLOW_SERVICE_${name} must be a non-negative integer, got "${value}"`);
    return Number(value);
  };
  const bool = (name: string): boolean | undefined => {
    const value = get(name)?.toLowerCase();
    if (value === undefined) return undefined;
    if (['1', 'true', 'yes'].includes(value)) return true;
    if (['0', 'false', 'no'].includes(value)) return false;
    throw new Error(`REELFLOW_SERVICE_${name} must be true or false, got "${value}"`);
  };
  const dataDir = get('DATA_DIR');
  if (!dataDir) throw new Error('REELFLOW_SERVICE_DATA_DIR is required');
  const options: LocalServiceOptions = { dataDir };
  const port = int('PORT');
  if (port !== undefined) options.port = port;
  const host = get('HOST');
  if (host) options.host = host;
  const keys = get('API_KEYS');
  if (keys) options.apiKeys = keys.split(',').map((k) => k.trim()).filter(Boolean);
  const adminKey = get('ADMIN_KEY');
  if (adminKey) options.adminKey = adminKey;
  const credits = int('CREDITS');
  if (credits !== undefined) options.credits = credits;
  const allowPrivate = bool('ALLOW_PRIVATE_WEBHOOKS');
  if (allowPrivate !== undefined) options.allowPrivateWebhooks = allowPrivate;
  const publicUrl = get('PUBLIC_URL');
  if (publicUrl) options.publicUrl = publicUrl;
  const concurrency = int('CONCURRENCY');
  if (concurrency !== undefined) options.concurrencyPerModel = concurrency;
  const failureEvents = bool('EMIT_FAILURE_EVENTS');
  if (failureEvents !== undefined) options.emitFailureEvents = failureEvents;
  if (bool('LOG')) options.logger = { level: 'info' };
  const render = get('RENDER');
  // Checked by startLocalService (ffmpeg or stub), which names the option in its error.
  if (render) options.render = render as LocalServiceOptions['render'];
  const holdMs = int('STUB_HOLD_MS');
  if (holdMs !== undefined) options.stubHoldMs = holdMs;
  const fixtures = get('STUB_FIXTURES');
  if (fixtures) options.stubFixturesDir = fixtures;
  return options;
}
