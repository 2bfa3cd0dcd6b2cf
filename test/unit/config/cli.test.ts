import { ConfigError, loadStackSettings } from '../../../src/config';

test('REELFLOW_WEBHOOK_URL is the address the local stack registers; absent, the bridge registers its own', () => {
  expect(loadStackSettings({}).webhookUrl).toBeUndefined();
  expect(loadStackSettings({ REELFLOW_WEBHOOK_URL: ' https://hooks.example.com:8443/webhooks ' }).webhookUrl).toBe(
    'https://hooks.example.com:8443/webhooks',
  );
  // Whether it obeys the registration rules is reelflow doctor's check; here only its form.
  expect(() => loadStackSettings({ REELFLOW_WEBHOOK_URL: 'hooks.example.com' })).toThrow(ConfigError);
  expect(() => loadStackSettings({ REELFLOW_WEBHOOK_URL: 'ftp://hooks.example.com' })).toThrow(
    /REELFLOW_WEBHOOK_URL.*must be an http\(s\) URL/,
  );
});
