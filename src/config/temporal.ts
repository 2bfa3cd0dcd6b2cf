import { readFileSync } from 'node:fs';
import { loadClientConfigProfile, type ClientConfigProfile, type ConfigDataSource } from '@temporalio/envconfig';
import { ConfigError, type ConfigIssue } from './errors';
import { readVariables, textOf, type Env } from './read';
import { temporalAddressSchema } from './schemas';
import type { VariableName } from './variables';

/**
 * The one Temporal connection loader of the CLI, the worker and the bridge, on `@temporalio/envconfig`:
 * Temporal's standard variables (`TEMPORAL_ADDRESS`, `TEMPORAL_TLS_CLIENT_CERT_PATH`, ...) over a
 * profile of Temporal's TOML config file (`TEMPORAL_PROFILE`, `TEMPORAL_CONFIG_FILE`), the same
 * rules the `temporal` CLI follows. envconfig gets only the variables declared here, read through
 * src/config's empty-value rule, never the whole environment.
 */

/** A PEM input: a file or the text itself, and the setting it came from (named in errors, never its content). */
export type PemSource = { setting: string } & ({ path: string } | { data: Uint8Array });

/** TLS to the frontend. Present = TLS on; a client certificate and key make it mTLS. */
export interface TemporalTlsSettings {
  /** Name the frontend's certificate must carry, when it is not the address's host. */
  serverName?: string;
  /** CA that signed the frontend's certificate (a private CA); absent = the system's trusted CAs. */
  serverCaCert?: PemSource;
  /** mTLS client certificate and key: both or neither. */
  clientCert?: PemSource;
  clientKey?: PemSource;
}

/** Where and how to reach Temporal: what every process that talks to Temporal reads. */
export interface TemporalConnectionSettings {
  address: string;
  namespace: string;
  /** Temporal API key (implies TLS). Never logged. */
  apiKey?: string;
  /** Absent: plaintext (a local dev server, a cluster without TLS). */
  tls?: TemporalTlsSettings;
  /** gRPC metadata from the profile's `grpc_meta` table. */
  grpcMetadata?: Record<string, string>;
  /** The profile asked for with TEMPORAL_PROFILE (the file's `default` profile is read when it exists). */
  profile?: string;
}

/** The connection plus the task queue the worker polls and the CLI starts workflows on. */
export interface TemporalSettings extends TemporalConnectionSettings {
  taskQueue: string;
}

/** The variables of the Temporal connection (the bridge reads these; the worker and the CLI also the task queue). */
export const TEMPORAL_CONNECTION_VARIABLE_NAMES = [
  'TEMPORAL_ADDRESS',
  'TEMPORAL_NAMESPACE',
  'TEMPORAL_API_KEY',
  'TEMPORAL_TLS',
  'TEMPORAL_TLS_CLIENT_CERT_PATH',
  'TEMPORAL_TLS_CLIENT_KEY_PATH',
  'TEMPORAL_TLS_CLIENT_CERT_DATA',
  'TEMPORAL_TLS_CLIENT_KEY_DATA',
  'TEMPORAL_TLS_SERVER_CA_CERT_PATH',
  'TEMPORAL_TLS_SERVER_CA_CERT_DATA',
  'TEMPORAL_TLS_SERVER_NAME',
  'TEMPORAL_TLS_DISABLE_HOST_VERIFICATION',
  'TEMPORAL_PROFILE',
  'TEMPORAL_CONFIG_FILE',
  'TEMPORAL_TLS_CERT_PATH',
  'TEMPORAL_TLS_KEY_PATH',
] as const;

/** The Temporal variables the worker and the CLI read. */
export const TEMPORAL_VARIABLE_NAMES = [...TEMPORAL_CONNECTION_VARIABLE_NAMES, 'REELFLOW_TASK_QUEUE'] as const;

const DEFAULT_ADDRESS = 'localhost:7233';
const DEFAULT_NAMESPACE = 'default';

/** Old reelflow names still read, each with the standard name that replaces it. */
const RENAMED = {
  TEMPORAL_TLS_CERT_PATH: 'TEMPORAL_TLS_CLIENT_CERT_PATH',
  TEMPORAL_TLS_KEY_PATH: 'TEMPORAL_TLS_CLIENT_KEY_PATH',
} as const satisfies Partial<Record<VariableName, VariableName>>;

const warned = new Set<string>();

/** Warns once per process (stderr: the loaders run before any logger exists) that an old variable name is in use. */
function warnRenamed(old: keyof typeof RENAMED): void {
  if (warned.has(old)) return;
  warned.add(old);
  console.warn(`reelflow: ${old} is deprecated: set ${RENAMED[old]} instead (it is read the same way for now)`);
}

/** Variables outside the catalog that envconfig needs to find the default config file. */
const CONFIG_DIR_VARIABLES = ['HOME', 'XDG_CONFIG_HOME', 'APPDATA'] as const;

