// ESLint 9 flat config (CommonJS, like the rest of the repo).
// Type-aware rules run on every TypeScript file (src, test, bench, scripts); the workflow
// sandbox boundary is enforced on src/workflows/** (see design.md: workflows are deterministic
// and bundled for the Temporal sandbox, so Node built-ins, I/O libraries and activity code
// must never reach them).
const { builtinModules } = require('node:module');
const js = require('@eslint/js');
const { defineConfig } = require('eslint/config');
const tseslint = require('typescript-eslint');
const importPlugin = require('eslint-plugin-import');

const TS_FILES = ['**/*.ts', '**/*.cts', '**/*.mts'];
const JS_FILES = ['**/*.js', '**/*.cjs', '**/*.mjs'];

/**
 * Files the boundary test lints through `ESLint#lintText`; they never exist on disk, so the
 * project service treats them as part of the default project (allowDefaultProject).
 */
const LINT_PROBES = ['src/workflows/__lint_probe__.ts', 'src/contract/__lint_probe__.ts'];

// Bare built-in names (fs, path, crypto, fs/promises, ...). `node:*` is covered by a pattern.
const NODE_BUILTINS = builtinModules.filter((name) => !name.startsWith('_'));

const WORKFLOW_SANDBOX_MESSAGE =
  'Workflows run in the Temporal sandbox: import only @temporalio/workflow, plain-data modules (contract/errors, contract/events, contract/failure-types, contract/limits, contract/model-metadata, contract/models/*, contract/workflow-names, contract/workflow-messages, contract/route-workflow, pipeline-spec/errors, pipeline-spec/references, pipeline-spec/pacing, pipeline-spec/ui-text, pipeline-spec/steps/match, pipeline-spec/steps/op-types) and types; do I/O in activities.';

/**
 * Modules workflows import values from. They are part of every workflow bundle, so they must stay
 * plain data and pure functions: no zod, no schema modules, no Node built-ins, no I/O.
 */
const WORKFLOW_PLAIN_MODULES = [
  'src/contract/errors.ts',
  'src/contract/events.ts',
  'src/contract/failure-types.ts',
  'src/contract/limits.ts',
  'src/contract/model-metadata.ts',
  'src/contract/models/*.ts',
  'src/contract/workflow-names.ts',
  'src/contract/workflow-messages.ts',
  'src/contract/route-workflow.ts',
  'src/contract/archived-output.ts',
  'src/contract/prepared-submission.ts',
  'src/pipeline-spec/errors.ts',
  'src/pipeline-spec/references.ts',
  'src/pipeline-spec/pacing.ts',
  'src/pipeline-spec/ui-text.ts',
  'src/pipeline-spec/steps/match.ts',
  'src/pipeline-spec/steps/op-types.ts',
];

const LEAN_MESSAGE =
  'Workflow code imports plain data and types only: zod and the schema modules (contract barrel, model-inputs, resources, validation, uri, pipeline-spec/spec, pipeline-spec/builder, pipeline-spec/steps) are allowed as `import type`; validate at the edges (CLI, activities, bridge).';

/**
 * Value imports that would bring zod (and every schema) into the workflow bundle. `import type`
 * stays allowed: types are erased.
 */
const LEAN_PATTERNS = [
  { regex: '^zod(/.*)?$', allowTypeImports: true, message: LEAN_MESSAGE },
  {
    regex: '(^|\\.\\./)contract(/(index|model-inputs|resources|validation|uri)(\\.[jt]s)?)?$',
    allowTypeImports: true,
    message: LEAN_MESSAGE,
  },
  {
    regex:
      '(^|\\.\\./)pipeline-spec(/(index|spec|builder|examples|step-fields|steps/(?!match|op-types)[a-z-]+)(\\.[jt]s)?)?$',
    allowTypeImports: true,
    message: LEAN_MESSAGE,
  },
  { regex: '(^|\\.\\./)config(/.*)?$', allowTypeImports: true, message: LEAN_MESSAGE },
];

const IO_PACKAGES = [
  'undici',
  'fastify',
  'pino',
  '@temporalio/client',
  '@temporalio/worker',
  '@temporalio/activity',
  '@temporalio/testing',
];

