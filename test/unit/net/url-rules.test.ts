import { checkUrlSyntax, checkWebhookUrl, classifyAddress, resolvePublic, type AddressClass } from '../../../src/net';
import { dnsTable } from '../../helpers/dns-table';

describe('classifyAddress', () => {
  const cases: Array<[string, AddressClass]> = [
    // public
    ['8.8.8.8', 'public'],
    ['93.184.216.34', 'public'],
    ['172.32.0.1', 'public'],
    ['2606:4700:4700::1111', 'public'],
    ['::ffff:8.8.8.8', 'public'],
    ['64:ff9b::808:808', 'public'],
    // private
    ['10.0.0.1', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.10', 'private'],
    ['fc00::1', 'private'],
    ['fd12:3456::1', 'private'],
    ['fec0::1', 'private'],
    // loopback
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['::1', 'loopback'],
    ['[::1]', 'loopback'],
    // link-local
    ['169.254.1.1', 'link-local'],
    ['fe80::1', 'link-local'],
    ['fe80::1%eth0', 'link-local'],
    // CGNAT
    ['100.64.0.1', 'cgnat'],
    ['100.127.255.255', 'cgnat'],
    // multicast
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['ff02::1', 'multicast'],
    ['ff0e::1', 'multicast'],
    // unspecified
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'unspecified'],
    ['::', 'unspecified'],
    // cloud metadata
    ['169.254.169.254', 'metadata'],
    ['169.254.170.2', 'metadata'],
    ['100.100.100.200', 'metadata'],
    ['168.63.129.16', 'metadata'],
    ['fd00:ec2::254', 'metadata'],
    // reserved: broadcast, 240/4, IETF, documentation and benchmark ranges
    ['255.255.255.255', 'reserved'],
    ['240.0.0.1', 'reserved'],
    ['192.0.0.8', 'reserved'],
    ['192.0.2.1', 'reserved'],
    ['198.51.100.7', 'reserved'],
    ['203.0.113.9', 'reserved'],
    ['198.18.0.1', 'reserved'],
    ['198.19.255.255', 'reserved'],
    ['2001:db8::1', 'reserved'],
    ['2001::1', 'reserved'],
    ['100::1', 'reserved'],
    ['4000::1', 'reserved'],
    // IPv4-mapped / translated / compatible / NAT64 / 6to4 forms are what they embed
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['[::ffff:7f00:1]', 'loopback'],
    ['::ffff:10.0.0.1', 'private'],
    ['::ffff:192.168.0.1', 'private'],
    ['::ffff:169.254.169.254', 'metadata'],
    ['::ffff:a9fe:a9fe', 'metadata'],
    ['::ffff:100.64.0.1', 'cgnat'],
    ['::ffff:0.0.0.0', 'unspecified'],
    ['::ffff:224.0.0.1', 'multicast'],
    ['::ffff:0:127.0.0.1', 'loopback'],
    ['::127.0.0.1', 'loopback'],
    ['::10.0.0.1', 'private'],
    ['::8.8.8.8', 'reserved'],
    ['64:ff9b::10.0.0.1', 'private'],
    ['64:ff9b::a9fe:a9fe', 'metadata'],
    ['2002:7f00:1::1', 'loopback'],
    ['2002:a00:1::1', 'private'],
    // non-canonical IPv4 spellings are never trusted
    ['0x7f000001', 'invalid'],
    ['2130706433', 'invalid'],
    ['0177.0.0.1', 'invalid'],
    ['017700000001', 'invalid'],
    ['127.1', 'invalid'],
    ['010.0.0.1', 'invalid'],
    ['0x7f.0.0.1', 'invalid'],
    ['::ffff:127.000.0.1', 'invalid'],
    ['256.1.1.1', 'invalid'],
    ['1.2.3.4.5', 'invalid'],
    ['example.com', 'invalid'],
    ['', 'invalid'],
  ];
  it.each(cases)('%s is %s', (ip, expected) => {
    expect(classifyAddress(ip)).toBe(expected);
  });
});