/**
 * Temporal's gRPC metadata variables, `TEMPORAL_GRPC_META_<HEADER>` (one header each, e.g.
 * `TEMPORAL_GRPC_META_X_TENANT=media` sends `x-tenant: media`): a family of names, so not in the
 * catalog; envconfig turns them into headers.
 */
export const GRPC_META_PREFIX = 'TEMPORAL_GRPC_META_';

/** The profile envconfig merges from the config file and `vars`; its errors become ConfigErrors. */
function loadProfile(vars: Record<string, string>, env: Env): ClientConfigProfile {
  const overrideEnvVars = { ...vars };
  for (const name of CONFIG_DIR_VARIABLES) {
    const value = env[name];
    if (value) overrideEnvVars[name] = value;
  }
  for (const [name, value] of Object.entries(env))
    if (name.startsWith(GRPC_META_PREFIX) && value !== undefined) overrideEnvVars[name] = value.trim();
  try {
    return loadClientConfigProfile({ overrideEnvVars });
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    if (vars.TEMPORAL_PROFILE !== undefined && /profile .* not found/i.test(reason))
      throw ConfigError.of('TEMPORAL_PROFILE', `no profile "${vars.TEMPORAL_PROFILE}" in the Temporal config file`);
    throw ConfigError.of('TEMPORAL_CONFIG_FILE', `cannot read the Temporal config file: ${reason}`);
  }
}

/** The setting a value came from: the variable when it is set, else the profile's key. */
function origin(vars: Record<string, string>, variable: VariableName, key: string): string {
  return vars[variable] !== undefined
    ? variable
    : `TEMPORAL_CONFIG_FILE (profile ${vars.TEMPORAL_PROFILE ?? 'default'}, ${key})`;
}

function pem(
  source: ConfigDataSource | undefined,
  vars: Record<string, string>,
  variables: { path: VariableName; data: VariableName },
  key: string,
): PemSource | undefined {
  if (!source) return undefined;
  const setting =
    vars[variables.path] !== undefined
      ? variables.path
      : vars[variables.data] !== undefined
        ? variables.data
        : origin(vars, variables.path, key);
  return 'path' in source ? { setting, path: source.path } : { setting, data: Buffer.from(source.data) };
}

/**
 * Reads and validates the Temporal connection: the config file's profile, overridden field by field
 * by the variables; defaults suit a local dev server. Throws one ConfigError naming each setting at fault.
 */
export function loadTemporalConnection(env: Env = process.env): TemporalConnectionSettings {
  // Parsed for their checks only (host:port, booleans); envconfig merges the raw texts.
  const parsed = readVariables(TEMPORAL_CONNECTION_VARIABLE_NAMES, env);
  const vars: Record<string, string> = {};
  for (const name of TEMPORAL_CONNECTION_VARIABLE_NAMES) {
    const text = textOf(env, name);
    if (text !== undefined) vars[name] = text;
  }
  if (parsed.TEMPORAL_TLS !== undefined) vars.TEMPORAL_TLS = String(parsed.TEMPORAL_TLS);
  for (const old of Object.keys(RENAMED) as Array<keyof typeof RENAMED>) {
    const text = vars[old];
    if (text === undefined) continue;
    warnRenamed(old);
    delete vars[old];
    vars[RENAMED[old]] ??= text;
  }

  const profile = loadProfile(vars, env);
  const issues: ConfigIssue[] = [];
  if (parsed.TEMPORAL_TLS_DISABLE_HOST_VERIFICATION === true)
    // The TypeScript SDK has no such switch; refusing beats connecting with a check the operator turned off.
    issues.push({
      variable: 'TEMPORAL_TLS_DISABLE_HOST_VERIFICATION',
      reason:
        "is not supported by Temporal's TypeScript SDK: set TEMPORAL_TLS_SERVER_NAME to the name the frontend's certificate carries, or TEMPORAL_TLS_SERVER_CA_CERT_PATH to the CA that signed it",
    });
  const address = profile.address ?? DEFAULT_ADDRESS;
  if (!temporalAddressSchema.safeParse(address).success)
    issues.push({
      variable: origin(vars, 'TEMPORAL_ADDRESS', 'address'),
      reason: 'must be host:port, e.g. localhost:7233',
    });
  const namespace = profile.namespace?.trim() || DEFAULT_NAMESPACE;

  let tls: TemporalTlsSettings | undefined;
  const tlsProfile = profile.tls;
  if (tlsProfile && tlsProfile.disabled !== true) {
    const clientCert = pem(
      tlsProfile.clientCert,
      vars,
      { path: 'TEMPORAL_TLS_CLIENT_CERT_PATH', data: 'TEMPORAL_TLS_CLIENT_CERT_DATA' },
      'tls.client_cert_path',
    );
    const clientKey = pem(
      tlsProfile.clientKey,
      vars,
      { path: 'TEMPORAL_TLS_CLIENT_KEY_PATH', data: 'TEMPORAL_TLS_CLIENT_KEY_DATA' },
      'tls.client_key_path',
    );
    if ((clientCert === undefined) !== (clientKey === undefined)) {
      issues.push(
        clientCert === undefined
          ? { variable: 'TEMPORAL_TLS_CLIENT_CERT_PATH', reason: 'must be set together with the client key for mTLS' }
          : {
              variable: 'TEMPORAL_TLS_CLIENT_KEY_PATH',
              reason: 'must be set together with the client certificate for mTLS',
            },
      );
    }
    const serverCaCert = pem(
      tlsProfile.serverCACert,
      vars,
      { path: 'TEMPORAL_TLS_SERVER_CA_CERT_PATH', data: 'TEMPORAL_TLS_SERVER_CA_CERT_DATA' },
      'tls.server_ca_cert_path',
    );
    tls = {
      ...(tlsProfile.serverName ? { serverName: tlsProfile.serverName } : {}),
      ...(serverCaCert ? { serverCaCert } : {}),
      ...(clientCert && clientKey ? { clientCert, clientKey } : {}),
    };
  } else if (profile.apiKey && tlsProfile?.disabled !== true) {
    tls = {};
  }
  if (issues.length > 0) throw new ConfigError(issues);

  return {
    address,
    namespace,
    ...(profile.apiKey ? { apiKey: profile.apiKey } : {}),
    ...(tls ? { tls } : {}),
    ...(profile.grpcMeta && Object.keys(profile.grpcMeta).length > 0 ? { grpcMetadata: profile.grpcMeta } : {}),
    ...(vars.TEMPORAL_PROFILE ? { profile: vars.TEMPORAL_PROFILE } : {}),
  };
}