/** Node built-ins and I/O packages: neither workflows nor the (workflow-importable) contract may use them. */
function sandboxRestrictions(where, hint) {
  return {
    paths: [
      ...NODE_BUILTINS.map((name) => ({ name, message: `Node built-in "${name}" is not available ${where}. ${hint}` })),
      ...IO_PACKAGES.map((name) => ({ name, message: `"${name}" must not be imported ${where}. ${hint}` })),
    ],
    patterns: [
      { group: ['node:*'], message: `Node built-ins are not available ${where}. ${hint}` },
      {
        group: IO_PACKAGES.map((name) => `${name}/*`),
        message: `I/O and worker-side packages must not be imported ${where}. ${hint}`,
      },
    ],
  };
}

/**
 * reelflow's activities are registered under `reelflow.`-prefixed types; workflow code schedules them
 * through src/workflows/activity-proxy.ts, the one module that may use the SDK's proxies.
 */
const SDK_PROXIES = {
  name: '@temporalio/workflow',
  importNames: ['proxyActivities', 'proxyLocalActivities'],
  message:
    "reelflow's activities run under prefixed types: use proxyReelflowActivities / proxyReelflowLocalActivities (src/workflows/activity-proxy.ts).",
};

/** Restrictions for src/workflows/**, applied through @typescript-eslint/no-restricted-imports. */
const workflowImportRestrictions = (() => {
  const base = sandboxRestrictions('in workflows', WORKFLOW_SANDBOX_MESSAGE);
  return {
    paths: [...base.paths, SDK_PROXIES],
    patterns: [
      ...base.patterns,
      {
        // The signature rule needs node:crypto; workflows never verify deliveries themselves.
        group: ['**/contract/signature', '**/contract/signature.*'],
        message: `contract/signature needs node:crypto. ${WORKFLOW_SANDBOX_MESSAGE}`,
      },
      ...LEAN_PATTERNS,
      {
        // Activities are referenced by type only (proxyActivities<typeof activities>()).
        group: ['**/activities', '**/activities/**'],
        allowTypeImports: true,
        message: 'Workflows may import activities only with `import type` (use proxyActivities<typeof activities>()).',
      },
    ],
  };
})();

/**
 * Restrictions for src/contract/** except signature.ts: workflows import the contract index, so
 * anything it pulls in lands in the workflow bundle too.
 */
const contractImportRestrictions = (() => {
  const base = sandboxRestrictions(
    'in the contract',
    'Workflows import the contract, so it must stay pure (no I/O); only signature.ts may use node:crypto.',
  );
  return {
    paths: base.paths,
    patterns: [
      ...base.patterns,
      {
        group: ['./signature', './signature.*'],
        message: 'Only signature.ts may use node:crypto; do not re-export or import it inside the contract.',
      },
    ],
  };
})();

const IMPORT_SETTINGS = {
  'import/extensions': ['.ts', '.cts', '.mts', '.js', '.cjs', '.mjs'],
  'import/external-module-folders': ['node_modules', 'node_modules/@types'],
  // Never parse dependencies: a cycle through node_modules back into reelflow cannot exist.
  'import/ignore': ['node_modules'],
  'import/parsers': { '@typescript-eslint/parser': ['.ts', '.cts', '.mts'] },
  'import/resolver': { node: { extensions: ['.ts', '.cts', '.mts', '.js', '.cjs', '.mjs', '.json'] } },
};

/**
 * The layers of docs/architecture.md, by resolved path (one specifier names different files from different
 * folders, so strings cannot decide).
 */
