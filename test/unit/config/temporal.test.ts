import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ConfigError } from '../../../src/config';
import {
  connectionOptions,
  describeTemporalConnection,
  loadTemporalConnection,
  loadTemporalSettings,
} from '../../../src/config/temporal';
import { TASK_QUEUES } from '../../../src/workflows/definitions';

function failure(env: NodeJS.ProcessEnv): ConfigError {
  try {
    connectionOptions(loadTemporalSettings(env));
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error('expected a ConfigError');
}

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reelflow-tls-'));
  fs.writeFileSync(path.join(dir, 'c.pem'), 'CERT');
  fs.writeFileSync(path.join(dir, 'k.pem'), 'KEY');
  fs.writeFileSync(path.join(dir, 'ca.pem'), 'CA');
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));
const file = (name: string) => path.join(dir, name);

/** What `run` wrote with console.warn. */
function warningsDuring(run: () => void): string[] {
  const warn = jest.spyOn(console, 'warn').mockImplementation(() => undefined);
  try {
    run();
    return warn.mock.calls.map((call) => String(call[0]));
  } finally {
    warn.mockRestore();
  }
}

describe('Temporal settings from the environment', () => {
  it('defaults to a local dev server', () => {
    expect(loadTemporalSettings({})).toEqual({
      address: 'localhost:7233',
      namespace: 'default',
      taskQueue: TASK_QUEUES.pipelines,
    });
    expect(connectionOptions(loadTemporalSettings({}))).toEqual({ address: 'localhost:7233', tls: false });
    expect(describeTemporalConnection(loadTemporalSettings({}))).toBe('localhost:7233, namespace default, plaintext');
  });

  it('uses an API key with TLS for Temporal Cloud, and treats empty values as unset', () => {
    const settings = loadTemporalSettings({
      TEMPORAL_ADDRESS: 'ns.acct.tmprl.cloud:7233',
      TEMPORAL_NAMESPACE: 'ns.acct',
      TEMPORAL_API_KEY: 'secret-key',
      TEMPORAL_TLS_SERVER_NAME: ' ',
      REELFLOW_TASK_QUEUE: '',
    });
    expect(settings).toMatchObject({
      address: 'ns.acct.tmprl.cloud:7233',
      namespace: 'ns.acct',
      apiKey: 'secret-key',
      taskQueue: TASK_QUEUES.pipelines,
    });
    expect(connectionOptions(settings)).toEqual({
      address: 'ns.acct.tmprl.cloud:7233',
      apiKey: 'secret-key',
      tls: true,
    });
    expect(describeTemporalConnection(settings)).not.toContain('secret-key');
  });

  it("reads mTLS with a private CA and a server name under Temporal's standard names", () => {
    const settings = loadTemporalConnection({
      TEMPORAL_ADDRESS: '10.0.0.5:7233',
      TEMPORAL_TLS_CLIENT_CERT_PATH: file('c.pem'),
      TEMPORAL_TLS_CLIENT_KEY_PATH: file('k.pem'),
      TEMPORAL_TLS_SERVER_CA_CERT_PATH: file('ca.pem'),
      TEMPORAL_TLS_SERVER_NAME: 'temporal.internal',
    });
    expect(connectionOptions(settings)).toEqual({
      address: '10.0.0.5:7233',
      tls: {
        serverNameOverride: 'temporal.internal',
        serverRootCACertificate: Buffer.from('CA'),
        clientCertPair: { crt: Buffer.from('CERT'), key: Buffer.from('KEY') },
      },
    });
    expect(describeTemporalConnection(settings)).toBe(
      '10.0.0.5:7233, namespace default, mTLS, server CA from TEMPORAL_TLS_SERVER_CA_CERT_PATH, server name temporal.internal',
    );
  });

  it('takes PEM text instead of files', () => {
    const options = connectionOptions(
      loadTemporalConnection({
        TEMPORAL_TLS_CLIENT_CERT_DATA: 'CERT',
        TEMPORAL_TLS_CLIENT_KEY_DATA: 'KEY',
        TEMPORAL_TLS_SERVER_CA_CERT_DATA: 'CA',
      }),
    );
    expect(options.tls).toEqual({
      serverRootCACertificate: Buffer.from('CA'),
      clientCertPair: { crt: Buffer.from('CERT'), key: Buffer.from('KEY') },
    });
  });

  it('TEMPORAL_TLS=true turns TLS on alone; false turns it off although an API key is set', () => {
    expect(connectionOptions(loadTemporalConnection({ TEMPORAL_TLS: 'true' })).tls).toBe(true);
    const off = loadTemporalConnection({ TEMPORAL_TLS: 'false', TEMPORAL_API_KEY: 'k' });
    // Explicitly plaintext: the SDK turns TLS on for an API key unless told `tls: false`.
    expect(connectionOptions(off)).toEqual({ address: 'localhost:7233', apiKey: 'k', tls: false });
    expect(describeTemporalConnection(off)).toBe('localhost:7233, namespace default, API key without TLS');
    expect(failure({ TEMPORAL_TLS: 'maybe' })).toMatchObject({ variable: 'TEMPORAL_TLS' });
  });

  it('sends TEMPORAL_GRPC_META_* as gRPC metadata, over the profile and without a catalog entry each', () => {
    const settings = loadTemporalConnection({
      TEMPORAL_GRPC_META_X_TENANT: ' media ',
      TEMPORAL_GRPC_META_AUTHORIZATION_EXTRA: 'token-123',
    });
    expect(settings.grpcMetadata).toEqual({ 'x-tenant': 'media', 'authorization-extra': 'token-123' });
    expect(connectionOptions(settings).metadata).toEqual({ 'x-tenant': 'media', 'authorization-extra': 'token-123' });
  });

  it('refuses TEMPORAL_TLS_DISABLE_HOST_VERIFICATION=true (the SDK cannot do it) instead of dropping it', () => {
    expect(failure({ TEMPORAL_TLS: 'true', TEMPORAL_TLS_DISABLE_HOST_VERIFICATION: 'true' })).toMatchObject({
      variable: 'TEMPORAL_TLS_DISABLE_HOST_VERIFICATION',
      message: expect.stringContaining('TEMPORAL_TLS_SERVER_NAME'),
    });
    expect(loadTemporalConnection({ TEMPORAL_TLS_DISABLE_HOST_VERIFICATION: 'false' }).address).toBe('localhost:7233');
  });

  it('still reads TEMPORAL_TLS_CERT_PATH / _KEY_PATH, warning once that they are deprecated', () => {
    let fresh!: typeof import('../../../src/config/temporal');
    // A fresh module: the warning is once per process, remembered in the module.
    jest.isolateModules(() => {
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      fresh = require('../../../src/config/temporal') as typeof import('../../../src/config/temporal');
    });
    {
      const env = { TEMPORAL_TLS_CERT_PATH: file('c.pem'), TEMPORAL_TLS_KEY_PATH: file('k.pem') };
      const first = warningsDuring(() => {
        const options = fresh.connectionOptions(fresh.loadTemporalConnection(env));
        expect(options.tls).toEqual({ clientCertPair: { crt: Buffer.from('CERT'), key: Buffer.from('KEY') } });
      });
      expect(first).toEqual([
        'reelflow: TEMPORAL_TLS_CERT_PATH is deprecated: set TEMPORAL_TLS_CLIENT_CERT_PATH instead (it is read the same way for now)',
        'reelflow: TEMPORAL_TLS_KEY_PATH is deprecated: set TEMPORAL_TLS_CLIENT_KEY_PATH instead (it is read the same way for now)',
      ]);
      expect(warningsDuring(() => fresh.loadTemporalConnection(env))).toEqual([]);
      // The standard name wins when both are set.
      fs.writeFileSync(file('new.pem'), 'NEW');
      const both = fresh.connectionOptions(
        fresh.loadTemporalConnection({ ...env, TEMPORAL_TLS_CLIENT_CERT_PATH: file('new.pem') }),
      );
      expect(both.tls).toEqual({ clientCertPair: { crt: Buffer.from('NEW'), key: Buffer.from('KEY') } });
    }
  });

  it('reads a profile of the Temporal config file, the variables overriding its fields', () => {
    fs.writeFileSync(
      file('temporal.toml'),
      [
        '[profile.default]',
        'address = "default.internal:7233"',
        '',
        '[profile.prod]',
        'address = "prod.internal:7233"',
        'namespace = "media"',
        '[profile.prod.tls]',
        `client_cert_path = "${file('c.pem')}"`,
        `client_key_path = "${file('k.pem')}"`,
        `server_ca_cert_path = "${file('ca.pem')}"`,
        'server_name = "prod.internal"',
        '[profile.prod.grpc_meta]',
        'x-team = "media"',
      ].join('\n'),
    );
    const base = { TEMPORAL_CONFIG_FILE: file('temporal.toml') };
    expect(loadTemporalConnection(base)).toEqual({ address: 'default.internal:7233', namespace: 'default' });
    const prod = loadTemporalConnection({ ...base, TEMPORAL_PROFILE: 'prod', TEMPORAL_NAMESPACE: 'other' });
    expect(prod).toMatchObject({ address: 'prod.internal:7233', namespace: 'other', profile: 'prod' });
    expect(connectionOptions(prod)).toEqual({
      address: 'prod.internal:7233',
      metadata: { 'x-team': 'media' },
      tls: {
        serverNameOverride: 'prod.internal',
        serverRootCACertificate: Buffer.from('CA'),
        clientCertPair: { crt: Buffer.from('CERT'), key: Buffer.from('KEY') },
      },
    });
    // The default file location follows XDG_CONFIG_HOME, like the `temporal` CLI.
    fs.mkdirSync(file('xdg/temporalio'), { recursive: true });
    fs.copyFileSync(file('temporal.toml'), file('xdg/temporalio/temporal.toml'));
    expect(loadTemporalConnection({ XDG_CONFIG_HOME: file('xdg') }).address).toBe('default.internal:7233');
  });

  it('names the setting at fault, never a value', () => {
    expect(failure({ TEMPORAL_ADDRESS: 'http://localhost:7233' })).toMatchObject({
      variable: 'TEMPORAL_ADDRESS',
      message: expect.stringMatching(/^TEMPORAL_ADDRESS: must be host:port/),
    });
    expect(failure({ TEMPORAL_TLS_CLIENT_CERT_PATH: '/x.pem' })).toMatchObject({
      variable: 'TEMPORAL_TLS_CLIENT_KEY_PATH',
    });
    expect(failure({ TEMPORAL_TLS_CLIENT_KEY_DATA: 'secret-key-text' })).toMatchObject({
      variable: 'TEMPORAL_TLS_CLIENT_CERT_PATH',
      message: expect.not.stringContaining('secret-key-text'),
    });
    expect(
      failure({ TEMPORAL_TLS_CLIENT_CERT_PATH: '/nonexistent/c.pem', TEMPORAL_TLS_CLIENT_KEY_PATH: file('k.pem') }),
    ).toMatchObject({ message: expect.stringMatching(/^TEMPORAL_TLS_CLIENT_CERT_PATH: cannot read \/nonexistent/) });
    expect(failure({ TEMPORAL_TLS_SERVER_CA_CERT_PATH: '/nonexistent/ca.pem' })).toMatchObject({
      variable: 'TEMPORAL_TLS_SERVER_CA_CERT_PATH',
    });
    fs.writeFileSync(file('bad.toml'), '[profile.default]\naddress = "no port"\n');
    expect(failure({ TEMPORAL_CONFIG_FILE: file('bad.toml') })).toMatchObject({
      variable: 'TEMPORAL_CONFIG_FILE (profile default, address)',
    });
    expect(failure({ TEMPORAL_CONFIG_FILE: file('bad.toml'), TEMPORAL_PROFILE: 'nope' })).toMatchObject({
      message: 'TEMPORAL_PROFILE: no profile "nope" in the Temporal config file',
    });
    fs.writeFileSync(file('broken.toml'), '[profile.default\n');
    expect(failure({ TEMPORAL_CONFIG_FILE: file('broken.toml') })).toMatchObject({
      variable: 'TEMPORAL_CONFIG_FILE',
    });
    // A missing default file is no error: there is simply no profile.
    expect(loadTemporalConnection({ XDG_CONFIG_HOME: file('none') }).address).toBe('localhost:7233');
  });
});
