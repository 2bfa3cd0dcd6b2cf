import { lookup as dnsLookup } from 'node:dns/promises';
import { LIMITS } from '../contract';
import { classifyAddress, isIpLiteral, type AddressClass } from './ip-class';

/** One resolved address of a host name. */
export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Resolves a host name to every address it has (node:dns `lookup` with `all: true` by default). */
export type LookupFn = (hostname: string) => Promise<readonly ResolvedAddress[]>;

export type UrlScheme = 'https:' | 'http:';

/**
 * The address rules in force. `allowPrivate` is the `--allow-private-webhooks` switch: it relaxes
 * the scheme (http too), port (any) and address (private, loopback, link-local, CGNAT, reserved)
 * rules and nothing else; credentials, cloud metadata, multicast, unspecified and malformed
 * addresses stay refused. The optional overrides replace one rule each; the service never sets them,
 * tests use them so that loopback servers can stand in for public hosts while every other class
 * keeps its default treatment.
 */
export interface AddressRuleOptions {
  allowPrivate: boolean;
  /** Allowed ports; default 443 and 8443 (LIMITS.webhookAllowedPorts), any port with allowPrivate. */
  ports?: readonly number[] | 'any';
  /** Allowed schemes; default https only, http too with allowPrivate. */
  schemes?: readonly UrlScheme[];
  /** Address classes that may be reached; default public only. */
  allowedClasses?: readonly AddressClass[];
  /** DNS resolution; default node:dns lookup (all addresses). */
  lookup?: LookupFn;
}

/** Outcome of a rule check: the parsed URL, or why it is refused. */
export type UrlCheck = { ok: true; url: URL } | { ok: false; reason: string };
/** `dnsFailure`: the name did not resolve (a transient condition a retry may clear), not a rule refusal. */
export type ResolveCheck =
  { ok: true; addresses: ResolvedAddress[] } | { ok: false; reason: string; dnsFailure?: true };
export type PinCheck =
  { ok: true; url: URL; address: ResolvedAddress } | { ok: false; reason: string; dnsFailure?: true };

const NEVER_ALLOWED: readonly AddressClass[] = ['metadata', 'multicast', 'unspecified', 'invalid'];
const LOCAL_USE_CLASSES: readonly AddressClass[] = ['public', 'private', 'loopback', 'link-local', 'cgnat', 'reserved'];
const DNS_TIMEOUT_MS = 5_000;

function allowedClasses(options: AddressRuleOptions): readonly AddressClass[] {
  const base = options.allowedClasses ?? (options.allowPrivate ? LOCAL_USE_CLASSES : ['public']);
  return base.filter((c) => !NEVER_ALLOWED.includes(c));
}

function describeClass(cls: AddressClass): string {
  return cls === 'invalid' ? 'not a valid IP address' : `a ${cls} address`;
}

/** Refusal reason for one address (`10.0.0.1 is a private address`), or null when the rules allow it. */
export function addressProblem(address: string, options: AddressRuleOptions): string | null {
  const cls = classifyAddress(address);
  if (allowedClasses(options).includes(cls)) return null;
  return `${address} is ${describeClass(cls)}`;
}

/**
 * Checks what can be checked without DNS: the scheme (https), the port (443 or 8443), no
 * credentials, a host, and the address class of an IP-literal host (IPv4-mapped IPv6 included).
 */
export function checkUrlSyntax(url: string | URL, options: AddressRuleOptions): UrlCheck {
  let parsed: URL;
  try {
    parsed = typeof url === 'string' ? new URL(url) : new URL(url.href);
  } catch {
    return { ok: false, reason: 'not a valid URL' };
  }
  const schemes = options.schemes ?? (options.allowPrivate ? ['https:', 'http:'] : ['https:']);
  if (!(schemes as readonly string[]).includes(parsed.protocol)) {
    return {
      ok: false,
      reason: `scheme ${parsed.protocol.replace(/:$/, '')} is not allowed (${schemes.map((s) => s.replace(/:$/, '')).join(', ')} only)`,
    };
  }
  if (parsed.username || parsed.password) return { ok: false, reason: 'credentials in the URL are not allowed' };
  if (!parsed.hostname) return { ok: false, reason: 'the URL names no host' };
  const ports = options.ports ?? (options.allowPrivate ? 'any' : LIMITS.webhookAllowedPorts);
  const port = parsed.port ? Number(parsed.port) : parsed.protocol === 'https:' ? 443 : 80;
  if (ports !== 'any' && !ports.includes(port)) {
    return { ok: false, reason: `port ${port} is not allowed (${ports.join(', ')} only)` };
  }
  if (isIpLiteral(parsed.hostname)) {
    const problem = addressProblem(parsed.hostname, options);
    if (problem) return { ok: false, reason: problem };
  }
  return { ok: true, url: parsed };
}

async function defaultLookup(hostname: string): Promise<readonly ResolvedAddress[]> {
  const records = await dnsLookup(hostname, { all: true, verbatim: true });
  return records.map((r) => ({ address: r.address, family: r.family === 6 ? 6 : 4 }));
}

async function lookupWithTimeout(lookup: LookupFn, hostname: string): Promise<readonly ResolvedAddress[]> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error('DNS lookup timed out')), DNS_TIMEOUT_MS);
  });
  try {
    return await Promise.race([lookup(hostname), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Resolves a host and checks that every address it resolves to is allowed (public only unless
 * `allowPrivate`). One bad address refuses the host: a client may otherwise be steered to it.
 */
export async function resolvePublic(hostname: string, options: AddressRuleOptions): Promise<ResolveCheck> {
  const bare = hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
  if (isIpLiteral(bare)) {
    const problem = addressProblem(bare, options);
    if (problem) return { ok: false, reason: problem };
    return { ok: true, addresses: [{ address: bare, family: bare.includes(':') ? 6 : 4 }] };
  }
  let records: readonly ResolvedAddress[];
  try {
    records = await lookupWithTimeout(options.lookup ?? defaultLookup, bare);
  } catch (error) {
    const code = (error as { code?: string }).code;
    return { ok: false, reason: `host ${bare} does not resolve${code ? ` (${code})` : ''}`, dnsFailure: true };
  }
  if (records.length === 0) return { ok: false, reason: `host ${bare} does not resolve`, dnsFailure: true };
  for (const record of records) {
    const cls = classifyAddress(record.address);
    if (!allowedClasses(options).includes(cls)) {
      return { ok: false, reason: `host ${bare} resolves to ${record.address}, ${describeClass(cls)}` };
    }
  }
  return { ok: true, addresses: [...records] };
}

/**
 * Syntax and resolution together; on success names the one address a connection must use, so
 * that a second DNS answer (rebinding) can never redirect it.
 */
export async function validateUrl(url: string | URL, options: AddressRuleOptions): Promise<PinCheck> {
  const syntax = checkUrlSyntax(url, options);
  if (!syntax.ok) return syntax;
  const resolved = await resolvePublic(syntax.url.hostname, options);
  if (!resolved.ok) return resolved;
  const [address] = resolved.addresses;
  if (!address) return { ok: false, reason: `host ${syntax.url.hostname} does not resolve` };
  return { ok: true, url: syntax.url, address };
}