const LAYER_ZONES = [
  {
    // The local service is a separate product: only its process entry point opens it.
    target: './src/!(local-service|workers)/**/*',
    from: './src/local-service',
    message:
      'src/local-service is the local service only; reach it through its entry point src/workers/local-service.ts (docs/architecture.md).',
  },
  {
    target: './src/workers/!(local-service).ts',
    from: './src/local-service',
    message:
      'Only src/workers/local-service.ts, the service process entry point, imports src/local-service (docs/architecture.md).',
  },
  {
    // Shared libraries sit below every process: they never reach up into one.
    target: './src/{contract,client,net,media,metrics,tracing,config,pipeline-spec}/**/*',
    from: [
      './src/cli',
      './src/stack',
      './src/workers',
      './src/bridge',
      './src/routing',
      './src/activities',
      './src/workflows',
      './src/local-service',
      './src/plugin',
      './src/webhooks',
    ],
    message:
      'Shared libraries (contract, client, net, media, metrics, tracing, config, pipeline-spec) must not import process code (docs/architecture.md).',
  },
  {
    // The route store serves the worker's submit and the bridge's inbox: the words both sides share live in src/contract.
    target: './src/routing/**/*',
    from: [
      './src/workflows',
      './src/bridge',
      './src/activities',
      './src/plugin',
      './src/webhooks',
      './src/cli',
      './src/stack',
      './src/workers',
    ],
    message:
      'src/routing imports shared libraries only: signal names, prepared submits and the event sink are in src/contract (docs/architecture.md).',
  },
  {
    // Workflows share their messages with routing through src/contract, never through routing itself.
    target: './src/workflows/**/*',
    from: [
      './src/routing',
      './src/bridge',
      './src/plugin',
      './src/webhooks',
      './src/cli',
      './src/stack',
      './src/workers',
      './src/client',
      './src/net',
      './src/media',
      './src/metrics',
      './src/tracing',
    ],
    message:
      'src/workflows imports src/contract, src/pipeline-spec and activity types only; shared words (ArchivedOutput, signal names) are in src/contract (docs/architecture.md).',
  },
  {
    // reelflow/webhooks is the bridge's delivery check for a team's own server: nothing of the worker side.
    target: './src/webhooks/**/*',
    from: [
      './src/routing',
      './src/workflows',
      './src/activities',
      './src/plugin',
      './src/cli',
      './src/stack',
      './src/workers',
    ],
    message:
      "src/webhooks (reelflow/webhooks) imports the bridge's delivery check and shared libraries only (docs/architecture.md).",
  },
  {
    // reelflow/worker puts reelflow on a team's worker: the bridge and the CLI are other processes.
    target: './src/plugin/**/*',
    from: ['./src/bridge', './src/webhooks', './src/cli', './src/stack'],
    message:
      'src/plugin (reelflow/worker) imports worker code (activities, workflows, routing, workers) and shared libraries only (docs/architecture.md).',
  },
  {
    // The plugin is a library for workers: processes reach it through src/workers, nothing below reaches up to it.
    target: './src/!(plugin|workers|cli|stack)/**/*',
    from: './src/plugin',
    message: 'Only process code (src/workers, src/cli, src/stack) imports src/plugin (docs/architecture.md).',
  },
];

/**
 * What code outside src/workflows may import from it: the messages (definitions), the public types
 * (`*-types`), the workflow registry (index, for bundles and replay), the package entry (public: the
 * step functions) and the route workflow the bridge still delivers through. Everything else there is the workflows' own.
 */
const WORKFLOW_PUBLIC_MODULES = ['definitions', 'index', 'public', 'webhook-route', '[a-z-]+-types'];
const WORKFLOW_INTERNALS_PATTERN = {
  regex: `(^|/)workflows/(?!(${WORKFLOW_PUBLIC_MODULES.join('|')})(\\.[jt]s)?$).+`,
  message:
    'Outside src/workflows import only its messages (workflows/definitions) and public types (workflows/*-types); the rest is workflow internals.',
};

/**
 * One import style for the contract: outside src/workflows and src/contract, code imports it through its
 * barrel (`../contract`). Deep imports stay where the barrel would be wrong:
 *  - `contract/signature` (node:crypto) is kept out of the barrel, so it is always imported by its path;
 *  - the plain-data modules workflows import (WORKFLOW_PLAIN_MODULES): they land in the workflow bundle,
 *    and the barrel pulls zod;
 *  - the modules `require('reelflow/worker')` loads at once (src/plugin/index.ts and what it imports
 *    eagerly): loading the package loads no zod (bench/library-weight.ts measures it).
 */
const CONTRACT_DEEP_IMPORTERS = [
  ...WORKFLOW_PLAIN_MODULES,
  'src/plugin/index.ts',
  'src/plugin/activity-types.ts',
  'src/plugin/errors.ts',
];
const CONTRACT_BARREL_PATTERN = {
  regex: '(^|/)contract/(?!signature(\\.[jt]s)?$).+',
  message:
    "Import the contract through its barrel ('../contract'); deep contract/* imports are for src/workflows, src/contract and the exceptions in eslint.config.js (CONTRACT_DEEP_IMPORTERS).",
};

const PROCESS_ENV_MESSAGE =
  'src/config is the one reader of the environment: declare the variable in src/config/variables.ts and read it through its process loader (docs/configuration.md).';

