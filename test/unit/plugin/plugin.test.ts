import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { openSqliteRouteStore } from '../../../src/routing';
import type { WorkerOptions } from '@temporalio/worker';
import { ConfigError } from '../../../src/config';
import { openMediaStore } from '../../../src/media/store';
import { checkPluginOptions, reelflowPlugin, reelflowWorkflowsPath } from '../../../src/plugin/plugin';
import { ReelflowPluginOptionsError } from '../../../src/plugin/errors';
import { activeTracing, stopTracing } from '../../../src/tracing';

/** The plugin's option checks and what it does to a worker's options (the worker itself: test/integration/worker-plugin.test.ts). */

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reelflow-plugin-'));
const media = openMediaStore({ kind: 'file', dir, urlLifetimeSeconds: 60 });
// The submit activity subscribes in it; nothing is written before an activity runs.
const routeStore = openSqliteRouteStore(':memory:');
afterAll(() => routeStore.close());
const service = { url: 'http://127.0.0.1:9/', apiKey: 'key_1' };

function configure(options: Parameters<typeof reelflowPlugin>[0], worker: Partial<WorkerOptions> = {}) {
  return reelflowPlugin(options).configureWorker!({ taskQueue: 'team-queue', ...worker } as WorkerOptions);
}

describe('checkPluginOptions', () => {
  it.each([
    [{ workflow: true }, 'workflow', 'is not an option of reelflowPlugin'],
    [{ workflows: 'yes' }, 'workflows', 'must be true or false'],
    [{ service: 'http://x' }, 'service', 'must be a service client or { url, apiKey }'],
    [{ service: { url: 'ftp://x', apiKey: 'k' } }, 'service.url', 'must be an http(s) URL'],
    [{ service: { url: 'http://x' } }, 'service.apiKey', 'must be a non-empty string'],
    [{ service: { ...service, idempotency: 'always' } }, 'service.idempotency', 'must be one of "honoured", "unknown"'],
    [{ service: { ...service, authScheme: 'Basic' } }, 'service.authScheme', 'must be one of "Key", "Bearer"'],
    [
      { service: { ...service, cancelMethod: 'GET' } },
      'service.cancelMethod',
      'must be one of "POST", "PUT", "DELETE"',
    ],
    [{ routeStore: {} }, 'routeStore', 'must be a route store (openRouteStore)'],
    [{ media: {} }, 'media', 'must be { store, urlLifetimeSeconds }'],
    [{ preflight: 3 }, 'preflight', 'must be an object'],
    [{ limits: true }, 'limits', 'must be AccountLimits or false (a RateGate: wait and limited)'],
    // 0.3.0's permit half alone is not enough: the worker calls only the back-off's wait and limited.
    [{ limits: { acquire: () => true } }, 'limits', 'must be AccountLimits or false'],
    [{ env: 'prod' }, 'env', 'must be an object of variables'],
    [{ tracing: 'on' }, 'tracing', 'must be true or false'],
  ])('refuses %j naming the option', (options, option, reason) => {
    const check = () => checkPluginOptions(options);
    expect(check).toThrow(ReelflowPluginOptionsError);
    expect(check).toThrow(`reelflowPlugin option "${option}": ${reason}`);
  });

  it('takes no options, and every option set right', () => {
    expect(checkPluginOptions(undefined)).toEqual({});
    const all = {
      service,
      routeStore,
      media,
      preflight: {},
      limits: false,
      workflows: true,
      env: {},
    };
    expect(checkPluginOptions(all)).toBe(all);
    const gate = { limits: { wait: async () => undefined, limited: () => undefined } };
    expect(checkPluginOptions(gate)).toBe(gate);
  });
});

