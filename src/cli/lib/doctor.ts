import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { createServiceClient } from '../../client/service-client';
import { ServiceProblemError } from '../../client/errors';
import {
  describeRouteStoreLocation,
  describeTemporalConnection,
  describeTracing,
  loadRouteStoreSettings,
  loadTracingSettings,
  type ClientAuthScheme,
  type Env,
  type ReelflowEnv,
  type ServiceSettings,
} from '../../config';
import { openRouteStore } from '../../routing/open-store';
import { putMediaBytes, type ConfiguredStore } from '../../media/store';
import { checkWebhookUrl, safeFetch, type LookupFn } from '../../net';
import { cliSearchAttributes } from '../../stack/local-stack';
import type { RunningStackRecord } from '../../stack/stack-state';
import { SEARCH_ATTRIBUTE_KEYS } from '../../workflows/definitions';
import type { CliTemporal } from './connect';

/** One check of `reelflow doctor`: what it looked at, its result, and what to do when it failed. */
export interface CheckResult {
  /** Stable identifier (`service`, `webhook-url`, `temporal`, ...), for scripts. */
  id: CheckId;
  /** What was checked, for a person. */
  title: string;
  /** `skip`: could not be run because an earlier check failed (named in `detail`); counts as not passing. */
  status: 'pass' | 'fail' | 'skip';
  /** What was found. */
  detail: string;
  /** On a failure of a rule of the spec: the rule, in its words. */
  rule?: string;
  /** On a failure: what to do. */
  fix?: string;
  /** How long it took. */
  ms: number;
}

export type CheckId =
  | 'service'
  | 'webhook-url'
  | 'temporal'
  | 'search-attributes'
  | 'bridge'
  | 'route-store'
  | 'media-store'
  | 'idempotency-policy';

/** What a check returns; the runner adds the id, title and time. */
export type CheckOutcome = Pick<CheckResult, 'status' | 'detail' | 'rule' | 'fix'>;

const pass = (detail: string): CheckOutcome => ({ status: 'pass', detail });
const fail = (detail: string, fix: string, rule?: string): CheckOutcome => ({
  status: 'fail',
  detail,
  fix,
  ...(rule ? { rule } : {}),
});
const skip = (detail: string): CheckOutcome => ({ status: 'skip', detail });

const reasonOf = (error: unknown): string =>
  error instanceof Error ? (error.message.split('\n')[0] ?? error.message) : String(error);

/**
 * Runs one check within `timeoutMs`: a check that does not finish in time fails saying so; a check
 * that throws fails with the error's first line (never a stack trace). Both name `where`, the address
 * the check was reaching (never a secret), so a timeout says what did not answer.
 */
export async function runCheck(
  id: CheckId,
  title: string,
  timeoutMs: number,
  check: () => Promise<CheckOutcome>,
  fixOnTimeout: string,
  where?: string,
): Promise<CheckResult> {
  const started = Date.now();
  const at = (detail: string) => (where ? `${where}: ${detail}` : detail);
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<CheckOutcome>((resolve) => {
    timer = setTimeout(
      () => resolve(fail(at(`no answer within ${Math.round(timeoutMs / 100) / 10} s`), fixOnTimeout)),
      timeoutMs,
    );
  });
  let outcome: CheckOutcome;
  try {
    outcome = await Promise.race([check(), timeout]);
  } catch (error) {
    const reason = reasonOf(error);
    outcome = fail(where && !reason.includes(where) ? at(reason) : reason, fixOnTimeout);
  } finally {
    clearTimeout(timer);
  }
  return { id, title, ...outcome, ms: Date.now() - started };
}

