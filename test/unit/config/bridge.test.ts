import { DEFAULT_BODY_LIMIT_BYTES, loadBridgeConfig } from '../../../src/bridge';
import { DEFAULT_BRIDGE_CONNECTION_LIMITS } from '../../../src/config/bridge';
import { ConfigError } from '../../../src/config';
import * as path from 'node:path';

/** Boot-time validation of the bridge's environment: a missing or wrong value is named, never echoed. */

function failure(env: NodeJS.ProcessEnv): ConfigError {
  try {
    loadBridgeConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error('expected a ConfigError');
}

describe('loadBridgeConfig', () => {
  it('applies the documented defaults', () => {
    const config = loadBridgeConfig({ REELFLOW_WEBHOOK_SECRETS: 'whsec_a' });
    expect(config).toMatchObject({
      secrets: ['whsec_a'],
      temporal: { address: 'localhost:7233', namespace: 'default' },
      host: '127.0.0.1',
      port: 8787,
      path: '/webhooks',
      bodyLimit: DEFAULT_BODY_LIMIT_BYTES,
      signalTimeoutMs: 5000,
      backlogLimit: 20_000,
      routeStore: {
        location: { backend: 'sqlite', path: path.resolve('.reelflow', 'routes.sqlite') },
        ttlMs: 86_400_000,
      },
    });
    expect(config.temporal.apiKey).toBeUndefined();
  });

  it('bounds the webhook listener by default and serves /metrics only on a port of its own', () => {
    const config = loadBridgeConfig({ REELFLOW_WEBHOOK_SECRETS: 'a' });
    expect(config.connections).toEqual(DEFAULT_BRIDGE_CONNECTION_LIMITS);
    expect(config.connections).toEqual({ headersTimeoutMs: 5_000, requestTimeoutMs: 5_000, idleTimeoutMs: 2_000 });
    expect(config).not.toHaveProperty('metrics');
    const set = loadBridgeConfig({
      REELFLOW_WEBHOOK_SECRETS: 'a',
      REELFLOW_BRIDGE_REQUEST_TIMEOUT_MS: '3000',
      REELFLOW_BRIDGE_IDLE_TIMEOUT_MS: '1000',
      REELFLOW_BRIDGE_MAX_CONNECTIONS: '500',
      REELFLOW_BRIDGE_MAX_CONNECTIONS_PER_ADDRESS: '500',
      REELFLOW_BRIDGE_METRICS_PORT: '9091',
    });
    expect(set.connections).toEqual({
      headersTimeoutMs: 3_000,
      requestTimeoutMs: 3_000,
      idleTimeoutMs: 1_000,
      maxConnections: 500,
      maxConnectionsPerAddress: 500,
    });
    expect(set.metrics).toEqual({ host: '127.0.0.1', port: 9091 });
    // A request limit at or past the service's 10 s sender timeout is refused at boot.
    expect(failure({ REELFLOW_WEBHOOK_SECRETS: 'a', REELFLOW_BRIDGE_REQUEST_TIMEOUT_MS: '10000' }).variable).toBe(
      'REELFLOW_BRIDGE_REQUEST_TIMEOUT_MS',
    );
    expect(
      failure({
        REELFLOW_WEBHOOK_SECRETS: 'a',
        REELFLOW_BRIDGE_MAX_CONNECTIONS: '10',
        REELFLOW_BRIDGE_MAX_CONNECTIONS_PER_ADDRESS: '20',
      }).variable,
    ).toBe('REELFLOW_BRIDGE_MAX_CONNECTIONS_PER_ADDRESS');
    expect(failure({ REELFLOW_WEBHOOK_SECRETS: 'a', REELFLOW_BRIDGE_METRICS_PORT: 'x' }).variable).toBe(
      'REELFLOW_BRIDGE_METRICS_PORT',
    );
  });

  it('reads the workers’ caps (the bridge frees finished jobs’ slots with them), none when unset or empty', () => {
    expect(loadBridgeConfig({ REELFLOW_WEBHOOK_SECRETS: 'a' }).slotCaps).toBeUndefined();
    expect(
      loadBridgeConfig({
        REELFLOW_WEBHOOK_SECRETS: 'a',
        REELFLOW_ACCOUNT_CONCURRENCY: '',
        REELFLOW_MODEL_CONCURRENCY: '',
      }).slotCaps,
    ).toBeUndefined();
    const model = 'service-upscale-video-fast';
    expect(
      loadBridgeConfig({
        REELFLOW_WEBHOOK_SECRETS: 'a',
        REELFLOW_ACCOUNT_CONCURRENCY: '6',
        REELFLOW_MODEL_CONCURRENCY: `${model}=2`,
      }).slotCaps,
    ).toEqual({ account: 6, models: { [model]: 2 } });
    expect(failure({ REELFLOW_WEBHOOK_SECRETS: 'a', REELFLOW_ACCOUNT_CONCURRENCY: '0' }).message).toContain(
      'REELFLOW_ACCOUNT_CONCURRENCY',
    );
  });

  it('splits and trims several secrets for a rotation', () => {
    expect(loadBridgeConfig({ REELFLOW_WEBHOOK_SECRETS: ' whsec_old , whsec_new ' }).secrets).toEqual([
      'whsec_old',
      'whsec_new',
    ]);
  });

  it('reads every setting from the environment', () => {
    const config = loadBridgeConfig({
      REELFLOW_WEBHOOK_SECRETS: 'a',
      TEMPORAL_ADDRESS: 'temporal.internal:7233',
      TEMPORAL_NAMESPACE: 'media',
      REELFLOW_BRIDGE_PORT: '0',
      REELFLOW_BRIDGE_PATH: '/hooks/service',
      REELFLOW_BRIDGE_BODY_LIMIT: '2048',
      REELFLOW_BRIDGE_SIGNAL_TIMEOUT_MS: '1500',
      REELFLOW_BRIDGE_BACKLOG_LIMIT: '500',
      REELFLOW_ROUTE_STORE: 'postgres://reelflow:secret@db.internal:5432/reelflow',
      REELFLOW_ROUTE_TTL_SECONDS: '3600',
    });
    expect(config).toMatchObject({
      temporal: { address: 'temporal.internal:7233', namespace: 'media' },
      port: 0,
      path: '/hooks/service',
      bodyLimit: 2048,
      signalTimeoutMs: 1500,
      backlogLimit: 500,
      routeStore: {
        location: { backend: 'postgres', url: 'postgres://reelflow:secret@db.internal:5432/reelflow' },
        ttlMs: 3_600_000,
      },
    });
  });

  it('defaults the route store to <state dir>/routes.sqlite and refuses an unknown one, naming the variable', () => {
    expect(
      loadBridgeConfig({ REELFLOW_WEBHOOK_SECRETS: 'a', REELFLOW_STATE_DIR: '/var/lib/reelflow' }).routeStore,
    ).toEqual({
      location: { backend: 'sqlite', path: '/var/lib/reelflow/routes.sqlite' },
      ttlMs: 86_400_000,
    });
    expect(() => loadBridgeConfig({ REELFLOW_WEBHOOK_SECRETS: 'a', REELFLOW_ROUTE_STORE: 'mysql://x' })).toThrow(
      /REELFLOW_ROUTE_STORE/,
    );
  });

  it('reads the Temporal connection the worker and the CLI read: mTLS with a private CA and a server name', () => {
    const config = loadBridgeConfig({
      REELFLOW_WEBHOOK_SECRETS: 'a',
      TEMPORAL_ADDRESS: 'temporal.internal:7233',
      TEMPORAL_TLS_CLIENT_CERT_PATH: '/etc/reelflow/bridge.pem',
      TEMPORAL_TLS_CLIENT_KEY_PATH: '/etc/reelflow/bridge.key',
      TEMPORAL_TLS_SERVER_CA_CERT_PATH: '/etc/reelflow/ca.pem',
      TEMPORAL_TLS_SERVER_NAME: 'frontend.temporal.internal',
    });
    expect(config.temporal).toEqual({
      address: 'temporal.internal:7233',
      namespace: 'default',
      tls: {
        serverName: 'frontend.temporal.internal',
        serverCaCert: { setting: 'TEMPORAL_TLS_SERVER_CA_CERT_PATH', path: '/etc/reelflow/ca.pem' },
        clientCert: { setting: 'TEMPORAL_TLS_CLIENT_CERT_PATH', path: '/etc/reelflow/bridge.pem' },
        clientKey: { setting: 'TEMPORAL_TLS_CLIENT_KEY_PATH', path: '/etc/reelflow/bridge.key' },
      },
    });
  });

  it.each([
    [{}, 'REELFLOW_WEBHOOK_SECRETS'],
    [{ REELFLOW_WEBHOOK_SECRETS: '' }, 'REELFLOW_WEBHOOK_SECRETS'],
    [{ REELFLOW_WEBHOOK_SECRETS: 'a,,b' }, 'REELFLOW_WEBHOOK_SECRETS'],
    [{ REELFLOW_WEBHOOK_SECRETS: 'a', TEMPORAL_ADDRESS: 'http://localhost:7233' }, 'TEMPORAL_ADDRESS'],
    [{ REELFLOW_WEBHOOK_SECRETS: 'a', REELFLOW_BRIDGE_PORT: '70000' }, 'REELFLOW_BRIDGE_PORT'],
    [{ REELFLOW_WEBHOOK_SECRETS: 'a', REELFLOW_BRIDGE_PATH: 'webhooks' }, 'REELFLOW_BRIDGE_PATH'],
    [{ REELFLOW_WEBHOOK_SECRETS: 'a', REELFLOW_BRIDGE_BODY_LIMIT: '1MB' }, 'REELFLOW_BRIDGE_BODY_LIMIT'],
    // A signal timeout at or over the service's 10 s budget would let the service give up first.
    [
      { REELFLOW_WEBHOOK_SECRETS: 'a', REELFLOW_BRIDGE_SIGNAL_TIMEOUT_MS: '10000' },
      'REELFLOW_BRIDGE_SIGNAL_TIMEOUT_MS',
    ],
  ])('refuses %j naming %s', (env, variable) => {
    const error = failure(env);
    expect(error.code).toBe('config_invalid');
    expect(error.variables).toContain(variable);
    expect(error.message).toContain(variable);
  });

  it('never echoes a secret in its message', () => {
    const error = failure({ REELFLOW_WEBHOOK_SECRETS: 'whsec_topsecret', TEMPORAL_ADDRESS: 'nope' });
    expect(error.message).not.toContain('whsec_topsecret');
    expect(error.variables).toEqual(['TEMPORAL_ADDRESS']);
  });
});
