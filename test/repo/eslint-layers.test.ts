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

async function layerMessages(file: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: path.join(ROOT, file) });
  if (!result) throw new Error('ESLint returned no result');
  const fatal = result.messages.find((m) => m.fatal);
  if (fatal) throw new Error(`could not lint as ${file}: ${fatal.message}`);
  return result.messages.filter((m) => m.ruleId === 'import/no-restricted-paths').map((m) => m.message);
}

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
  ])('allows %s importing %s', async (file, specifier, name) => {
    expect(await layerMessages(file, uses(specifier, name))).toEqual([]);
  });
});
