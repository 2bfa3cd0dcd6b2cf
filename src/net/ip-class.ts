import ipaddr from 'ipaddr.js';

/** Class of an IP address as the address rules see it. Only `public` is reachable by default. */
export type AddressClass =
  | 'public'
  | 'private'
  | 'loopback'
  | 'link-local'
  | 'cgnat'
  | 'multicast'
  | 'unspecified'
  | 'metadata'
  | 'reserved'
  | 'invalid';

/**
 * Cloud metadata endpoints. Several sit inside ranges refused anyway (link-local), but they get
 * their own class so that they stay refused even when private addresses are allowed for local use,
 * and 168.63.129.16 (Azure's host endpoint) is otherwise ordinary public space.
 */
const METADATA_V4 = ['169.254.169.254', '169.254.170.2', '100.100.100.200', '168.63.129.16', '192.0.0.192'];
const METADATA_V6 = ['fd00:ec2::254'];

type V4Class = Exclude<AddressClass, 'invalid'>;

/** IPv4 ranges, first match wins. Broadcast and documentation/benchmark ranges count as reserved. */
const V4_RANGES: ReadonlyArray<[string, V4Class]> = [
  ['0.0.0.0/8', 'unspecified'],
  ['127.0.0.0/8', 'loopback'],
  ['10.0.0.0/8', 'private'],
  ['172.16.0.0/12', 'private'],
  ['192.168.0.0/16', 'private'],
  ['169.254.0.0/16', 'link-local'],
  ['100.64.0.0/10', 'cgnat'],
  ['224.0.0.0/4', 'multicast'],
  ['255.255.255.255/32', 'reserved'],
  ['240.0.0.0/4', 'reserved'],
  ['192.0.0.0/24', 'reserved'],
  ['192.0.2.0/24', 'reserved'],
  ['198.51.100.0/24', 'reserved'],
  ['203.0.113.0/24', 'reserved'],
  ['198.18.0.0/15', 'reserved'],
  ['192.88.99.0/24', 'reserved'],
];

/** IPv6 ranges without an embedded IPv4 address, first match wins. */
const V6_RANGES: ReadonlyArray<[string, V4Class]> = [
  ['::/128', 'unspecified'],
  ['::1/128', 'loopback'],
  ['ff00::/8', 'multicast'],
  ['fe80::/10', 'link-local'],
  ['fc00::/7', 'private'],
  // Deprecated site-local space: private by intent.
  ['fec0::/10', 'private'],
  ['100::/64', 'reserved'],
  // IETF protocol assignments: Teredo, benchmarking, ORCHID, documentation and friends.
  ['2001::/23', 'reserved'],
  ['2001:db8::/32', 'reserved'],
  ['3fff::/20', 'reserved'],
];

/** IPv6 prefixes whose last 32 bits are an IPv4 address that decides the class. */
const V6_EMBEDDING: ReadonlyArray<[string, 'mapped' | 'compatible' | 'nat64' | 'nat64-local']> = [
  ['::ffff:0:0/96', 'mapped'],
  ['::ffff:0:0:0/96', 'mapped'], // RFC 6145 translated form
  ['64:ff9b::/96', 'nat64'],
  ['64:ff9b:1::/48', 'nat64-local'],
  ['::/96', 'compatible'],
];

const V4_PARSED = V4_RANGES.map(([cidr, cls]) => [ipaddr.IPv4.parseCIDR(cidr), cls] as const);
const V6_PARSED = V6_RANGES.map(([cidr, cls]) => [ipaddr.IPv6.parseCIDR(cidr), cls] as const);
const EMBED_PARSED = V6_EMBEDDING.map(([cidr, kind]) => [ipaddr.IPv6.parseCIDR(cidr), kind] as const);
const GLOBAL_UNICAST_V6 = ipaddr.IPv6.parseCIDR('2000::/3');
const SIX_TO_FOUR = ipaddr.IPv6.parseCIDR('2002::/16');
const METADATA_V6_PARSED = METADATA_V6.map((a) => ipaddr.IPv6.parse(a));

/** Canonical dotted quad only: no octal (leading zeros), hex, or shortened forms. */
const CANONICAL_V4 = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;
/** A trailing dotted quad inside an IPv6 literal (e.g. `::ffff:127.0.0.1`). */
const V6_DOTTED_TAIL = /:([^:]*\.[^:]*)$/;