describe('checkUrlSyntax', () => {
  const strict = { allowPrivate: false };
  const refused: Array<[string, string, RegExp]> = [
    ['http', 'http://hooks.example.com/x', /scheme http/],
    ['ftp', 'ftp://hooks.example.com/x', /scheme ftp/],
    ['port 80', 'https://hooks.example.com:80/x', /port 80/],
    ['port 444', 'https://hooks.example.com:444/x', /port 444/],
    ['port 8080', 'https://hooks.example.com:8080/x', /port 8080/],
    ['credentials', 'https://user:secret@hooks.example.com/x', /credentials/],
    ['user only', 'https://user@hooks.example.com/x', /credentials/],
    ['private', 'https://10.0.0.5/x', /private/],
    ['private 172.16/12', 'https://172.20.1.1/x', /private/],
    ['private 192.168/16', 'https://192.168.0.1/x', /private/],
    ['loopback', 'https://127.0.0.1/x', /loopback/],
    ['loopback IPv6', 'https://[::1]/x', /loopback/],
    ['link-local', 'https://169.254.10.10/x', /link-local/],
    ['link-local IPv6', 'https://[fe80::1]/x', /link-local/],
    ['CGNAT', 'https://100.64.1.1/x', /cgnat/],
    ['multicast', 'https://224.0.0.251/x', /multicast/],
    ['multicast IPv6', 'https://[ff02::1]/x', /multicast/],
    ['unspecified', 'https://0.0.0.0/x', /unspecified/],
    ['unspecified IPv6', 'https://[::]/x', /unspecified/],
    ['metadata', 'https://169.254.169.254/latest/meta-data/', /metadata/],
    ['metadata (Alibaba)', 'https://100.100.100.200/x', /metadata/],
    ['metadata IPv6', 'https://[fd00:ec2::254]/x', /metadata/],
    ['unique local IPv6', 'https://[fd00::1]/x', /private/],
    ['reserved 240/4', 'https://240.1.2.3/x', /reserved/],
    ['documentation range', 'https://192.0.2.10/x', /reserved/],
    ['IPv4-mapped loopback', 'https://[::ffff:127.0.0.1]/x', /loopback/],
    ['IPv4-mapped private', 'https://[::ffff:10.1.2.3]/x', /private/],
    ['IPv4-mapped metadata', 'https://[::ffff:169.254.169.254]/x', /metadata/],
    ['IPv4-compatible loopback', 'https://[::127.0.0.1]/x', /loopback/],
    ['hex IPv4 (URL parser normalises it)', 'https://0x7f000001/x', /loopback/],
    ['decimal IPv4', 'https://2130706433/x', /loopback/],
    ['octal IPv4', 'https://0177.0.0.1/x', /loopback/],
    ['not a URL', 'not a url', /not a valid URL/],
  ];
  it.each(refused)('refuses %s', (_name, url, reason) => {
    const result = checkUrlSyntax(url, strict);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.reason).toMatch(reason);
  });

  it.each([
    'https://hooks.example.com/x',
    'https://hooks.example.com:443/x',
    'https://hooks.example.com:8443/x',
    'https://8.8.8.8/x',
    'https://[2606:4700:4700::1111]/x',
  ])('accepts %s', (url) => {
    expect(checkUrlSyntax(url, strict)).toMatchObject({ ok: true });
  });

  it('allowPrivate relaxes scheme, port and address rules only', () => {
    const dev = { allowPrivate: true };
    expect(checkUrlSyntax('http://127.0.0.1:8080/hook', dev)).toMatchObject({ ok: true });
    expect(checkUrlSyntax('http://10.0.0.5:3000/hook', dev)).toMatchObject({ ok: true });
    expect(checkUrlSyntax('http://[::1]:9000/hook', dev)).toMatchObject({ ok: true });
    expect(checkUrlSyntax('http://user:pw@127.0.0.1:8080/hook', dev)).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/credentials/),
    });
    expect(checkUrlSyntax('http://169.254.169.254/latest', dev)).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/metadata/),
    });
    expect(checkUrlSyntax('http://[::ffff:169.254.169.254]/latest', dev)).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/metadata/),
    });
    expect(checkUrlSyntax('http://0.0.0.0:8080/', dev)).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/unspecified/),
    });
    expect(checkUrlSyntax('http://224.0.0.1:8080/', dev)).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/multicast/),
    });
    expect(checkUrlSyntax('ftp://127.0.0.1/', dev)).toMatchObject({ ok: false });
  });

  it('takes an explicit port list', () => {
    expect(checkUrlSyntax('https://hooks.example.com:9443/', { allowPrivate: false, ports: [9443] })).toMatchObject({
      ok: true,
    });
    expect(checkUrlSyntax('https://hooks.example.com/', { allowPrivate: false, ports: [9443] })).toMatchObject({
      ok: false,
    });
  });
});