/** The answer of a status request for an unknown id with `scheme`: `works`, `refused` (401/403) or a problem. */
async function probeKey(
  settings: ServiceSettings,
  scheme: ClientAuthScheme,
  timeoutMs: number,
): Promise<'works' | 'refused' | { problem: string }> {
  const client = createServiceClient({
    baseUrl: settings.url,
    apiKey: settings.apiKey,
    authScheme: scheme,
    timeoutMs,
    retry: { maxAttempts: 1 },
  });
  try {
    // A free call: no job has this id, so a service that knows the key answers 404.
    await client.status(`reelflow-doctor-${randomUUID()}`);
    return { problem: 'the status of an unknown request id answered 2xx instead of 404' };
  } catch (error) {
    if (error instanceof ServiceProblemError) {
      if (error.status === 404) return 'works';
      if (error.status === 401 || error.status === 403) return 'refused';
      return { problem: `the status of an unknown request id answered HTTP ${error.status} (${error.code})` };
    }
    return { problem: reasonOf(error) };
  } finally {
    await client.close();
  }
}

/**
 * The service answers with this key, and which Authorization schemes it takes: the status of an
 * unknown request id, once with each scheme (404: the key works; 401/403: refused).
 */
export async function checkService(settings: ServiceSettings | undefined, timeoutMs: number): Promise<CheckOutcome> {
  if (!settings)
    return fail(
      'REELFLOW_SERVICE_URL and REELFLOW_API_KEY are not set',
      'set REELFLOW_SERVICE_URL to the service base URL and REELFLOW_API_KEY to a key of your account',
    );
  const other: ClientAuthScheme = settings.authScheme === 'Key' ? 'Bearer' : 'Key';
  const configured = await probeKey(settings, settings.authScheme, timeoutMs);
  if (typeof configured === 'object')
    return fail(
      `${settings.url}: ${configured.problem}`,
      'check REELFLOW_SERVICE_URL (the base URL, without /v1) and that the service is up',
    );
  const alternative = await probeKey(settings, other, timeoutMs);
  const takes = [...(configured === 'works' ? [settings.authScheme] : []), ...(alternative === 'works' ? [other] : [])];
  if (configured === 'works')
    return pass(
      `${settings.url} accepts REELFLOW_API_KEY with Authorization: ${settings.authScheme} (schemes it takes: ${takes.join(', ')})`,
    );
  if (alternative === 'works')
    return fail(
      `${settings.url} refuses Authorization: ${settings.authScheme} but accepts the key with ${other}`,
      `set REELFLOW_CLIENT_AUTH_SCHEME=${other}`,
    );
  return fail(
    `${settings.url} refused REELFLOW_API_KEY (401/403 with both Key and Bearer)`,
    "set REELFLOW_API_KEY to a live key of the account (a revoked key stops working within about a minute); the local stack's key is in <state dir>/api-key",
  );
}

/** The spec's registration rules, in its words, and what a refusal reason breaks. */
const WEBHOOK_RULES: Array<{ match: RegExp; rule: string; fix: string }> = [
  {
    match: /^scheme /,
    rule: 'https only: the endpoint URL must use https',
    fix: 'put TLS in front of the bridge (docs/going-live.md, "TLS in front of the bridge") and set REELFLOW_WEBHOOK_URL=https://<public host>/webhooks',
  },
  {
    match: /^port /,
    rule: 'allowed ports: 443 and 8443',
    fix: 'serve the TLS front on port 443 or 8443 (the bridge itself may listen on any port behind it) and set REELFLOW_WEBHOOK_URL to that address',
  },
  {
    match: /credentials/,
    rule: 'no credentials in the URL',
    fix: 'remove the user:password@ part; deliveries are authenticated by their signature (REELFLOW_WEBHOOK_SECRETS)',
  },
  {
    match: /.*/,
    rule: 'a public address: the host must resolve only to public addresses',
    fix: 'use a host name whose DNS records are all public addresses (not private, loopback, link-local or CGNAT), reachable from the internet',
  },
];

/**
 * REELFLOW_WEBHOOK_URL obeys the spec's registration rules (https, ports 443/8443, no credentials, a
 * public address; src/net's rules, the service's own), unless it is the local stack's own bridge,
 * which the local service reaches on loopback.
 */
