import * as path from 'node:path';
import { ESLint } from 'eslint';

/**
 * The layer rules of docs/architecture.md with the real config: code linted as if it lived in a real
 * file of a layer (lintText with that path; the file on disk is not read) is refused when it imports
 * across a line the picture forbids, and allowed where the picture allows it.
 */

const ROOT = path.resolve(__dirname, '../..');
let eslint: ESLint;

beforeAll(() => {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const config = require(path.join(ROOT, 'eslint.config.js')) as ESLint.Options['overrideConfig'];
  eslint = new ESLint({ cwd: ROOT, overrideConfigFile: true, overrideConfig: config });
});

async function ruleMessages(rule: string, file: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: path.join(ROOT, file) });
  if (!result) throw new Error('ESLint returned no result');
  const fatal = result.messages.find((m) => m.fatal);
  if (fatal) throw new Error(`could not lint as ${file}: ${fatal.message}`);
  return result.messages.filter((m) => m.ruleId === rule).map((m) => m.message);
}

const layerMessages = (file: string, code: string) => ruleMessages('import/no-restricted-paths', file, code);

const uses = (specifier: string, name: string) =>
  `import { ${name} } from '${specifier}';\nexport const used = ${name};\n`;

describe('layer boundaries (import/no-restricted-paths)', () => {
  it.each([
    ['src/cli/commands/quote.ts', '../../local-service', 'startLocalService', 'src/workers/local-service.ts'],
    ['src/stack/local-stack.ts', '../local-service', 'startLocalService', 'src/workers/local-service.ts'],
    ['src/bridge/plugin.ts', '../local-service/generated-key', 'maskKey', 'src/workers/local-service.ts'],
    ['src/activities/index.ts', '../local-service/faults', 'DEFAULT_FAULTS', 'src/workers/local-service.ts'],
    ['src/workers/bridge.ts', '../local-service', 'startLocalService', 'Only src/workers/local-service.ts'],
    ['src/net/safe-fetch.ts', '../cli/lib/exit', 'EXIT', 'Shared libraries'],
    ['src/media/ffmpeg.ts', '../stack/stack-state', 'freePort', 'Shared libraries'],
    ['src/client/service-client.ts', '../activities', 'createActivities', 'Shared libraries'],
    // src/pipeline-spec is a shared library too: the UI texts read progress through their own views, not workflow types.
    ['src/pipeline-spec/ui-text.ts', '../workflows/definitions', 'pipelineProgressQuery', 'Shared libraries'],
    // routing and workflows share their words through src/contract, never each other.
    ['src/routing/prepared.ts', '../workflows/definitions', 'jobEventSignal', 'src/routing imports shared libraries'],
    ['src/routing/inbox.ts', '../bridge/errors', 'EventSinkUnavailableError', 'src/routing imports shared libraries'],
    ['src/routing/subscriber.ts', '../activities', 'createActivities', 'src/routing imports shared libraries'],
    ['src/workflows/definitions.ts', '../routing/prepared', 'PREPARED_SIGNAL_NAME', 'src/workflows imports'],
    ['src/workflows/pipeline-types.ts', '../media/reference', 'isMediaRef', 'src/workflows imports'],
    // reelflow/webhooks is the bridge's check for a team's server: no worker side.
    ['src/webhooks/receiver.ts', '../routing/inbox', 'Inbox', 'src/webhooks (reelflow/webhooks)'],
    [
      'src/webhooks/verify-webhook.ts',
      '../workflows/definitions',
      'jobEventSignal',
      'src/webhooks (reelflow/webhooks)',
    ],
    // reelflow/worker runs on a worker: not the bridge, not the CLI.
    ['src/plugin/plugin.ts', '../bridge/delivery', 'checkDelivery', 'src/plugin (reelflow/worker)'],
    ['src/plugin/plugin.ts', '../cli/lib/exit', 'EXIT', 'src/plugin (reelflow/worker)'],
    // Only process code reaches the plugin.
    ['src/activities/index.ts', '../plugin/activity-types', 'prefixedActivities', 'Only process code'],
  ])('refuses %s importing %s', async (file, specifier, name, reason) => {
    const messages = await layerMessages(file, uses(specifier, name));
    expect(messages).toHaveLength(1);
    expect(messages[0]).toContain(reason);
  });

  it.each([
    // The service's one entry point, and the service's own files.
    ['src/workers/local-service.ts', '../local-service', 'startLocalService'],
    ['src/local-service/index.ts', './faults', 'DEFAULT_FAULTS'],
    // `../lib/service-client` from src/cli/commands is the CLI's client factory, not the local service: resolved, not matched as text.
    ['src/cli/commands/quote.ts', '../lib/service-client', 'cliServiceClient'],
    ['src/cli/commands/outputs.ts', '../../net', 'safeDownload'],
    ['src/stack/reference-inputs.ts', '../media/ffmpeg', 'runFfmpeg'],
    // The shared words in src/contract, from both sides.
    ['src/routing/prepared.ts', '../contract', 'SIGNAL_NAMES'],
    ['src/workflows/definitions.ts', '../contract/workflow-messages', 'SIGNAL_NAMES'],
    ['src/routing/inbox.ts', '../contract', 'EventSinkUnavailableError'],
    // The bridge and its library use the route store and the delivery check; the worker entry point uses the plugin.
    ['src/bridge/server.ts', '../routing/prepared', 'createPreparedSubmitter'],
    ['src/webhooks/verify-webhook.ts', '../bridge/delivery', 'checkDelivery'],
    ['src/plugin/plugin.ts', '../routing/subscriber', 'createRouteSubscriber'],
    ['src/workers/worker.ts', '../plugin/activity-types', 'prefixedActivities'],
  ])('allows %s importing %s', async (file, specifier, name) => {
    expect(await layerMessages(file, uses(specifier, name))).toEqual([]);
  });
});

