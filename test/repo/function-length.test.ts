import * as path from 'node:path';
import { functionLengths, functionLengthsIn, MAX_FUNCTION_LINES } from '../../scripts/function-lengths';

/**
 * Functions small enough to read at once: none in src/ over MAX_FUNCTION_LINES lines (nested functions
 * count towards the function that holds them). `npx tsx scripts/function-lengths.ts` lists the longest.
 */

const ROOT = path.resolve(__dirname, '../..');

describe('function length', () => {
  it(`no function in src/ is over ${MAX_FUNCTION_LINES} lines`, () => {
    const long = functionLengths(ROOT, 'src')
      .filter((row) => row.lines > MAX_FUNCTION_LINES)
      .map((row) => `${row.file}:${row.line} ${row.name} (${row.lines} lines)`);
    expect(long).toEqual([]);
  });

  it('measures declarations, arrow functions, methods and accessors from first line to last', () => {
    const text = [
      'export function outer(): number {', // 1
      '  const inner = () => {', // 2
      '    return 1;', // 3
      '  };', // 4
      '  return inner();', // 5
      '}', // 6
      'class Box {', // 7
      '  constructor(readonly n: number) {}', // 8
      '  get twice(): number {', // 9
      '    return this.n * 2;', // 10
      '  }', // 11
      '  add(m: number): number {', // 12
      '    return this.n + m;', // 13
      '  }', // 14
      '}', // 15
      'declare function signatureOnly(): void;', // 16
      'const table = { run: function () {', // 17
      '  return 0;', // 18
      '} };', // 19
    ].join('\n');
    const rows = functionLengthsIn('probe.ts', text).map(({ name, line, lines }) => ({ name, line, lines }));
    expect(rows).toEqual([
      { name: 'outer', line: 1, lines: 6 },
      { name: 'inner', line: 2, lines: 3 },
      { name: 'constructor', line: 8, lines: 1 },
      { name: 'twice', line: 9, lines: 3 },
      { name: 'add', line: 12, lines: 3 },
      { name: 'run', line: 17, lines: 3 },
    ]);
  });
});