function classifyV4(addr: ipaddr.IPv4): V4Class {
  const text = addr.toString();
  if (METADATA_V4.includes(text)) return 'metadata';
  for (const [range, cls] of V4_PARSED) if (addr.match(range)) return cls;
  return 'public';
}

function embeddedV4(addr: ipaddr.IPv6): ipaddr.IPv4 {
  const [hi, lo] = [addr.parts[6] ?? 0, addr.parts[7] ?? 0];
  return new ipaddr.IPv4([hi >> 8, hi & 0xff, lo >> 8, lo & 0xff]);
}

function classifyV6(addr: ipaddr.IPv6): V4Class {
  if (METADATA_V6_PARSED.some((m) => m.toNormalizedString() === addr.toNormalizedString())) return 'metadata';
  // :: and ::1 sit inside ::/96; decide them before the embedded forms.
  const [first] = V6_PARSED;
  if (first && addr.match(first[0])) return 'unspecified';
  if (addr.match(ipaddr.IPv6.parseCIDR('::1/128'))) return 'loopback';
  for (const [range, kind] of EMBED_PARSED) {
    if (!addr.match(range)) continue;
    const inner = classifyV4(embeddedV4(addr));
    if (kind === 'mapped' || kind === 'nat64') return inner;
    // Deprecated IPv4-compatible and local-use NAT64 addresses are never public destinations.
    return inner === 'public' ? (kind === 'compatible' ? 'reserved' : 'private') : inner;
  }
  if (addr.match(SIX_TO_FOUR)) {
    const [, hi = 0, lo = 0] = addr.parts;
    const inner = classifyV4(new ipaddr.IPv4([hi >> 8, hi & 0xff, lo >> 8, lo & 0xff]));
    // 6to4 is deprecated and relay-dependent: refused as reserved unless it hides something worse.
    return inner === 'public' ? 'reserved' : inner;
  }
  for (const [range, cls] of V6_PARSED) if (addr.match(range)) return cls;
  if (!addr.match(GLOBAL_UNICAST_V6)) return 'reserved';
  return 'public';
}

/** Parses an IPv6 literal strictly; a dotted IPv4 tail is converted first (ipaddr.js misreads `::a.b.c.d`). */
function parseV6(text: string): ipaddr.IPv6 | null {
  let body = text;
  const zoneAt = body.indexOf('%');
  if (zoneAt >= 0) {
    if (!/^[A-Za-z0-9_.-]+$/.test(body.slice(zoneAt + 1))) return null;
    body = body.slice(0, zoneAt);
  }
  const tail = V6_DOTTED_TAIL.exec(body);
  if (tail?.[1] !== undefined) {
    if (!CANONICAL_V4.test(tail[1])) return null;
    const o = tail[1].split('.').map(Number) as [number, number, number, number];
    const hex = `${((o[0] << 8) | o[1]).toString(16)}:${((o[2] << 8) | o[3]).toString(16)}`;
    body = `${body.slice(0, tail.index)}:${hex}`;
  }
  if (!/^[0-9A-Fa-f:]+$/.test(body) || !ipaddr.IPv6.isValid(body)) return null;
  try {
    return ipaddr.IPv6.parse(body);
  } catch {
    return null;
  }
}

/**
 * Classifies one IP address (IPv4 dotted quad, or IPv6, optionally in URL brackets). IPv6 forms that
 * embed an IPv4 address (mapped, translated, compatible, NAT64, 6to4) are classified by what they
 * embed. Non-canonical IPv4 spellings (`0x7f000001`, `2130706433`, `0177.0.0.1`, `127.1`) are
 * `invalid`: resolvers disagree on what they mean, so they are never trusted. Host names are `invalid`.
 */
export function classifyAddress(ip: string): AddressClass {
  const text = ip.startsWith('[') && ip.endsWith(']') ? ip.slice(1, -1) : ip;
  if (text.includes(':')) {
    const v6 = parseV6(text);
    return v6 ? classifyV6(v6) : 'invalid';
  }
  if (!CANONICAL_V4.test(text)) return 'invalid';
  return classifyV4(ipaddr.IPv4.parse(text));
}

/** True when `text` is an IP literal (IPv4 of any spelling, or IPv6 with or without brackets). */
export function isIpLiteral(text: string): boolean {
  const bare = text.startsWith('[') && text.endsWith(']') ? text.slice(1, -1) : text;
  return bare.includes(':') || ipaddr.IPv4.isValid(bare);
}
