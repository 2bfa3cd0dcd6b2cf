import { ConfigError, loadServiceSettings } from '../../../src/config';

const base = { REELFLOW_SERVICE_URL: 'https://api.example.com/', REELFLOW_API_KEY: 'k' };

test('the client sends Authorization: Key and cancels with POST unless told otherwise', () => {
  expect(loadServiceSettings(base, true)).toEqual({
    url: 'https://api.example.com',
    apiKey: 'k',
    idempotency: 'unknown',
    authScheme: 'Key',
    cancelMethod: 'POST',
  });
});

test('REELFLOW_CLIENT_AUTH_SCHEME and REELFLOW_CLIENT_CANCEL_METHOD set the scheme and the cancel method', () => {
  const settings = loadServiceSettings(
    { ...base, REELFLOW_CLIENT_AUTH_SCHEME: 'Bearer', REELFLOW_CLIENT_CANCEL_METHOD: ' delete ' },
    true,
  );
  expect(settings).toMatchObject({ authScheme: 'Bearer', cancelMethod: 'DELETE' });
});

test.each([
  ['REELFLOW_CLIENT_AUTH_SCHEME', 'Basic', /REELFLOW_CLIENT_AUTH_SCHEME.*must be Key or Bearer/],
  ['REELFLOW_CLIENT_CANCEL_METHOD', 'PATCH', /REELFLOW_CLIENT_CANCEL_METHOD.*must be POST, PUT or DELETE/],
])('%s=%s is refused naming the variable', (name, value, message) => {
  const load = () => loadServiceSettings({ ...base, [name]: value }, true);
  expect(load).toThrow(ConfigError);
  expect(load).toThrow(message);
});
