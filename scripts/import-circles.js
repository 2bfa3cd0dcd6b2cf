// Import circles in src/, type-only imports included (ESLint's import/no-cycle skips those, so a
// circle held together by `import type` passes lint but still ties modules together).
// `node scripts/import-circles.js` prints each circle as a strongly connected group of modules and
// exits 1 when there is one. Resolution is TypeScript's, so `../contract` names contract/index.ts.
const fs = require('node:fs');
const path = require('node:path');
const ts = require('typescript');

const SRC = path.join(__dirname, '..', 'src');
const OPTIONS = { module: ts.ModuleKind.CommonJS, moduleResolution: ts.ModuleResolutionKind.Node10 };

/** Every .ts module under `dir` (declarations aside). */
function modules(dir) {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const file = path.join(dir, entry.name);
    if (entry.isDirectory()) return modules(file);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') ? [file] : [];
  });
}

/** The src modules `file` imports or re-exports from (relative specifiers only). */
function importsOf(file) {
  const source = ts.createSourceFile(file, fs.readFileSync(file, 'utf8'), ts.ScriptTarget.Latest);
  const host = ts.createCompilerHost(OPTIONS);
  const found = new Set();
  for (const statement of source.statements) {
    const specifier =
      (ts.isImportDeclaration(statement) || ts.isExportDeclaration(statement)) && statement.moduleSpecifier;
    if (!specifier || !ts.isStringLiteral(specifier) || !specifier.text.startsWith('.')) continue;
    const resolved = ts.resolveModuleName(specifier.text, file, OPTIONS, host).resolvedModule;
    if (resolved && resolved.resolvedFileName.startsWith(SRC)) found.add(resolved.resolvedFileName);
  }
  return [...found];
}

/** Strongly connected groups of more than one module (Tarjan), each a circle of imports. */
function circles(graph) {
  let next = 0;
  const index = new Map();
  const low = new Map();
  const stack = [];
  const onStack = new Set();
  const groups = [];
  const visit = (node) => {
    index.set(node, next);
    low.set(node, next);
    next += 1;
    stack.push(node);
    onStack.add(node);
    for (const to of graph.get(node) ?? []) {
      if (!index.has(to)) {
        visit(to);
        low.set(node, Math.min(low.get(node), low.get(to)));
      } else if (onStack.has(to)) low.set(node, Math.min(low.get(node), index.get(to)));
    }
    if (low.get(node) !== index.get(node)) return;
    const group = [];
    for (let member; member !== node;) {
      member = stack.pop();
      onStack.delete(member);
      group.push(member);
    }
    if (group.length > 1) groups.push(group);
  };
  for (const node of graph.keys()) if (!index.has(node)) visit(node);
  return groups;
}

/** The import circles of src/, each as the sorted paths (relative to src/) of its modules. */
function importCircles() {
  const graph = new Map(modules(SRC).map((file) => [file, importsOf(file)]));
  return circles(graph).map((group) => group.map((file) => path.relative(SRC, file)).sort());
}

module.exports = { importCircles };

if (require.main === module) {
  const found = importCircles();
  console.log(`import circles in src/: ${found.length}`);
  for (const group of found) console.log(`  ${group.join(' ↔ ')}`);
  process.exitCode = found.length > 0 ? 1 : 0;
}
