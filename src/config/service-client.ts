import { ConfigError } from './errors';
import { readVariables, type Env } from './read';
import type { ClientAuthScheme, ClientCancelMethod, ServiceIdempotency } from './schemas';

/** The service as a client (worker, CLI) reaches it: REELFLOW_SERVICE_URL, REELFLOW_API_KEY, REELFLOW_SERVICE_IDEMPOTENCY, REELFLOW_CLIENT_*. */
export interface ServiceSettings {
  /** Base URL without a trailing slash. */
  url: string;
  /** Never logged. */
  apiKey: string;
  /**
   * Whether the service honours `Idempotency-Key` (REELFLOW_SERVICE_IDEMPOTENCY; default `unknown`,
   * the setting that never pays twice). See docs/submit-policy.md.
   */
  idempotency: ServiceIdempotency;
  /** REELFLOW_CLIENT_AUTH_SCHEME (default `Key`). */
  authScheme: ClientAuthScheme;
  /** REELFLOW_CLIENT_CANCEL_METHOD (default `POST`). */
  cancelMethod: ClientCancelMethod;
}

export const SERVICE_CLIENT_VARIABLE_NAMES = [
  'REELFLOW_SERVICE_URL',
  'REELFLOW_API_KEY',
  'REELFLOW_SERVICE_IDEMPOTENCY',
  'REELFLOW_CLIENT_AUTH_SCHEME',
  'REELFLOW_CLIENT_CANCEL_METHOD',
] as const;

/**
 * The service settings: required (URL and key must be set) or optional (absent unless both are set;
 * a set value is still validated).
 */
export function loadServiceSettings(env: Env, required: true): ServiceSettings;
export function loadServiceSettings(env: Env, required: boolean): ServiceSettings | undefined;
export function loadServiceSettings(env: Env, required: boolean): ServiceSettings | undefined {
  const e = readVariables(SERVICE_CLIENT_VARIABLE_NAMES, env, {
    required: required ? (['REELFLOW_SERVICE_URL', 'REELFLOW_API_KEY'] as const) : [],
  });
  if (e.REELFLOW_SERVICE_URL === undefined || e.REELFLOW_API_KEY === undefined) {
    if (required) throw ConfigError.of('REELFLOW_SERVICE_URL', 'must be set');
    return undefined;
  }
  return {
    url: e.REELFLOW_SERVICE_URL,
    apiKey: e.REELFLOW_API_KEY,
    idempotency: e.REELFLOW_SERVICE_IDEMPOTENCY,
    authScheme: e.REELFLOW_CLIENT_AUTH_SCHEME,
    cancelMethod: e.REELFLOW_CLIENT_CANCEL_METHOD,
  };
}
