import * as fs from 'node:fs';
import * as path from 'node:path';
import ts from 'typescript';

/** Every .ts file under `dir`, sorted. */
export function tsFilesUnder(dir: string): string[] {
  return fs
    .readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.ts') && !name.endsWith('.d.ts'))
    .map((name) => path.join(dir, name))
    .sort();
}

/**
 * A TypeScript program over src/ alone, with the repository's compiler options, for the convention
 * tests that read the sources with the type checker (built once per test file).
 */
export function srcProgram(root: string): {
  program: ts.Program;
  checker: ts.TypeChecker;
  sourceFiles: ts.SourceFile[];
} {
  const configFile = ts.readConfigFile(path.join(root, 'tsconfig.json'), (file) => ts.sys.readFile(file));
  const { options } = ts.parseJsonConfigFileContent(configFile.config, ts.sys, root);
  const roots = tsFilesUnder(path.join(root, 'src'));
  const program = ts.createProgram(roots, { ...options, noEmit: true });
  const wanted = new Set(roots.map((file) => path.resolve(file)));
  const sourceFiles = program.getSourceFiles().filter((file) => wanted.has(path.resolve(file.fileName)));
  return { program, checker: program.getTypeChecker(), sourceFiles };
}
