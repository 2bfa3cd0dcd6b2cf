import { CliError } from './errors';
import { EXIT } from './exit';

/**
 * CSV as RFC 4180 writes it: quoted fields may hold commas, `""` and line breaks; CRLF or LF; an
 * unquoted cell is trimmed, a quoted one kept as written; blank lines are skipped. Rows are returned
 * with the line each starts on (a quoted field over two lines counts both), so that a manifest's
 * problems can name the line; columns are counted in cells, from 1.
 */

/** One row: the line it starts on and its cells. */
export interface CsvRow {
  line: number;
  cells: string[];
}

/** What a scan read: every complete row, and where a quoted field that is never closed opens. */
export interface CsvScan {
  rows: CsvRow[];
  /** The quoted field that runs to the end of the text (its row is not in `rows`). */
  unclosed?: { line: number; column: number };
}

/** Reads CSV text into rows (see the module comment); never throws. */
export function scanCsv(text: string): CsvScan {
  const rows: CsvRow[] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  let wasQuoted = false;
  let line = 1;
  let rowLine = 1;
  let quoteLine = 1;
  const endField = () => {
    row.push(wasQuoted ? field : field.trim());
    field = '';
    wasQuoted = false;
  };
  const endRow = () => {
    endField();
    if (row.length > 1 || row[0] !== '') rows.push({ line: rowLine, cells: row });
    row = [];
  };
  for (let i = 0; i < text.length; i += 1) {
    const c = text[i];
    if (c === '\n') line += 1;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i += 1;
      } else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"' && field.trim() === '') {
      quoted = true;
      wasQuoted = true;
      quoteLine = line;
      field = '';
    } else if (c === ',') endField();
    else if (c === '\n') {
      endRow();
      rowLine = line;
    } else if (c !== '\r') field += c;
  }
  if (quoted) return { rows, unclosed: { line: quoteLine, column: row.length + 1 } };
  if (field !== '' || row.length > 0) endRow();
  return { rows };
}

/** scanCsv's rows; a quoted field that is never closed is a CliError (exit 2) naming its line and column. */
export function parseCsvLines(text: string): CsvRow[] {
  const { rows, unclosed } = scanCsv(text);
  if (unclosed)
    throw new CliError(
      `CSV line ${unclosed.line}, column ${unclosed.column}: a quoted field is not closed`,
      EXIT.usage,
    );
  return rows;
}

/** The cells of every row (see parseCsvLines). */
export function parseCsv(text: string): string[][] {
  return parseCsvLines(text).map((row) => row.cells);
}
