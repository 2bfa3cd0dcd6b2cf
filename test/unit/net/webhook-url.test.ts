import { checkWebhookUrl } from '../../../src/net/webhook-url';
import { dnsTable } from '../../helpers/dns-table';

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
