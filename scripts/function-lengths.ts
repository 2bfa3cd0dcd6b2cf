import * as fs from 'node:fs';
import * as path from 'node:path';
import ts from 'typescript';

/**
 * Lists the functions of a source tree by length (function declarations and expressions, arrow
 * functions, methods, constructors and accessors), longest first. A function's length runs from its
 * first line to its last, nested functions included: a factory is as long as everything it builds.
 * The house rule is none in src/ over MAX_FUNCTION_LINES (test/repo/function-length.test.ts).
 *
 *   npx tsx scripts/function-lengths.ts [dir] [--over N]    (default: src, every function over 80 lines)
 */

/** The longest a function in src/ may be. */
export const MAX_FUNCTION_LINES = 120;

/** One function: where it starts (relative to the repository) and how many lines it spans. */
export interface FunctionLength {
  file: string;
  line: number;
  name: string;
  lines: number;
}

/** A readable name: the declared one, else the variable, property or class member it is assigned to. */
function nameOf(node: ts.FunctionLikeDeclaration): string {
  if (ts.isConstructorDeclaration(node)) return 'constructor';
  if (node.name) return node.name.getText();
  const parent = node.parent;
  if (
    (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent)) &&
    !ts.isObjectBindingPattern(parent.name) &&
    !ts.isArrayBindingPattern(parent.name)
  )
    return parent.name.getText();
  return '<anonymous>';
}

function isFunctionLike(node: ts.Node): node is ts.FunctionLikeDeclaration {
  return (
    ts.isFunctionDeclaration(node) ||
    ts.isFunctionExpression(node) ||
    ts.isArrowFunction(node) ||
    ts.isMethodDeclaration(node) ||
    ts.isConstructorDeclaration(node) ||
    ts.isGetAccessorDeclaration(node) ||
    ts.isSetAccessorDeclaration(node)
  );
}

/** The functions of one file (with a body: overload signatures and abstract methods have none). */
export function functionLengthsIn(file: string, text: string): FunctionLength[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found: FunctionLength[] = [];
  const visit = (node: ts.Node): void => {
    if (isFunctionLike(node) && node.body) {
      const first = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
      const last = source.getLineAndCharacterOfPosition(node.getEnd()).line;
      found.push({ file, line: first + 1, name: nameOf(node), lines: last - first + 1 });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** Every function of the .ts files under `dir` (relative to `root`), longest first. */
export function functionLengths(root: string, dir = 'src'): FunctionLength[] {
  return fs
    .readdirSync(path.join(root, dir), { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.ts') && !name.endsWith('.d.ts'))
    .flatMap((name) => {
      const file = path.join(dir, name);
      return functionLengthsIn(file, fs.readFileSync(path.join(root, file), 'utf8'));
    })
    .sort((a, b) => b.lines - a.lines || a.file.localeCompare(b.file) || a.line - b.line);
}

if (require.main === module) {
  const args = process.argv.slice(2);
  const overAt = args.indexOf('--over');
  const over = overAt >= 0 ? Number(args.splice(overAt, 2)[1]) : 80;
  const dir = args[0] ?? 'src';
  const rows = functionLengths(path.resolve(__dirname, '..'), dir).filter((row) => row.lines > over);
  for (const row of rows) console.log(`${String(row.lines).padStart(4)}  ${row.file}:${row.line}  ${row.name}`);
  console.log(`${rows.length} functions over ${over} lines in ${dir}/`);
}