describe('one import style for the contract (no-restricted-imports)', () => {
  const importMessages = (file: string, code: string) => ruleMessages('no-restricted-imports', file, code);

  it.each([
    ['src/routing/prepared.ts', '../contract/workflow-messages', 'SIGNAL_NAMES'],
    ['src/media/errors.ts', '../contract/errors', 'ReelflowError'],
    ['src/cli/commands/batch.ts', '../../contract/limits', 'MEDIA_LIMITS'],
    ['src/webhooks/errors.ts', '../contract/errors', 'ReelflowError'],
    ['src/pipeline-spec/json-schema.ts', '../contract/models/long-form', 'ASPECT_RATIOS'],
  ])('refuses %s importing %s', async (file, specifier, name) => {
    const messages = await importMessages(file, uses(specifier, name));
    expect(messages).toHaveLength(1);
    expect(messages[0]).toContain("through its barrel ('../contract')");
  });

  it.each([
    ['src/routing/prepared.ts', '../contract', 'SIGNAL_NAMES'],
    ['src/cli/commands/batch.ts', '../../contract', 'MEDIA_LIMITS'],
    // The node:crypto module is kept out of the barrel.
    ['src/bridge/delivery.ts', '../contract/signature', 'verify'],
    // Workflow code and the plain-data modules it imports: the barrel pulls zod into the sandbox.
    ['src/workflows/definitions.ts', '../contract/workflow-messages', 'SIGNAL_NAMES'],
    ['src/pipeline-spec/errors.ts', '../contract/errors', 'ReelflowError'],
    // require('reelflow/worker') loads no zod.
    ['src/plugin/errors.ts', '../contract/errors', 'ReelflowError'],
    // The contract's own files.
    ['src/contract/pricing.ts', './limits', 'MEDIA_LIMITS'],
  ])('allows %s importing %s', async (file, specifier, name) => {
    expect(await importMessages(file, uses(specifier, name))).toEqual([]);
  });
});
