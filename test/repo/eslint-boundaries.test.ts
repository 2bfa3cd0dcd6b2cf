import * as path from 'node:path';
import { ESLint } from 'eslint';

/**
 * Proves the ESLint boundary of the workflow sandbox with the real config: code linted as if it
 * lived in src/workflows/ must not reach Node built-ins, undici or activity values, and no promise
 * may be left floating. The probe file exists only in memory (allowDefaultProject in the config).
 */

const ROOT = path.resolve(__dirname, '../..');
const PROBE = path.join(ROOT, 'src/workflows/__lint_probe__.ts');
const CONTRACT_PROBE = path.join(ROOT, 'src/contract/__lint_probe__.ts');

let eslint: ESLint;

beforeAll(() => {
  // The config is passed in directly: ESLint would otherwise load eslint.config.js through a
  // dynamic import(), which jest's module sandbox does not support without VM-module flags.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const config = require(path.join(ROOT, 'eslint.config.js')) as ESLint.Options['overrideConfig'];
  eslint = new ESLint({ cwd: ROOT, overrideConfigFile: true, overrideConfig: config });
});

async function lintWorkflow(
  code: string,
  filePath = PROBE,
): Promise<Array<{ ruleId: string | null; message: string }>> {
  const [result] = await eslint.lintText(code, { filePath });
  if (!result) throw new Error('ESLint returned no result for the probe');
  // A fatal message (parse error, project-service refusal) has no ruleId; surface it, do not hide it.
  const fatal = result.messages.find((m) => m.fatal);
  if (fatal) throw new Error(`probe could not be linted: ${fatal.message}`);
  return result.messages.map(({ ruleId, message }) => ({ ruleId, message }));
}

function restrictedImportsOf(messages: Array<{ ruleId: string | null; message: string }>): string[] {
  return messages.filter((m) => m.ruleId === '@typescript-eslint/no-restricted-imports').map((m) => m.message);
}

describe('workflow sandbox boundary (eslint, src/workflows/**)', () => {
  it.each([
    ['node:fs', "import { readFileSync } from 'node:fs';\nexport const read = readFileSync;\n"],
    ['fs', "import * as fs from 'fs';\nexport const files = fs;\n"],
    ['crypto', "import { createHash } from 'crypto';\nexport const hash = createHash;\n"],
    ['child_process', "import { spawn } from 'child_process';\nexport const run = spawn;\n"],
    ['undici', "import { request } from 'undici';\nexport const get = request;\n"],
    ['@temporalio/activity', "import { Context } from '@temporalio/activity';\nexport const ctx = Context;\n"],
    ['@temporalio/client', "import { Client } from '@temporalio/client';\nexport const client = Client;\n"],
    // A value import from activities would drag activity code (and its I/O) into the bundle.
    ['../activities', "import { fetchInput } from '../activities';\nexport const fetcher = fetchInput;\n"],
    ['../activities/media', "import * as media from '../activities/media';\nexport const m = media;\n"],
    ['../contract/signature', "import { verify } from '../contract/signature';\nexport const check = verify;\n"],
    // Lean worker: zod and every schema module stay out of the workflow bundle (types only).
    ['zod', "import { z } from 'zod';\nexport const s = z.string();\n"],
    ['../contract', "import { MODELS } from '../contract';\nexport const m = MODELS;\n"],
    [
      '../contract/resources',
      "import { webhookEventSchema } from '../contract/resources';\nexport const s = webhookEventSchema;\n",
    ],
    [
      '../contract/model-inputs',
      "import { MODEL_INPUT_SCHEMAS } from '../contract/model-inputs';\nexport const m = MODEL_INPUT_SCHEMAS;\n",
    ],
    [
      '../pipeline-spec/spec',
      "import { validatePipelineSpec } from '../pipeline-spec/spec';\nexport const v = validatePipelineSpec;\n",
    ],
    [
      '../pipeline-spec',
      "import { resolveReferences } from '../pipeline-spec';\nexport const r = resolveReferences;\n",
    ],
    [
      '../pipeline-spec/steps/registry',
      "import { pipelineStepSchema } from '../pipeline-spec/steps/registry';\nexport const s = pipelineStepSchema;\n",
    ],
    ['../config', "import { loadEnv } from '../config';\nexport const l = loadEnv;\n"],
  ])('flags an import of %s', async (specifier, code) => {
    const messages = restrictedImportsOf(await lintWorkflow(code));
    expect(messages).toHaveLength(1);
    expect(messages[0]).toContain(`'${specifier}'`);
  });

  it('allows `import type` from activities', async () => {
    const messages = await lintWorkflow(
      "import type * as activities from '../activities';\nimport { type FetchInput } from '../activities/fetch';\nexport type A = typeof activities | FetchInput;\n",
    );
    expect(restrictedImportsOf(messages)).toEqual([]);
  });

  it('allows the imports workflows are meant to use: the workflow API, plain-data modules, and types from anywhere', async () => {
    const messages = await lintWorkflow(
      [
        "import { condition } from '@temporalio/workflow';",
        "import { proxyReelflowActivities } from './activity-proxy';",
        "import { LIMITS } from '../contract/limits';",
        "import { EVENT_TYPES } from '../contract/events';",
        "import { MODELS } from '../contract/model-metadata';",
        "import { LONG_FORM } from '../contract/models/long-form';",
        "import { SIGNAL_NAMES } from '../contract/workflow-messages';",
        "import { resolvePacing } from '../pipeline-spec/pacing';",
        "import { resolveReferences } from '../pipeline-spec/references';",
        "import type { WebhookEvent } from '../contract';",
        "import type { PipelineSpec } from '../pipeline-spec/spec';",
        "import type { z } from 'zod';",
        'export type T = WebhookEvent | PipelineSpec | z.ZodType;',
        'export const all = [condition, proxyReelflowActivities, LIMITS, EVENT_TYPES, MODELS, LONG_FORM, SIGNAL_NAMES, resolvePacing, resolveReferences];',
        '',
      ].join('\n'),
    );
    expect(messages).toEqual([]);
  });

  it("flags the SDK's activity proxies: reelflow's activities are scheduled under their prefixed types", async () => {
    const messages = restrictedImportsOf(
      await lintWorkflow(
        "import { proxyActivities, proxyLocalActivities } from '@temporalio/workflow';\nexport const p = [proxyActivities, proxyLocalActivities];\n",
      ),
    );
    expect(messages).toHaveLength(2);
    for (const message of messages) expect(message).toContain('proxyReelflowActivities');
  });

  it('flags an un-awaited promise (no-floating-promises, type-aware)', async () => {
    const messages = await lintWorkflow(
      'async function step(): Promise<void> {}\nexport function run(): void {\n  step();\n}\n',
    );
    expect(messages.map((m) => m.ruleId)).toEqual(['@typescript-eslint/no-floating-promises']);
  });

  it('accepts the same promise once it is awaited', async () => {
    const messages = await lintWorkflow(
      'async function step(): Promise<void> {}\nexport async function run(): Promise<void> {\n  await step();\n}\n',
    );
    expect(messages).toEqual([]);
  });
});

