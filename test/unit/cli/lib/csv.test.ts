import { CliError } from '../../../../src/cli/lib/errors';
import { parseCsv, parseCsvLines, scanCsv } from '../../../../src/cli/lib/csv';

describe('CSV', () => {
  it('gives each row the line it starts on, a quoted field over two lines counting both', () => {
    expect(scanCsv('a,b\n"x\ny",z\n\nlast,"q ""r"""').rows).toEqual([
      { line: 1, cells: ['a', 'b'] },
      { line: 2, cells: ['x\ny', 'z'] },
      { line: 5, cells: ['last', 'q "r"'] },
    ]);
  });

  it('names the line and column where a quoted field that is never closed opens', () => {
    expect(scanCsv('a,"b\n')).toEqual({ rows: [], unclosed: { line: 1, column: 2 } });
    expect(scanCsv('h\nok\nx,y,"open\nmore').unclosed).toEqual({ line: 3, column: 3 });
    expect(() => parseCsvLines('h\n"open')).toThrow(
      new CliError('CSV line 2, column 1: a quoted field is not closed', 2),
    );
    expect(parseCsv('a , b\n')).toEqual([['a', 'b']]);
  });
});
