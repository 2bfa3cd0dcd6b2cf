import { resolve } from 'node:path';
import { loadMediaSettings, type MediaStoreSettings } from './media';
import { readVariables, type Env, type Flags } from './read';
import { loadServiceSettings, type ServiceSettings } from './service-client';
import { loadTemporalSettings, type TemporalSettings } from './temporal';

/**
 * The configuration of the `reelflow` CLI (variables: CLI_VARIABLES in ./processes.ts). Every command
 * reads it once at start; a wrong or missing value stops it with exit 2 and a ConfigError naming the
 * variable, never its value.
 */

/** What the CLI's commands read; parts a command did not ask for are absent. */
export interface ReelflowEnv {
  temporal: TemporalSettings;
  service?: ServiceSettings;
  webhookSecrets?: string[];
  /** Where media references live (always set: the default is the local stack's file store). */
  media: MediaStoreSettings;
  /**
   * REELFLOW_EARLY_STATUS_CHECK_SECONDS: the one status check a few seconds after each submit
   * (0 = none; unset = the pipeline default, 5 s). See docs/preflight.md.
   */
  earlyStatusCheckSeconds?: number;
}

/** Which optional parts a command needs; a needed part that is missing is an error. */
export interface EnvNeeds {
  service?: boolean;
  webhookSecrets?: boolean;
}

/**
 * Reads and validates the CLI's configuration. Temporal settings are always read (defaults suit a
 * local dev server); the service and the webhook secrets only when `needs` asks, or when set (then validated).
 */
export function loadEnv(needs: EnvNeeds = {}, env: Env = process.env): ReelflowEnv {
  const temporal = loadTemporalSettings(env);
  const media = loadMediaSettings(env);
  const service = loadServiceSettings(env, needs.service === true);
  const e = readVariables(['REELFLOW_WEBHOOK_SECRETS', 'REELFLOW_EARLY_STATUS_CHECK_SECONDS'], env, {
    required: needs.webhookSecrets === true ? ['REELFLOW_WEBHOOK_SECRETS'] : [],
  });
  return {
    temporal,
    media,
    ...(service ? { service } : {}),
    ...(e.REELFLOW_WEBHOOK_SECRETS !== undefined ? { webhookSecrets: e.REELFLOW_WEBHOOK_SECRETS } : {}),
    ...(e.REELFLOW_EARLY_STATUS_CHECK_SECONDS !== undefined
      ? { earlyStatusCheckSeconds: e.REELFLOW_EARLY_STATUS_CHECK_SECONDS }
      : {}),
  };
}

/** loadEnv with the service required: the settings are returned non-optional. */
export function loadEnvWithService(env: Env = process.env): ReelflowEnv & { service: ServiceSettings } {
  return { ...loadEnv({}, env), service: loadServiceSettings(env, true) };
}

/** Settings of the local stack (`reelflow dev`, `npm run demo`): its state directory and the free-ports choice. */
export interface StackSettings {
  /** REELFLOW_STATE_DIR (or `--state-dir`), absolute; default `.reelflow` in the working directory. */
  stateDir: string;
  /** REELFLOW_DEV_PORTS=auto (or `--auto-ports`): free ports on the first start of a state directory. */
  autoPorts: boolean;
  /** REELFLOW_WEBHOOK_URL: the address registered with the service instead of the bridge's own (TLS in front of it). */
  webhookUrl?: string;
}

/** Reads the local stack's settings; `flags` stand for the variables and win over them. */
export function loadStackSettings(env: Env = process.env, flags: Flags = {}): StackSettings {
  const e = readVariables(['REELFLOW_STATE_DIR', 'REELFLOW_DEV_PORTS', 'REELFLOW_WEBHOOK_URL'], env, { flags });
  return {
    stateDir: resolve(e.REELFLOW_STATE_DIR ?? '.reelflow'),
    autoPorts: e.REELFLOW_DEV_PORTS === 'auto',
    ...(e.REELFLOW_WEBHOOK_URL !== undefined ? { webhookUrl: e.REELFLOW_WEBHOOK_URL } : {}),
  };
}