describe('lean boundary of the modules workflows import values from (eslint)', () => {
  const at = (file: string) => path.join(ROOT, file);
  it.each([
    ['src/contract/events.ts', 'zod', "import { z } from 'zod';\nexport const s = z.string();\n"],
    [
      'src/contract/events.ts',
      './resources',
      "import { resultSchema } from './resources';\nexport const s = resultSchema;\n",
    ],
    [
      'src/contract/model-metadata.ts',
      './model-inputs',
      "import { modelIdSchema } from './model-inputs';\nexport const s = modelIdSchema;\n",
    ],
    [
      'src/contract/models/long-form.ts',
      '../model-inputs',
      "import { modelIdSchema } from '../model-inputs';\nexport const s = modelIdSchema;\n",
    ],
    [
      'src/contract/limits.ts',
      'node:crypto',
      "import { createHash } from 'node:crypto';\nexport const h = createHash;\n",
    ],
    ['src/pipeline-spec/pacing.ts', '../contract', "import { MODELS } from '../contract';\nexport const m = MODELS;\n"],
    [
      'src/pipeline-spec/references.ts',
      './spec',
      "import { pipelineSpecSchema } from './spec';\nexport const s = pipelineSpecSchema;\n",
    ],
  ])('%s: flags an import of %s', async (file, specifier, code) => {
    const messages = restrictedImportsOf(await lintWorkflow(code, at(file)));
    expect(messages).toHaveLength(1);
    expect(messages[0]).toContain(`'${specifier}'`);
  });

  it('allows type imports and plain siblings there', async () => {
    const code =
      "import type { JobResult } from './resources';\nimport { isTerminalState } from './limits';\nexport type R = JobResult;\nexport const t = isTerminalState;\n";
    expect(restrictedImportsOf(await lintWorkflow(code, at('src/contract/events.ts')))).toEqual([]);
  });
});

describe('contract purity boundary (eslint, src/contract/** except signature.ts)', () => {
  it.each([
    ['node:crypto', "import { createHash } from 'node:crypto';\nexport const hash = createHash;\n"],
    ['path', "import * as path from 'path';\nexport const p = path;\n"],
    ['undici', "import { fetch } from 'undici';\nexport const get = fetch;\n"],
    ['./signature', "export { verify } from './signature';\n"],
  ])('flags an import of %s', async (specifier, code) => {
    const messages = restrictedImportsOf(await lintWorkflow(code, CONTRACT_PROBE));
    expect(messages).toHaveLength(1);
    expect(messages[0]).toContain(`'${specifier}'`);
  });

  it('allows zod and sibling modules', async () => {
    const messages = await lintWorkflow(
      "import { z } from 'zod';\nimport { LIMITS } from './limits';\nexport const both = [z, LIMITS];\n",
      CONTRACT_PROBE,
    );
    expect(messages).toEqual([]);
  });
});
