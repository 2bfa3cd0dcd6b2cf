import type { LookupFn, ResolvedAddress } from '../../src/net';

/** A resolver table standing in for DNS (which is outside the machine); counts its calls. */
export function dnsTable(entries: Record<string, string[]>): LookupFn & { calls: string[] } {
  const calls: string[] = [];
  const fn = async (hostname: string): Promise<ResolvedAddress[]> => {
    calls.push(hostname);
    const addresses = entries[hostname];
    if (!addresses) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    return addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };
  return Object.assign(fn, { calls });
}