/** loadTemporalConnection plus REELFLOW_TASK_QUEUE: the worker's and the CLI's settings. */
export function loadTemporalSettings(env: Env = process.env): TemporalSettings {
  const connection = loadTemporalConnection(env);
  return { ...connection, taskQueue: readVariables(['REELFLOW_TASK_QUEUE'], env).REELFLOW_TASK_QUEUE };
}

function readPem(source: PemSource): Uint8Array {
  if ('data' in source) return source.data;
  try {
    return readFileSync(source.path);
  } catch (error) {
    throw ConfigError.of(source.setting, `cannot read ${source.path} (${(error as Error).message})`);
  }
}

/** TLS options in the SDK's shape (the same for `Connection` and `NativeConnection`). */
export interface TemporalTlsOptions {
  serverNameOverride?: string;
  serverRootCACertificate?: Uint8Array;
  clientCertPair?: { crt: Uint8Array; key: Uint8Array };
}

/** Connection options shared by `Connection.connect`/`lazy` (CLI, bridge) and `NativeConnection.connect` (worker). */
export interface TemporalConnectOptions {
  address: string;
  apiKey?: string;
  /** `false`: plaintext (explicitly, so that an API key does not turn TLS on). */
  tls?: TemporalTlsOptions | boolean;
  metadata?: Record<string, string>;
}

/**
 * The SDK's connection options for `settings`, reading the PEM files now: an unreadable one is a
 * ConfigError naming its setting (exit 2), not a TLS handshake error later.
 */
export function connectionOptions(settings: TemporalConnectionSettings): TemporalConnectOptions {
  const common = {
    address: settings.address,
    ...(settings.apiKey ? { apiKey: settings.apiKey } : {}),
    ...(settings.grpcMetadata ? { metadata: settings.grpcMetadata } : {}),
  };
  const tls = settings.tls;
  // Plaintext said explicitly: with an API key and no `tls`, the SDK would turn TLS on by itself,
  // ignoring TEMPORAL_TLS=false.
  if (!tls) return { ...common, tls: false };
  const options: TemporalTlsOptions = {
    ...(tls.serverName ? { serverNameOverride: tls.serverName } : {}),
    ...(tls.serverCaCert ? { serverRootCACertificate: readPem(tls.serverCaCert) } : {}),
    ...(tls.clientCert && tls.clientKey
      ? { clientCertPair: { crt: readPem(tls.clientCert), key: readPem(tls.clientKey) } }
      : {}),
  };
  return { ...common, tls: Object.keys(options).length > 0 ? options : true };
}

/**
 * How a process connects, for its boot log line and for `reelflow doctor`: address, namespace and
 * the kind of security (never a key or a certificate's content), e.g.
 * `temporal.internal:7233, namespace media, mTLS, server CA from TEMPORAL_TLS_SERVER_CA_CERT_PATH`.
 */
export function describeTemporalConnection(settings: TemporalConnectionSettings): string {
  const parts = [settings.address, `namespace ${settings.namespace}`];
  const tls = settings.tls;
  if (!tls) parts.push(settings.apiKey ? 'API key without TLS' : 'plaintext');
  else {
    parts.push(tls.clientCert ? 'mTLS' : 'TLS');
    if (settings.apiKey) parts.push('API key');
    if (tls.serverCaCert) parts.push(`server CA from ${tls.serverCaCert.setting}`);
    if (tls.serverName) parts.push(`server name ${tls.serverName}`);
  }
  if (settings.profile) parts.push(`profile ${settings.profile}`);
  return parts.join(', ');
}