export async function checkWebhookAddress(
  webhookUrl: string | undefined,
  stack: RunningStackRecord | null,
  options: { lookup?: LookupFn; probe?: boolean } = {},
): Promise<CheckOutcome> {
  if (stack && (webhookUrl === undefined || webhookUrl === stack.bridgeUrl))
    return pass(
      `the local stack's own bridge (${stack.bridgeUrl}) receives the deliveries; the registration rules apply to the real service's endpoint only`,
    );
  if (webhookUrl === undefined)
    return fail(
      'REELFLOW_WEBHOOK_URL is not set',
      'set REELFLOW_WEBHOOK_URL to the public https address in front of the bridge, the one registered with the service (docs/going-live.md)',
    );
  const checked = await checkWebhookUrl(webhookUrl, {
    allowPrivate: false,
    // The probe follows the endpoint's redirects and checks each hop, as the registration does.
    fetchRedirects: options.probe !== false,
    probeTimeoutMs: 5_000,
    ...(options.lookup ? { lookup: options.lookup } : {}),
  });
  if (checked.ok)
    return pass(`${webhookUrl} obeys the registration rules (https, port 443/8443, public, no credentials)`);
  const rule = WEBHOOK_RULES.find((r) => r.match.test(checked.reason))!;
  return fail(`REELFLOW_WEBHOOK_URL ${redactCredentials(webhookUrl)}: ${checked.reason}`, rule.fix, rule.rule);
}

function redactCredentials(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.href;
  } catch {
    return url;
  }
}

/**
 * Temporal answers on this connection and the namespace exists. The detail says how it connected as
 * every process's boot line does (plaintext, TLS, mTLS only with a client certificate, API key).
 */
export async function checkTemporal(temporal: CliTemporal): Promise<CheckOutcome> {
  const { address, namespace } = temporal.settings;
  try {
    await temporal.client.workflowService.describeNamespace({ namespace });
  } catch (error) {
    return fail(
      `${address} answered, but namespace ${namespace}: ${reasonOf(error)}`,
      `create the namespace (\`temporal operator namespace create --namespace ${namespace}\`) or set TEMPORAL_NAMESPACE to an existing one`,
    );
  }
  return pass(describeTemporalConnection(temporal.settings));
}

/** Where REELFLOW_ROUTE_STORE points, for messages (a password masked), or null when it does not parse. */
export function routeStoreAddress(stateDir: string, env?: Env): string | null {
  try {
    return describeRouteStoreLocation(loadRouteStoreSettings(env, { stateDir }).location);
  } catch {
    return null;
  }
}

/**
 * The route store the worker and the bridge of this environment share (REELFLOW_ROUTE_STORE) parses
 * as they parse it and answers a query. A SQLite file that does not exist yet is no failure: the
 * first worker or bridge creates it (doctor creates nothing).
 */
export async function checkRouteStore(stateDir: string, timeoutMs: number, env?: Env): Promise<CheckOutcome> {
  let settings;
  try {
    settings = loadRouteStoreSettings(env, { stateDir });
  } catch (error) {
    return fail(
      reasonOf(error),
      'set REELFLOW_ROUTE_STORE to sqlite:<path> (one machine) or postgres://user:password@host:5432/database (several); the worker and the bridge refuse to start with this value',
    );
  }
  const where = describeRouteStoreLocation(settings.location);
  if (settings.location.backend === 'sqlite' && !existsSync(settings.location.path))
    return pass(`${where} does not exist yet; the first worker or bridge creates it`);
  const store = openRouteStore(settings.location, { postgres: { statementTimeoutMs: timeoutMs } });
  try {
    if (await store.ping()) return pass(`${where} answers`);
    return fail(
      `${where} does not answer`,
      'check that the database runs and this role may connect (docs/webhook-routing.md)',
    );
  } catch (error) {
    return fail(`${where}: ${reasonOf(error)}`, 'check the address, the role and its password');
  } finally {
    await store.close().catch(() => undefined);
  }
}

/** Temporal's IndexedValueType values (temporal.api.enums.v1), as reelflow's keys name their types. */
const INDEXED_VALUE_TYPES = ['UNSPECIFIED', 'TEXT', 'KEYWORD', 'INT', 'DOUBLE', 'BOOL', 'DATETIME', 'KEYWORD_LIST'];