describe('reelflowPlugin().configureWorker', () => {
  const given = { service, routeStore, media, limits: false as const };

  it("adds reelflow's activities under reelflow. types next to the worker's own, and no workflows unless asked", async () => {
    const greet = async () => 'hi';
    const configured = await configure(given, { activities: { greet } });
    const names = Object.keys(configured.activities ?? {});
    expect(names).toContain('greet');
    expect(names).toEqual(
      expect.arrayContaining(['reelflow.submitAndSubscribe', 'reelflow.quoteJob', 'reelflow.cancelJob']),
    );
    expect(names.filter((name) => name !== 'greet').every((name) => name.startsWith('reelflow.'))).toBe(true);
    expect((configured.activities as Record<string, unknown>).greet).toBe(greet);
    expect(configured.workflowsPath).toBeUndefined();
    expect(configured.taskQueue).toBe('team-queue');
  });

  it("stops the worker's start when one of its own activities takes a reelflow. type", async () => {
    await expect(configure(given, { activities: { 'reelflow.cancelJob': async () => 0 } })).rejects.toThrow(
      /^activities: "reelflow\.cancelJob" is reelflow's own activity type/,
    );
  });

  it('stops the start on a bad option, naming it', async () => {
    await expect(configure({ ...given, workflows: 1 as never })).rejects.toThrow(
      'reelflowPlugin option "workflows": must be true or false',
    );
  });

  it("registers reelflow's workflows when asked: its own module, or an entry exporting the worker's and reelflow's", async () => {
    expect((await configure({ ...given, workflows: true })).workflowsPath).toBe(reelflowWorkflowsPath());
    const own = path.join(__dirname, '..', '..', 'integration', 'worker-plugin.workflows.ts');
    const combined = (await configure({ ...given, workflows: true }, { workflowsPath: own })).workflowsPath!;
    expect(fs.readFileSync(combined, 'utf8')).toBe(
      `export * from ${JSON.stringify(own)};\nexport * from ${JSON.stringify(reelflowWorkflowsPath())};\n`,
    );
  });

  it('refuses workflows: true with a prebuilt bundle it cannot add to, naming the option', async () => {
    await expect(configure({ ...given, workflows: true }, { workflowBundle: { code: '' } })).rejects.toThrow(
      /^reelflowPlugin option "workflows": cannot add reelflow's workflows to a prebuilt workflowBundle/,
    );
  });

  it('reads unset options from the environment as `reelflow worker` does: a missing service URL names the variable', async () => {
    const start = configure({ routeStore, env: { REELFLOW_STATE_DIR: dir } });
    await expect(start).rejects.toThrow(ConfigError);
    await expect(configure({ routeStore, env: { REELFLOW_STATE_DIR: dir } })).rejects.toThrow(/REELFLOW_SERVICE_URL/);
  });

  it('builds the service client, the media store and the route store from the environment when given none', async () => {
    const configured = await configure({
      env: {
        REELFLOW_SERVICE_URL: 'http://127.0.0.1:9',
        REELFLOW_API_KEY: 'key_env',
        REELFLOW_STATE_DIR: dir,
      },
    });
    expect(Object.keys(configured.activities ?? {})).toContain('reelflow.submitAndSubscribe');
  });
});

describe('reelflowPlugin tracing', () => {
  const given = { service, routeStore, media, limits: false as const };
  const otel = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9' };
  afterEach(() => stopTracing());

  it("adds Temporal's activity interceptor, workflow interceptor module and span sink when the variables are set", async () => {
    const own = () => ({ inbound: {} });
    const configured = await configure({ ...given, env: otel }, { interceptors: { activity: [own] } });
    expect(activeTracing()?.settings).toEqual({
      url: 'http://127.0.0.1:9/v1/traces',
      headers: {},
      serviceName: 'reelflow-worker',
    });
    expect(configured.interceptors?.activity?.[0]).toBe(own);
    expect(configured.interceptors?.activity).toHaveLength(2);
    expect(configured.interceptors?.workflowModules).toEqual([
      require.resolve('@temporalio/interceptors-opentelemetry/lib/workflow-interceptors'),
    ]);
    expect(configured.sinks?.exporter).toBeDefined();
  });

  it('adds nothing when off: no variables, or tracing: false', async () => {
    const off = await configure(given);
    const refused = await configure({ ...given, env: otel, tracing: false });
    for (const configured of [off, refused]) {
      expect(configured.interceptors).toBeUndefined();
      expect(configured.sinks).toBeUndefined();
    }
    expect(activeTracing()).toBeUndefined();
  });

  it('refuses tracing: true without an endpoint, naming the variable', async () => {
    await expect(configure({ ...given, tracing: true })).rejects.toThrow(
      /^reelflowPlugin option "tracing": true needs OTEL_EXPORTER_OTLP_ENDPOINT/,
    );
  });
});
