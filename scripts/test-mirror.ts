import * as fs from 'node:fs';
import * as path from 'node:path';
import ts from 'typescript';

/**
 * Tests mirror src/ (docs/architecture.md): the unit test of `src/<path>/<module>.ts` is
 * `test/unit/<path>/<module>.test.ts`. This lists every src module with its unit test, or why it has
 * none: declarations or re-exports only, exercised only against real servers (INTEGRATION_ONLY), or
 * nothing yet (a gap, reported). `npm run test:mirror` prints the list; test/repo/test-mirror.test.ts
 * checks that every unit test file mirrors a module and that every allowlist entry still names one.
 */

/**
 * Modules (a file, or a folder ending in `/`) whose behaviour only makes sense with real servers or
 * a real Temporal worker, and where their tests are. Relative to src/.
 */
export const INTEGRATION_ONLY: Record<string, string> = {
  'workflows/':
    'deterministic workflow code runs only inside a Temporal worker: test/workflows (time-skipping server), test/integration/workflow-*.test.ts, test/replay (history replay), test/e2e',
  'activities/index.ts':
    'activities call the service through a real client under a worker: test/integration/workflow-*.test.ts',
  'activities/ops/':
    'runs real ffmpeg on real media into a real media store: test/integration/ops.test.ts, test/workflows/op-steps.test.ts',
  'activities/media.ts': 'resolves and archives through a real media store: test/integration/media-store.test.ts',
  'activities/preflight.ts':
    'reads real inputs over HTTP and probes them with ffprobe: test/integration/preflight.test.ts',
  'activities/preflight-source.ts': 'ranged GETs against a real HTTP server: test/integration/preflight.test.ts',
  'activities/submit-guard.ts':
    'guards submits made by a real activity attempt: test/integration/workflow-pipeline.test.ts, test/faults',
  'activities/submitted-record.ts':
    'records submits in a real activity heartbeat: test/integration/workflow-worker-kill.test.ts',
  'activities/candidates.ts': 'lists jobs of a real service: test/integration/cli-orphans.test.ts',
  'bridge/':
    'the webhook bridge: real HTTP and a real Temporal server, test/integration/bridge-*.test.ts and webhook-path.test.ts',
  'cli/commands/': 'commands run as the real CLI process: test/integration/cli-*.test.ts, test/e2e',
  'cli/main.ts': 'the CLI process itself: test/integration/cli-*.test.ts',
  'cli/lib/connect.ts': 'connects to a real Temporal server: test/integration/cli-commands.test.ts',
  'cli/lib/context.ts': 'reads real workflows through Temporal: test/integration/cli-commands.test.ts',
  'cli/lib/follow.ts':
    'follows real workflows through Temporal: test/integration/cli-commands.test.ts, workflow-resume.test.ts',
  'cli/lib/operator.ts':
    'sends updates to real pipelines: test/integration/workflow-operator-console.test.ts, test/integration/cli-commands.test.ts',
  'cli/lib/quote.ts':
    'quotes through a real service: test/integration/cli-commands.test.ts, test/integration/cli-errors.test.ts',
  'cli/lib/spec-files.ts':
    'reads spec files and puts their local media into a real store: test/unit/pipeline-spec/examples.test.ts, test/integration/cli-commands.test.ts',
  'cli/lib/resume.ts':
    'reads a real earlier run and checks its outputs over HTTP: test/integration/workflow-resume.test.ts',
  'cli/lib/service-client.ts': 'a client of a real service: test/integration/cli-errors.test.ts',
  'media/archive.ts': 'downloads real outputs into a real store: test/integration/media-store.test.ts',
  'media/ffmpeg.ts':
    'runs the real ffmpeg/ffprobe: test/integration/service-stub-render.test.ts, test/e2e/media-pipelines.test.ts',
  'media/resolve-input.ts': 'resolves through a real store: test/integration/media-store.test.ts',
  'media/archived-copy.ts':
    'copies out of a real store into a real file: test/integration/report-page.test.ts, test/integration/cli-commands.test.ts (reelflow outputs)',
  'media/store/hash.ts': 'hashes real files: test/integration/media-store.test.ts',
  'media/store/index.ts': 'opens real stores and puts real files: test/integration/media-store.test.ts',
  'media/store/s3-store.ts': 'a real MinIO: test/integration/media-store.test.ts',
  'media/store/file-store.ts': 'real files: test/integration/media-store.test.ts',
  'metrics/server.ts': 'serves /metrics over real HTTP: test/integration/metrics-scrape.test.ts',
  'net/pinned-request.ts': 'real connections pinned to an address: test/integration/service-safe-fetch.test.ts',
  'net/safe-fetch.ts': 'real HTTP under the address rules: test/integration/service-safe-fetch.test.ts',
  'report/': 'the HTML report rendered in headless Chromium: test/integration/report-page.test.ts',
  'local-service/':
    'the local service over real HTTP and its journal on disk: test/integration/service-*.test.ts (unit tests exist where logic stands alone)',
  'stack/': 'the local stack starts real processes: test/e2e/demo.test.ts, test/integration/cli-commands.test.ts',
  'workers/':
    'process entry points, started as processes: test/unit/config/port.test.ts (reelflow worker), test/integration/topology-two-of-each.test.ts',
};