/** The namespace has every search attribute reelflow's pipelines publish, each with its type. */
export async function checkSearchAttributes(temporal: CliTemporal): Promise<CheckOutcome> {
  const { namespace } = temporal.settings;
  const listed = await temporal.client.connection.operatorService.listSearchAttributes({ namespace });
  const custom = (listed.customAttributes ?? {}) as Record<string, number>;
  const missing = SEARCH_ATTRIBUTE_KEYS.filter((key) => custom[key.name] === undefined);
  const wrongType = SEARCH_ATTRIBUTE_KEYS.filter(
    (key) => custom[key.name] !== undefined && INDEXED_VALUE_TYPES[custom[key.name]!] !== key.type,
  );
  if (missing.length === 0 && wrongType.length === 0)
    return pass(
      `namespace ${namespace} has all ${SEARCH_ATTRIBUTE_KEYS.length} (${SEARCH_ATTRIBUTE_KEYS.map((k) => k.name).join(', ')})`,
    );
  const missingNames = new Set(missing.map((key) => key.name));
  const create = cliSearchAttributes()
    .filter((attribute) => missingNames.has(attribute.name))
    .map((attribute) => `--name ${attribute.name} --type ${attribute.type}`)
    .join(' ');
  const problems = [
    ...(missing.length ? [`missing: ${missing.map((k) => k.name).join(', ')}`] : []),
    ...(wrongType.length
      ? [
          `of another type: ${wrongType.map((k) => `${k.name} is ${INDEXED_VALUE_TYPES[custom[k.name]!] ?? custom[k.name]}, not ${k.type}`).join(', ')}`,
        ]
      : []),
  ];
  return fail(
    `namespace ${namespace}: ${problems.join('; ')}`,
    missing.length
      ? `temporal operator search-attribute create --namespace ${namespace} ${create} (Temporal Cloud: add them in the namespace's settings, or with tcld)`
      : 'remove the attributes of another type and create them with the types reelflow uses (docs/operator-console.md)',
  );
}

/** The address whose `/readyz` doctor reads: the webhook URL's origin, else the local stack's bridge. */
export function readyzUrl(webhookUrl: string | undefined, stack: RunningStackRecord | null): string | null {
  const base = webhookUrl ?? stack?.bridgeUrl;
  return base ? new URL('/readyz', base).href : null;
}

/**
 * The bridge answers `/readyz` (it is up and its route store answers), through the public address when one
 * is set (the TLS front included), with the same address rules the registration applies.
 */
export async function checkBridge(
  webhookUrl: string | undefined,
  stack: RunningStackRecord | null,
  webhookCheck: CheckResult,
  timeoutMs: number,
): Promise<CheckOutcome> {
  const local = stack !== null && (webhookUrl === undefined || webhookUrl === stack.bridgeUrl);
  if (!local && webhookCheck.status !== 'pass')
    return skip('the webhook address failed its check, so its /readyz is not fetched');
  const url = readyzUrl(local ? stack.bridgeUrl : webhookUrl, local ? stack : null);
  if (!url) return skip('no webhook address to reach the bridge by');
  try {
    const answer = await safeFetch(url, { allowPrivate: local, maxBytes: 64 * 1024, timeoutMs, maxRedirects: 0 });
    return pass(`${url} answered ${answer.status} ${answer.body.toString('utf8').trim()}`);
  } catch (error) {
    return fail(
      `${url}: ${reasonOf(error)}`,
      'start the bridge (`reelflow bridge`) with TEMPORAL_* and REELFLOW_ROUTE_STORE set like the worker, and route /readyz through the TLS front to it (docs/going-live.md); 503 means it cannot reach its route store',
    );
  }
}

/** A tiny object doctor puts in the media store: always the same bytes, so it is stored once. */
const PROBE = Buffer.from('reelflow doctor: media store probe\n');

/**
 * The media store takes a write, and — for a store that signs URLs — serves the object at its signed
 * URL under the rules the service fetches inputs by (https and public for the real service; the local
 * service also fetches from private addresses). A filesystem store signs nothing: its media go to the
 * service inline, as data URIs.
 */
