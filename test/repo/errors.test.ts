import * as path from 'node:path';
import ts from 'typescript';
import { FAILURE_TYPES } from '../../src/contract/failure-types';
import { srcProgram } from './src-program';

/**
 * The error convention of docs/architecture.md, checked on the real sources with the TypeScript
 * type checker: every error class has a stable machine `code` (a string literal or a closed union
 * of them) and lives in its folder's `errors.ts`; every ApplicationFailure type is spelled once, in
 * src/contract/failure-types.ts, and every ApplicationFailure src creates takes its type from there.
 */

const ROOT = path.resolve(__dirname, '../..');
const TABLE = 'src/contract/failure-types.ts';
const FAILURE_VALUES = new Set<string>(Object.values(FAILURE_TYPES));

/** Error classes whose `code` may be any string, and why. */
const OPEN_CODES: Record<string, string> = {
  ServiceProblemError:
    "the code of the service's problem document (or http_<status>): the service's catalogue decides it, the client passes it on",
};

const { program, checker, sourceFiles } = srcProgram(ROOT);
const rel = (file: ts.SourceFile) => path.relative(ROOT, file.fileName).split(path.sep).join('/');

interface ErrorClass {
  name: string;
  file: string;
  abstract: boolean;
  codeType: ts.Type | undefined;
}

function extendsError(type: ts.Type): boolean {
  if (
    type.getSymbol()?.getName() === 'Error' &&
    !type.getSymbol()?.valueDeclaration?.getSourceFile().fileName.includes(`${path.sep}src${path.sep}`)
  )
    return true;
  return (type.isClassOrInterface() ? checker.getBaseTypes(type) : []).some(extendsError);
}

function errorClasses(): ErrorClass[] {
  const found: ErrorClass[] = [];
  for (const file of sourceFiles) {
    const visit = (node: ts.Node): void => {
      if (ts.isClassDeclaration(node) && node.name) {
        const type = checker.getDeclaredTypeOfSymbol(checker.getSymbolAtLocation(node.name)!);
        if (extendsError(type)) {
          const code = type.getProperty('code');
          found.push({
            name: node.name.text,
            file: rel(file),
            abstract: (ts.getCombinedModifierFlags(node) & ts.ModifierFlags.Abstract) !== 0,
            codeType: code ? checker.getTypeOfSymbol(code) : undefined,
          });
        }
      }
      ts.forEachChild(node, visit);
    };
    visit(file);
  }
  return found;
}

function isLiteralCode(type: ts.Type): boolean {
  const parts = type.isUnion() ? type.types : [type];
  return parts.every((part) => part.isStringLiteral());
}

/** Every string literal (and template head/no-substitution template) in src, with where it stands. */
function stringLiterals(): { file: string; line: number; text: string }[] {
  const found: { file: string; line: number; text: string }[] = [];
  for (const file of sourceFiles) {
    const visit = (node: ts.Node): void => {
      if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node) || ts.isTemplateHead(node)) {
        found.push({
          file: rel(file),
          line: file.getLineAndCharacterOfPosition(node.getStart()).line + 1,
          text: node.text,
        });
      }
      ts.forEachChild(node, visit);
    };
    visit(file);
  }
  return found;
}

/** Every `ApplicationFailure.create({ type: … })` in src: the expression given as type. */
function failureCreations(): { where: string; expression: ts.Expression }[] {
  const found: { where: string; expression: ts.Expression }[] = [];
  for (const file of sourceFiles) {
    const visit = (node: ts.Node): void => {
      if (
        ts.isCallExpression(node) &&
        ts.isPropertyAccessExpression(node.expression) &&
        node.expression.name.text === 'create' &&
        node.expression.expression.getText() === 'ApplicationFailure'
      ) {
        const options = node.arguments[0];
        const typeProperty =
          options && ts.isObjectLiteralExpression(options)
            ? options.properties.find((p) => p.name?.getText() === 'type')
            : undefined;
        const where = `${rel(file)}:${file.getLineAndCharacterOfPosition(node.getStart()).line + 1}`;
        if (typeProperty && ts.isPropertyAssignment(typeProperty))
          found.push({ where, expression: typeProperty.initializer });
        else found.push({ where, expression: ts.factory.createIdentifier('<no type>') });
      }
      ts.forEachChild(node, visit);
    };
    visit(file);
  }
  return found;
}

describe('error convention', () => {
  const classes = errorClasses();

  it('finds the error classes of src (the checker sees the sources)', () => {
    expect(program.getSourceFiles().length).toBeGreaterThan(100);
    expect(classes.map((c) => c.name)).toEqual(
      expect.arrayContaining(['ReelflowError', 'AmbiguousSubmissionError', 'CliError', 'SafeFetchError']),
    );
  });

  it('every error class lives in its folder’s errors.ts', () => {
    const misplaced = classes
      .filter((c) => path.posix.basename(c.file) !== 'errors.ts')
      .map((c) => `${c.name} in ${c.file}`);
    expect(misplaced).toEqual([]);
  });

  it('every concrete error class has a stable machine code (a string literal or a closed union of them)', () => {
    const offending = classes
      .filter((c) => !c.abstract)
      .filter((c) => !c.codeType || (!isLiteralCode(c.codeType) && !(c.name in OPEN_CODES)))
      .map((c) => `${c.name} (${c.file}): code is ${c.codeType ? checker.typeToString(c.codeType) : 'missing'}`);
    expect(offending).toEqual([]);
  });

  it('error class names are unique across src (the name is the error’s `name`)', () => {
    const names = classes.map((c) => c.name);
    expect(names.filter((name, index) => names.indexOf(name) !== index)).toEqual([]);
  });

  it(`spells every ApplicationFailure type only in ${TABLE}`, () => {
    const elsewhere = stringLiterals()
      .filter((l) => l.file !== TABLE)
      .filter((l) => FAILURE_VALUES.has(l.text) || [...FAILURE_VALUES].some((value) => l.text.startsWith(`${value}:`)))
      .map((l) => `${l.file}:${l.line} '${l.text}'`);
    expect(elsewhere).toEqual([]);
  });

  it('every ApplicationFailure created in src takes its type from the table', () => {
    const creations = failureCreations();
    expect(creations.length).toBeGreaterThan(10);
    const offending = creations
      .filter(({ expression }) => {
        if (ts.isCallExpression(expression) && expression.expression.getText() === 'serviceProblemType') return false;
        if (!expression.getSourceFile()) return true;
        const type = checker.getTypeAtLocation(expression);
        const parts = type.isUnion() ? type.types : [type];
        return !parts.every((part) => part.isStringLiteral() && FAILURE_VALUES.has(part.value));
      })
      .map(({ where, expression }) => `${where}: type ${expression.getSourceFile() ? expression.getText() : '<none>'}`);
    expect(offending).toEqual([]);
  });

  it('the table has no value twice (two names for one failure would split the branches)', () => {
    const values = Object.values(FAILURE_TYPES);
    expect(new Set(values).size).toBe(values.length);
  });
});