/** One src module and what tests it. */
export interface MirrorRow {
  /** Path relative to src/, e.g. `contract/pricing.ts`. */
  module: string;
  status: 'unit-test' | 'declarations-only' | 'integration-only' | 'missing';
  /** The unit test file, or the reason there is none. */
  detail: string;
}

function tsFiles(dir: string, suffix: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith(suffix) && !name.endsWith('.d.ts'))
    .map((name) => name.split(path.sep).join('/'))
    .sort();
}

/** True when a module has no runtime code of its own: types, interfaces and re-exports only. */
export function declarationsOnly(source: string): boolean {
  const file = ts.createSourceFile('module.ts', source, ts.ScriptTarget.ES2022, false);
  return file.statements.every(
    (statement) =>
      ts.isInterfaceDeclaration(statement) ||
      ts.isTypeAliasDeclaration(statement) ||
      ts.isImportDeclaration(statement) ||
      ts.isExportDeclaration(statement),
  );
}

/** The reason of the INTEGRATION_ONLY entry covering `module`, if any. */
export function integrationReason(module: string): string | undefined {
  const key = Object.keys(INTEGRATION_ONLY).find((entry) =>
    entry.endsWith('/') ? module.startsWith(entry) : module === entry,
  );
  return key === undefined ? undefined : INTEGRATION_ONLY[key];
}

/** Every src module with its unit test or the reason it has none. */
export function mirrorReport(root: string): MirrorRow[] {
  const unitTests = new Set(tsFiles(path.join(root, 'test/unit'), '.test.ts'));
  return tsFiles(path.join(root, 'src'), '.ts').map((module): MirrorRow => {
    const test = module.replace(/\.ts$/, '.test.ts');
    if (unitTests.has(test)) return { module, status: 'unit-test', detail: `test/unit/${test}` };
    if (declarationsOnly(fs.readFileSync(path.join(root, 'src', module), 'utf8')))
      return { module, status: 'declarations-only', detail: 'types and re-exports only' };
    const reason = integrationReason(module);
    if (reason) return { module, status: 'integration-only', detail: reason };
    return { module, status: 'missing', detail: 'no unit test file yet' };
  });
}

/** Unit test files that mirror no src module (test/unit/<path>.test.ts without src/<path>.ts). */
export function strayUnitTests(root: string): string[] {
  const modules = new Set(tsFiles(path.join(root, 'src'), '.ts'));
  return tsFiles(path.join(root, 'test/unit'), '.test.ts')
    .filter((test) => !modules.has(test.replace(/\.test\.ts$/, '.ts')))
    .map((test) => `test/unit/${test}`);
}

if (require.main === module) {
  const root = path.resolve(__dirname, '..');
  const rows = mirrorReport(root);
  const count = (status: MirrorRow['status']) => rows.filter((row) => row.status === status).length;
  for (const row of rows) console.log(`${row.status.padEnd(18)} src/${row.module.padEnd(40)} ${row.detail}`);
  console.log(
    `\n${rows.length} modules: ${count('unit-test')} with a unit test, ${count('declarations-only')} declarations only, ` +
      `${count('integration-only')} integration-only (allowlisted), ${count('missing')} without a unit test yet`,
  );
  const stray = strayUnitTests(root);
  if (stray.length > 0) {
    console.error(`unit tests that mirror no src module:\n  ${stray.join('\n  ')}`);
    process.exitCode = 1;
  }
}
