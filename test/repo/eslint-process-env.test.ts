import * as path from 'node:path';
import { ESLint } from 'eslint';

/** src/config is the one reader of the environment: `process.env` anywhere else in src is reported. */

const ROOT = path.resolve(__dirname, '../..');
let eslint: ESLint;

beforeAll(() => {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const config = require(path.join(ROOT, 'eslint.config.js')) as ESLint.Options['overrideConfig'];
  eslint = new ESLint({ cwd: ROOT, overrideConfigFile: true, overrideConfig: config });
});

async function envMessages(file: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: path.join(ROOT, file) });
  if (!result) throw new Error('ESLint returned no result');
  const fatal = result.messages.find((m) => m.fatal);
  if (fatal) throw new Error(`could not lint as ${file}: ${fatal.message}`);
  return result.messages.filter((m) => m.ruleId === 'no-restricted-properties').map((m) => m.message);
}

describe('process.env outside src/config (no-restricted-properties)', () => {
  it.each([
    ['src/workers/worker.ts', 'export const port = process.env.REELFLOW_METRICS_PORT;\n'],
    ['src/media/ffmpeg.ts', "export const path = process.env['FFMPEG_PATH'];\n"],
    ['src/stack/demo.ts', 'const { env } = process;\nexport const dir = env.REELFLOW_STATE_DIR;\n'],
    ['src/cli/commands/dev.ts', 'export function f(e = process.env) { return e; }\n'],
  ])('refuses it in %s', async (file, code) => {
    const messages = await envMessages(file, code);
    expect(messages).toHaveLength(1);
    expect(messages[0]).toContain('src/config is the one reader of the environment');
  });

  it.each([
    ['src/config/worker.ts', 'export const env = process.env;\n'],
    ['test/unit/config/read.test.ts', 'export const env = process.env;\n'],
    ['src/workers/worker.ts', 'export const argv = process.argv;\n'],
  ])('allows %s', async (file, code) => {
    expect(await envMessages(file, code)).toEqual([]);
  });
});
