import * as fs from 'node:fs';
import * as path from 'node:path';
import ts from 'typescript';

/**
 * docs/library.md's TypeScript examples compile as written: each ```ts block is type-checked as an ES
 * module of a team's project (module and moduleResolution nodenext, strict), with `reelflow/*` resolved
 * to this checkout's sources through package.json's `exports` (dist/… → src/…). The examples are virtual
 * files beside docs/library.md, so the SDK, Express and @types/node resolve from this checkout's node_modules.
 */

const ROOT = path.resolve(__dirname, '../..');
const DOC = path.join(ROOT, 'docs', 'library.md');

/** The ```ts blocks of a Markdown text, with the line each starts on. */
function tsBlocks(markdown: string): { line: number; code: string }[] {
  const blocks: { line: number; code: string }[] = [];
  const lines = markdown.split('\n');
  for (let i = 0; i < lines.length; i++) {
    if (lines[i]!.trim() !== '```ts') continue;
    const start = i + 1;
    while (i + 1 < lines.length && lines[i + 1]!.trim() !== '```') i++;
    blocks.push({ line: start + 1, code: lines.slice(start, i + 1).join('\n') });
    i++;
  }
  return blocks;
}

/** `reelflow` and `reelflow/<entry>` → the source file of the entry package.json exports. */
function reelflowPaths(): Record<string, string[]> {
  const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
    exports: Record<string, string | { types?: string }>;
  };
  const paths: Record<string, string[]> = {};
  for (const [key, target] of Object.entries(pkg.exports)) {
    const types = typeof target === 'string' ? undefined : target.types;
    if (!types) continue;
    const source = types.replace(/^\.\/dist\//, './src/').replace(/\.d\.ts$/, '.ts');
    paths[key === '.' ? 'reelflow' : `reelflow/${key.slice(2)}`] = [path.join(ROOT, source)];
  }
  return paths;
}

/** Type-checks `files` (virtual path → code) and returns their diagnostics as `file:line:col message`. */
function typeCheck(files: Record<string, string>): string[] {
  const options: ts.CompilerOptions = {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    lib: ['lib.es2022.d.ts'],
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    esModuleInterop: true,
    types: ['node'],
    baseUrl: ROOT,
    paths: reelflowPaths(),
  };
  const host = ts.createCompilerHost(options);
  const { fileExists, readFile, getSourceFile } = host;
  host.fileExists = (file) => file in files || fileExists.call(host, file);
  host.readFile = (file) => files[file] ?? readFile.call(host, file);
  host.getSourceFile = (file, language, ...rest) =>
    file in files
      ? ts.createSourceFile(file, files[file]!, language, true)
      : getSourceFile.call(host, file, language, ...rest);
  const program = ts.createProgram(Object.keys(files), options, host);
  return ts
    .getPreEmitDiagnostics(program)
    .filter((d) => d.file && d.file.fileName in files)
    .map((d) => {
      const { line, character } = d.file!.getLineAndCharacterOfPosition(d.start ?? 0);
      return `${path.basename(d.file!.fileName)}:${line + 1}:${character + 1} ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`;
    });
}

describe('docs/library.md', () => {
  const blocks = tsBlocks(fs.readFileSync(DOC, 'utf8'));
  // Each block is its own module, named after the line it starts on in the page; beside them one that
  // must not compile, checked in the same program (one type check of the sources, not two).
  const files = Object.fromEntries(
    blocks.map((block) => [path.join(ROOT, 'docs', `library-md-line-${block.line}.mts`), block.code]),
  );
  const BROKEN = 'library-md-broken.mts';
  files[path.join(ROOT, 'docs', BROKEN)] = [
    "import { reelflowPlugin } from 'reelflow/worker';",
    "reelflowPlugin({ workflows: 'yes' });",
    'startInboxSink({ client });',
  ].join('\n');
  let diagnostics: string[] = [];
  beforeAll(() => {
    diagnostics = typeCheck(files);
  }, 180_000);

  it('has TypeScript examples: the step functions, the plugin and the receiver', () => {
    expect(blocks.length).toBeGreaterThanOrEqual(3);
    const all = blocks.map((block) => block.code).join('\n');
    for (const name of ['generateVideo', 'reelflowPlugin', 'createWebhookReceiver', 'startInboxSink'])
      expect(all).toContain(name);
  });

  it('type-checks every ```ts example as written against the sources', () => {
    expect(diagnostics.filter((line) => !line.startsWith(BROKEN))).toEqual([]);
  });

  it('would name an example that does not compile (an undeclared identifier, a wrong option)', () => {
    expect(diagnostics.filter((line) => line.startsWith(BROKEN))).toEqual([
      expect.stringMatching(/^library-md-broken\.mts:2:18 Type 'string' is not assignable to type 'boolean/),
      expect.stringMatching(/^library-md-broken\.mts:3:1 Cannot find name 'startInboxSink'/),
      expect.stringMatching(
        /^library-md-broken\.mts:3:18 No value exists in scope for the shorthand property 'client'/,
      ),
    ]);
  });
});
