import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ConfigError } from '../../../src/config';
import { connectionOptions, loadTemporalSettings } from '../../../src/config/temporal';
import { TASK_QUEUES } from '../../../src/workflows/definitions';

describe('Temporal settings from the environment', () => {
  it('defaults to a local dev server', () => {
    expect(loadTemporalSettings({})).toEqual({
      address: 'localhost:7233',
      namespace: 'default',
      taskQueue: TASK_QUEUES.pipelines,
    });
    expect(connectionOptions(loadTemporalSettings({}))).toEqual({ address: 'localhost:7233' });
  });

  it('uses an API key with TLS for Temporal Cloud, and treats empty values as unset', () => {
    const settings = loadTemporalSettings({
      TEMPORAL_ADDRESS: 'ns.acct.tmprl.cloud:7233',
      TEMPORAL_NAMESPACE: 'ns.acct',
      TEMPORAL_API_KEY: 'secret-key',
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
  });

  it('names the variable at fault', () => {
    const bad = (env: NodeJS.ProcessEnv) => {
      try {
        loadTemporalSettings(env);
      } catch (error) {
        return error as ConfigError;
      }
      throw new Error('expected a ConfigError');
    };
    expect(bad({ TEMPORAL_ADDRESS: 'http://localhost:7233' })).toMatchObject({
      variable: 'TEMPORAL_ADDRESS',
      message: expect.stringMatching(/^TEMPORAL_ADDRESS: must be host:port/),
    });
    expect(bad({ TEMPORAL_TLS_CERT_PATH: '/x.pem' })).toMatchObject({ variable: 'TEMPORAL_TLS_KEY_PATH' });
    const unreadable = loadTemporalSettings({
      TEMPORAL_TLS_CERT_PATH: '/nonexistent/c.pem',
      TEMPORAL_TLS_KEY_PATH: '/nonexistent/k.pem',
    });
    expect(() => connectionOptions(unreadable)).toThrow(/^TEMPORAL_TLS_CERT_PATH: cannot read/);
  });

  it('reads an mTLS pair', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reelflow-tls-'));
    try {
      fs.writeFileSync(path.join(dir, 'c.pem'), 'CERT');
      fs.writeFileSync(path.join(dir, 'k.pem'), 'KEY');
      const options = connectionOptions(
        loadTemporalSettings({
          TEMPORAL_TLS_CERT_PATH: path.join(dir, 'c.pem'),
          TEMPORAL_TLS_KEY_PATH: path.join(dir, 'k.pem'),
        }),
      );
      expect(options.tls).toEqual({ clientCertPair: { crt: Buffer.from('CERT'), key: Buffer.from('KEY') } });
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