describe('resolvePublic', () => {
  const lookup = dnsTable({
    'public.example': ['93.184.216.34', '2606:2800:220:1::1'],
    'mixed.example': ['93.184.216.34', '10.0.0.7'],
    'local.example': ['127.0.0.1'],
    'mapped.example': ['::ffff:127.0.0.1'],
    'meta.example': ['169.254.169.254'],
    'empty.example': [],
  });

  it('accepts a host whose every address is public', async () => {
    const result = await resolvePublic('public.example', { allowPrivate: false, lookup });
    expect(result).toEqual({
      ok: true,
      addresses: [
        { address: '93.184.216.34', family: 4 },
        { address: '2606:2800:220:1::1', family: 6 },
      ],
    });
  });

  it.each([
    ['mixed.example', /10\.0\.0\.7, a private address/],
    ['local.example', /loopback/],
    ['mapped.example', /loopback/],
    ['meta.example', /metadata/],
    ['empty.example', /does not resolve/],
    ['unknown.example', /does not resolve \(ENOTFOUND\)/],
  ])('refuses %s', async (host, reason) => {
    const result = await resolvePublic(host, { allowPrivate: false, lookup });
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.reason).toMatch(reason);
  });

  it('accepts private hosts with allowPrivate, never metadata', async () => {
    await expect(resolvePublic('local.example', { allowPrivate: true, lookup })).resolves.toMatchObject({ ok: true });
    await expect(resolvePublic('mixed.example', { allowPrivate: true, lookup })).resolves.toMatchObject({ ok: true });
    await expect(resolvePublic('meta.example', { allowPrivate: true, lookup })).resolves.toMatchObject({ ok: false });
  });

  it('checks IP literals without a lookup', async () => {
    const counting = dnsTable({});
    await expect(resolvePublic('[::1]', { allowPrivate: false, lookup: counting })).resolves.toMatchObject({
      ok: false,
    });
    await expect(resolvePublic('8.8.8.8', { allowPrivate: false, lookup: counting })).resolves.toMatchObject({
      ok: true,
    });
    expect(counting.calls).toEqual([]);
  });
});

describe('checkWebhookUrl without probing', () => {
  const lookup = dnsTable({ 'hooks.example.com': ['93.184.216.34'], 'internal.example.com': ['192.168.4.4'] });
  const options = { allowPrivate: false, lookup, fetchRedirects: false };

  it('accepts an https URL on 443 or 8443 whose host resolves to public space', async () => {
    await expect(checkWebhookUrl('https://hooks.example.com/reelflow', options)).resolves.toEqual({ ok: true });
    await expect(checkWebhookUrl('https://hooks.example.com:8443/reelflow', options)).resolves.toEqual({ ok: true });
  });

  it.each([
    ['http://hooks.example.com/reelflow', /scheme http/],
    ['https://hooks.example.com:80/reelflow', /port 80/],
    ['https://hooks.example.com:444/reelflow', /port 444/],
    ['https://me:pw@hooks.example.com/reelflow', /credentials/],
    ['https://internal.example.com/reelflow', /private/],
    ['https://[::ffff:192.168.4.4]/reelflow', /private/],
    ['https://169.254.169.254/reelflow', /metadata/],
    ['https://nowhere.example.com/reelflow', /does not resolve/],
  ])('refuses %s', async (url, reason) => {
    const result = await checkWebhookUrl(url, options);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.reason).toMatch(reason);
  });
});
