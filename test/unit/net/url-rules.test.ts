import { checkUrlSyntax, resolvePublic } from '../../../src/net';
import { dnsTable } from '../../helpers/dns-table';

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
