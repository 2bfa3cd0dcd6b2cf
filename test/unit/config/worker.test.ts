import * as path from 'node:path';
import { ConfigError, loadWorkerConfig } from '../../../src/config';
import { workerOptionsFromEnv } from '../../../src/workers/worker';

/** The worker's configuration, read and validated at boot (src/config/worker.ts). */

const SERVICE = { REELFLOW_SERVICE_URL: 'http://127.0.0.1:8710/', REELFLOW_API_KEY: 'rfk_test' };

describe('loadWorkerConfig', () => {
  it('needs the service; everything else has a default', () => {
    expect(loadWorkerConfig(SERVICE)).toEqual({
      temporal: { address: 'localhost:7233', namespace: 'default', taskQueue: 'reelflow-pipelines' },
      service: {
        url: 'http://127.0.0.1:8710',
        apiKey: 'rfk_test',
        idempotency: 'unknown',
        authScheme: 'Key',
        cancelMethod: 'POST',
      },
      media: { kind: 'file', dir: path.resolve('.reelflow', 'media'), urlLifetimeSeconds: 3600 },
      logLevel: 'info',
      tuning: {},
      deployment: { deploymentName: 'reelflow', setCurrent: false },
      account: { dir: path.resolve('.reelflow', 'account'), models: {} },
      routeStore: {
        location: { backend: 'sqlite', path: path.resolve('.reelflow', 'routes.sqlite') },
        ttlMs: 86_400_000,
      },
    });
  });

  it('reads the Worker Versioning settings and refuses a deployment name Temporal could not split', () => {
    expect(
      loadWorkerConfig({
        ...SERVICE,
        REELFLOW_DEPLOYMENT_NAME: 'media',
        REELFLOW_BUILD_ID: '0.2.0-abc',
        REELFLOW_SET_CURRENT_VERSION: 'true',
      }).deployment,
    ).toEqual({ deploymentName: 'media', buildId: '0.2.0-abc', setCurrent: true });
    expect(() => loadWorkerConfig({ ...SERVICE, REELFLOW_DEPLOYMENT_NAME: 'media.v2' })).toThrow(
      /REELFLOW_DEPLOYMENT_NAME.*must not contain/,
    );
  });

  it('reads the account limits: a cap on jobs in flight and the shared directory (default in the state directory)', () => {
    expect(
      loadWorkerConfig({ ...SERVICE, REELFLOW_ACCOUNT_CONCURRENCY: '8', REELFLOW_STATE_DIR: '/var/lib/reelflow' })
        .account,
    ).toEqual({ dir: '/var/lib/reelflow/account', concurrency: 8, models: {} });
    expect(loadWorkerConfig({ ...SERVICE, REELFLOW_ACCOUNT_LIMITS_DIR: '/shared/acct' }).account).toEqual({
      dir: '/shared/acct',
      models: {},
    });
    expect(() => loadWorkerConfig({ ...SERVICE, REELFLOW_ACCOUNT_CONCURRENCY: '0' })).toThrow(
      /REELFLOW_ACCOUNT_CONCURRENCY: must be at least 1/,
    );
  });

  it('reads the caps per model, and refuses an unknown model, a bad number or a model named twice', () => {
    const models = (text: string) => loadWorkerConfig({ ...SERVICE, REELFLOW_MODEL_CONCURRENCY: text }).account.models;
    expect(models('service-upscale-video-fast=2, service-horizon-studio = 3')).toEqual({
      'service-upscale-video-fast': 2,
      'service-horizon-studio': 3,
    });
    expect(() => models('upscale=2')).toThrow(
      /REELFLOW_MODEL_CONCURRENCY: entry 1 \("upscale=2"\) names an unknown model \(known: .*service-upscale-video-fast/,
    );
    expect(() => models('service-upscale-video-fast=two')).toThrow(
      /REELFLOW_MODEL_CONCURRENCY: entry 1 .* must be <model>=<n>/,
    );
    expect(() => models('service-upscale-video-fast=2,service-upscale-video-fast=3')).toThrow(
      /REELFLOW_MODEL_CONCURRENCY: entry 2 .* names its model a second time/,
    );
    expect(() => models('service-upscale-video-fast=0')).toThrow(/REELFLOW_MODEL_CONCURRENCY: entry 1 .* 1 to 100000/);
  });

  it('reads tuning, metrics and the log level', () => {
    const config = loadWorkerConfig({
      ...SERVICE,
      REELFLOW_MAX_CONCURRENT_ACTIVITIES: '50',
      REELFLOW_SHUTDOWN_GRACE_SECONDS: '30',
      REELFLOW_WORKFLOW_BUNDLE: '/app/dist/workflow-bundle.js',
      REELFLOW_METRICS_PORT: '9090',
      REELFLOW_METRICS_HOST: '0.0.0.0',
      REELFLOW_LOG_LEVEL: 'WARN',
    });
    expect(config).toMatchObject({
      logLevel: 'warn',
      tuning: { maxConcurrentActivities: 50, shutdownGraceSeconds: 30, workflowBundle: '/app/dist/workflow-bundle.js' },
      metrics: { port: 9090, host: '0.0.0.0' },
      sdkMetricsAddress: '127.0.0.1:9464',
    });
    expect(
      workerOptionsFromEnv({ REELFLOW_MAX_CACHED_WORKFLOWS: '1000', REELFLOW_SHUTDOWN_GRACE_SECONDS: '10' }),
    ).toEqual({ maxCachedWorkflows: 1000, shutdownGraceTime: '10 seconds' });
  });

  it('serves readiness on its own port only when REELFLOW_WORKER_HEALTH_PORT is set, metrics on or not', () => {
    expect(loadWorkerConfig(SERVICE).health).toBeUndefined();
    expect(loadWorkerConfig({ ...SERVICE, REELFLOW_WORKER_HEALTH_PORT: '8081' })).toMatchObject({
      health: { port: 8081, host: '127.0.0.1' },
    });
    expect(loadWorkerConfig({ ...SERVICE, REELFLOW_WORKER_HEALTH_PORT: '8081' }).metrics).toBeUndefined();
  });

  it.each([
    [{ ...SERVICE, REELFLOW_WORKER_HEALTH_PORT: '8o81' }, 'REELFLOW_WORKER_HEALTH_PORT'],
    [{}, 'REELFLOW_SERVICE_URL'],
    [{ ...SERVICE, REELFLOW_METRICS_PORT: '99999' }, 'REELFLOW_METRICS_PORT'],
    [{ ...SERVICE, REELFLOW_MAX_CONCURRENT_ACTIVITIES: '0' }, 'REELFLOW_MAX_CONCURRENT_ACTIVITIES'],
    [{ ...SERVICE, REELFLOW_LOG_LEVEL: 'loud' }, 'REELFLOW_LOG_LEVEL'],
    [{ ...SERVICE, TEMPORAL_TLS_CLIENT_KEY_PATH: '/k.pem' }, 'TEMPORAL_TLS_CLIENT_CERT_PATH'],
    [{ ...SERVICE, REELFLOW_MEDIA_STORE: 'ftp://x' }, 'REELFLOW_MEDIA_STORE'],
  ])('refuses %j naming %s', (env, variable) => {
    expect(() => loadWorkerConfig(env)).toThrow(ConfigError);
    expect(() => loadWorkerConfig(env)).toThrow(new RegExp(`^${variable}: `));
  });
});