export async function checkMediaStore(
  media: ConfiguredStore,
  servicePrivateOk: boolean,
  timeoutMs: number,
): Promise<CheckOutcome> {
  const { store, urlLifetimeSeconds } = media;
  let sha: string;
  try {
    const ref = await putMediaBytes(store, PROBE, 'text/plain');
    sha = ref.$media.replace(/^sha256:/, '');
  } catch (error) {
    return fail(
      `${store.location} refused a write: ${reasonOf(error)}`,
      'make REELFLOW_MEDIA_STORE writable by this user (file://: the directory; s3://: the bucket policy and REELFLOW_MEDIA_S3_* credentials)',
    );
  }
  const signed = await store.signedUrl(sha, urlLifetimeSeconds);
  if (!signed)
    return pass(
      `${store.location} is writable; a filesystem store signs no URLs, so media go to the service as data URIs (use an s3:// store for large inputs and several machines)`,
    );
  try {
    const fetched = await safeFetch(signed, {
      allowPrivate: servicePrivateOk,
      ports: 'any',
      ...(servicePrivateOk ? {} : { schemes: ['https:'] as const }),
      maxBytes: 1024,
      timeoutMs,
    });
    if (!fetched.body.equals(PROBE))
      return fail(`${store.location}: the signed URL served other bytes`, 'check the bucket');
  } catch (error) {
    const host = new URL(signed).host;
    return fail(
      `${store.location} is writable, but its signed URL (host ${host}) cannot be fetched the way the service fetches inputs: ${reasonOf(error)}`,
      servicePrivateOk
        ? 'check REELFLOW_MEDIA_S3_ENDPOINT and the credentials'
        : 'serve the bucket on a public https endpoint (REELFLOW_MEDIA_S3_ENDPOINT), or use AWS S3: the service fetches inputs from the internet',
      servicePrivateOk ? undefined : 'input URLs: https, on a public address',
    );
  }
  return pass(`${store.location} is writable and its signed URLs serve the object (lifetime ${urlLifetimeSeconds} s)`);
}

/** REELFLOW_SERVICE_IDEMPOTENCY was set on purpose (docs/submit-policy.md): not left at its default. */
export function checkIdempotencyPolicy(env: ReelflowEnv, explicitlySet: boolean): CheckOutcome {
  const value = env.service?.idempotency ?? 'unknown';
  if (explicitlySet)
    return pass(
      value === 'honoured'
        ? 'REELFLOW_SERVICE_IDEMPOTENCY=honoured: an ambiguous submit is retried with the same Idempotency-Key'
        : 'REELFLOW_SERVICE_IDEMPOTENCY=unknown: an ambiguous submit waits for an operator (never pays twice)',
    );
  return fail(
    'REELFLOW_SERVICE_IDEMPOTENCY is not set (the default, unknown, is safe but makes every ambiguous submit wait for an operator)',
    'run the idempotency check of docs/submit-policy.md against the service, then set REELFLOW_SERVICE_IDEMPOTENCY=honoured or unknown',
  );
}

/**
 * Whether tracing is on and where spans go (OTEL_EXPORTER_OTLP_*), never the export headers (they may
 * hold a token). A bad variable is a ConfigError, as every other one doctor reads.
 */
export function tracingLine(env?: Env): string {
  return describeTracing(loadTracingSettings('cli', env));
}

/** The report as lines for a person: one line per check, its detail, and its rule and fix when it failed. */
export function doctorLines(results: CheckResult[]): string[] {
  const mark = { pass: 'ok  ', fail: 'FAIL', skip: 'skip' } as const;
  const lines: string[] = [];
  for (const r of results) {
    lines.push(`${mark[r.status]}  ${r.title}: ${r.detail} (${r.ms} ms)`);
    if (r.rule) lines.push(`        rule: ${r.rule}`);
    if (r.fix) lines.push(`        fix:  ${r.fix}`);
  }
  const failed = results.filter((r) => r.status !== 'pass').length;
  lines.push(failed === 0 ? `all ${results.length} checks pass` : `${failed} of ${results.length} checks did not pass`);
  return lines;
}