module.exports = defineConfig(
  {
    ignores: ['dist/**', 'node_modules/**', '.tools/**', 'coverage/**', '.reelflow/**', '.bench/**'],
  },
  js.configs.recommended,
  // Recommended (syntactic) TypeScript set, plus the type-aware promise rule. The full
  // recommendedTypeChecked set (no-unsafe-*, require-await, ...) is deliberately not used: it
  // mostly flags Temporal SDK `any`s and test doubles, and doubles lint time on 2 cores.
  {
    files: TS_FILES,
    extends: [tseslint.configs.recommended],
    languageOptions: {
      parserOptions: {
        projectService: {
          allowDefaultProject: LINT_PROBES,
        },
        tsconfigRootDir: __dirname,
      },
    },
    rules: {
      // The one rule the issue asks for explicitly: a dropped promise loses its error.
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' },
      ],
    },
  },
  // Plain JS (config files, scripts/*.js, bin/): no type information, Node CommonJS globals.
  {
    files: JS_FILES,
    languageOptions: {
      sourceType: 'commonjs',
      globals: {
        require: 'readonly',
        module: 'writable',
        exports: 'writable',
        __dirname: 'readonly',
        __filename: 'readonly',
        process: 'readonly',
        console: 'readonly',
        Buffer: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        setInterval: 'readonly',
        clearInterval: 'readonly',
        URL: 'readonly',
      },
    },
    rules: {
      'no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
    },
  },
  // Import cycles (needs the TypeScript-aware resolver settings of eslint-plugin-import).
  {
    files: [...TS_FILES, ...JS_FILES],
    // The probe exists only in memory; no-cycle reads files from disk and crashes on it.
    ignores: LINT_PROBES,
    plugins: { import: importPlugin },
    settings: IMPORT_SETTINGS,
    rules: {
      // External packages cannot import back into reelflow; skipping them keeps the rule cheap.
      'import/no-cycle': ['error', { ignoreExternal: true }],
    },
  },
  // The workflow sandbox boundary.
  {
    files: ['src/workflows/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': ['error', workflowImportRestrictions],
    },
  },
  // The one module that wraps the SDK's activity proxies with reelflow's activity type prefix.
  {
    files: ['src/workflows/activity-proxy.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        { ...workflowImportRestrictions, paths: workflowImportRestrictions.paths.filter((p) => p !== SDK_PROXIES) },
      ],
    },
  },
  // The contract stays pure: workflows import parts of it (signature.ts is the one exception).
  {
    files: ['src/contract/**/*.ts'],
    ignores: ['src/contract/signature.ts', ...WORKFLOW_PLAIN_MODULES],
    rules: {
      '@typescript-eslint/no-restricted-imports': ['error', contractImportRestrictions],
    },
  },
  // What workflows import values from: the sandbox rules plus no zod and no schema modules.
  {
    files: WORKFLOW_PLAIN_MODULES,
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        (() => {
          const base = sandboxRestrictions('in a module workflows import', LEAN_MESSAGE);
          const siblings = {
            regex: '^\\.\\.?/(index|model-inputs|resources|validation|uri|signature|spec|builder|examples)(\\.[jt]s)?$',
            allowTypeImports: true,
            message: LEAN_MESSAGE,
          };
          return { paths: base.paths, patterns: [...base.patterns, ...LEAN_PATTERNS, siblings] };
        })(),
      ],
    },
  },
  // The layer picture of docs/architecture.md.
  {
    files: ['src/**/*.ts'],
    ignores: LINT_PROBES,
    plugins: { import: importPlugin },
    settings: IMPORT_SETTINGS,
    rules: {
      'import/no-restricted-paths': ['error', { zones: LAYER_ZONES }],
    },
  },
  // src/workflows is reached through its messages and public types only.
  {
    files: TS_FILES,
    ignores: ['src/workflows/**', 'test/unit/workflows/**'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [WORKFLOW_INTERNALS_PATTERN] }],
    },
  },
  // ...and the contract through its barrel.
  {
    files: ['src/**/*.ts'],
    ignores: ['src/workflows/**', 'src/contract/**', ...CONTRACT_DEEP_IMPORTERS],
    rules: {
      'no-restricted-imports': ['error', { patterns: [WORKFLOW_INTERNALS_PATTERN, CONTRACT_BARREL_PATTERN] }],
    },
  },
  // src/config is the one reader of the environment (docs/configuration.md is generated from it).
  {
    files: ['src/**/*.ts'],
    ignores: ['src/config/**'],
    rules: {
      'no-restricted-properties': ['error', { object: 'process', property: 'env', message: PROCESS_ENV_MESSAGE }],
    },
  },
);
