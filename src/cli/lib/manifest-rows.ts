import { scanCsv, type CsvRow } from './csv';
import { CliError } from './errors';
import { EXIT } from './exit';
import { scanJson } from './json-scan';
import { readJsonFile, readTextFile } from './spec-files';

/**
 * A manifest's rows as written, before any spec is loaded (docs/batches.md): CSV, JSON Lines or
 * JSON. Nothing is dropped quietly: a CSV row whose cells do not match its header, a header that
 * names a column twice, an empty `spec` cell, a JSON Lines line that is not JSON or gives a key
 * twice — each is a problem with its line and column, and every one is collected (not only the
 * first) so that the refusal lists them all.
 */

/** One row of a manifest as written, before its spec is loaded. */
export interface ManifestRow {
  /** Where the row is, for errors: `line 7` (CSV, JSON Lines) or `items.3` (JSON). */
  where: string;
  /** The row's line (CSV, JSON Lines) or item index (JSON): problems are listed in this order. */
  order: number;
  /** Where each column or key of the row is: CSV cells count from 1, JSON Lines characters from 1. */
  columns?: Record<string, number>;
  /** A spec file path (relative to the manifest) or an inline spec. */
  spec: string | Record<string, unknown>;
  name?: string;
  /** `<step>.<field>` → value (CSV cells are strings until applied; see applyOverrides). */
  overrides: Record<string, unknown>;
}

/** Something wrong with a manifest: where (`line 4, column 4`), the column or key it concerns, why. */
export interface RowProblem {
  where: string;
  /** The row's order (see ManifestRow.order); header problems have the header's line. */
  order: number;
  path?: string;
  message: string;
}

/** A manifest's rows: those that can be loaded, and the problems of the others. */
export interface ManifestRows {
  name?: string;
  concurrency?: number;
  /** The rows whose text is sound (their specs are still to be checked). */
  rows: ManifestRow[];
  /** Problems of single rows (each such row is refused). */
  problems: RowProblem[];
  /** Problems of a CSV header: no row can be read then. */
  headerProblems: RowProblem[];
  /** Rows in all, sound or not. */
  total: number;
}

const OVERRIDE_COLUMN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}\.[a-z_][a-z0-9_]*$/;
const ALLOWED = 'allowed: spec, name, and <step>.<field> overrides such as generate.prompt';

/** True for a `<step>.<field>` column or key. */
export function isOverride(column: string): boolean {
  return OVERRIDE_COLUMN.test(column);
}

/** `line 4, column 3` (or `line 4` when the column is not known). */
function placed(where: string, column: number | undefined): string {
  return column === undefined ? where : `${where}, column ${column}`;
}

/** One line of a refusal: `line 4, column 3: generate.prompt: reason`. */
export function formatProblem(problem: RowProblem): string {
  return `${problem.where}: ${problem.path !== undefined ? `${problem.path}: ` : ''}${problem.message}`;
}

/** A cell quoted for a message, cut at 40 characters. */
function shown(cell: string): string {
  return JSON.stringify(cell.length > 40 ? `${cell.slice(0, 40)}…` : cell);
}

/** The header's problems: no `spec` column, unknown columns, a column named twice. */
function headerProblems(header: CsvRow, columns: string[]): RowProblem[] {
  const problems: RowProblem[] = [];
  const at = (column: number) => `line ${header.line}, column ${column}`;
  if (!columns.includes('spec'))
    problems.push({
      where: `line ${header.line}`,
      order: header.line,
      message: `the header has no "spec" column (got ${header.cells.join(',')}; ${ALLOWED})`,
    });
  columns.forEach((column, index) => {
    const first = columns.indexOf(column);
    const path = column === '' ? undefined : (header.cells[index] as string);
    if (column === '')
      problems.push({ where: at(index + 1), order: header.line, message: `a column without a name (${ALLOWED})` });
    else if (first !== index)
      problems.push({
        where: at(index + 1),
        order: header.line,
        ...(path !== undefined ? { path } : {}),
        message: `named twice (column ${first + 1} too): one of the two cells of every row would be lost`,
      });
    else if (column !== 'spec' && column !== 'name' && !isOverride(column))
      problems.push({ where: at(index + 1), order: header.line, path: column, message: `unknown column (${ALLOWED})` });
  });
  return problems;
}

/** A data row's problem, if any: a cell count other than the header's, or an empty `spec` cell. */
function csvRowProblem(row: CsvRow, header: string[], specAt: number): RowProblem | null {
  const { line, cells } = row;
  if (cells.length > header.length)
    return {
      where: `line ${line}, column ${header.length + 1}`,
      order: line,
      message:
        `${cells.length} cells, the header has ${header.length} (${header.join(', ')}); the extra cell(s) ` +
        `${cells.slice(header.length).map(shown).join(', ')}: a cell holding a comma must be quoted ("A cat, in the rain")`,
    };
  if (cells.length < header.length)
    return {
      where: `line ${line}, column ${cells.length + 1}`,
      order: line,
      path: header.slice(cells.length).join(', '),
      message: `missing: the row has ${cells.length} cell(s), the header ${header.length} (an empty cell, a comma with nothing after it, keeps the spec's value)`,
    };
  if (specAt >= 0 && cells[specAt] === '')
    return {
      where: `line ${line}, column ${specAt + 1}`,
      order: line,
      path: 'spec',
      message: 'is empty (every row names its spec file)',
    };
  return null;
}

/** A sound CSV data row as a ManifestRow. */
function csvRow({ line, cells }: CsvRow, columns: string[]): ManifestRow {
  const where = `line ${line}`;
  const at: Record<string, number> = {};
  const overrides: Record<string, unknown> = {};
  let spec = '';
  let name: string | undefined;
  columns.forEach((column, index) => {
    const cell = cells[index] as string;
    at[column] = index + 1;
    if (column === 'spec') spec = cell;
    else if (column === 'name') name = cell === '' ? undefined : cell;
    // An empty cell keeps the spec's own value.
    else if (cell !== '') overrides[column] = cell;
  });
  return { where, order: line, columns: at, spec, overrides, ...(name ? { name } : {}) };
}

/** Rows of a CSV manifest text (see the module comment). */
export function csvRows(text: string): ManifestRows {
  const { rows: lines, unclosed } = scanCsv(text);
  const problems: RowProblem[] = [];
  if (unclosed)
    problems.push({
      where: `line ${unclosed.line}, column ${unclosed.column}`,
      order: unclosed.line,
      message: 'a quoted field is not closed (every line after it would be read into that cell)',
    });
  const [header, ...data] = lines;
  const total = data.length + (unclosed && header ? 1 : 0);
  if (!header) {
    if (unclosed) return { rows: [], problems: [], headerProblems: problems, total: 0 };
    throw new CliError(
      'CSV manifest: empty (expected a header row with the columns spec[,name][,<step>.<field>…])',
      EXIT.usage,
    );
  }
  const columns = header.cells.map((h) => (isOverride(h) ? h : h.toLowerCase()));
  const refusedHeader = headerProblems(header, columns);
  const specAt = columns.indexOf('spec');
  const rows: ManifestRow[] = [];
  for (const row of data) {
    const problem = csvRowProblem(row, header.cells, specAt);
    if (problem) problems.push(problem);
    else if (refusedHeader.length === 0) rows.push(csvRow(row, columns));
  }
  problems.sort((a, b) => a.order - b.order);
  return { rows, problems, headerProblems: refusedHeader, total };
}

/**
 * A row object of JSON or JSON Lines: `{spec, name?, "<step>.<field>"?…}`, a spec path, or an
 * inline spec (an object with `steps`); anything else is a problem.
 */
function objectRow(
  value: unknown,
  where: string,
  order: number,
  columns?: Record<string, number>,
): ManifestRow | RowProblem[] {
  const problem = (message: string, path?: string): RowProblem => ({
    where: placed(where, path === undefined ? undefined : columns?.[path]),
    order,
    ...(path !== undefined ? { path } : {}),
    message,
  });
  if (typeof value === 'string') return { where, order, spec: value, overrides: {} };
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return [problem('a row is a spec path, an inline spec or {"spec", "name"?, "<step>.<field>"?…}')];
  const record = value as Record<string, unknown>;
  // An inline spec (it has steps) is a row of its own.
  if ('steps' in record && !('spec' in record)) return { where, order, spec: record, overrides: {} };
  const { spec, name, ...rest } = record;
  const problems: RowProblem[] = [];
  if (spec === undefined) problems.push(problem('the row has no "spec" (a spec file path or an inline spec)'));
  else if (
    typeof spec === 'string' ? spec.trim() === '' : typeof spec !== 'object' || spec === null || Array.isArray(spec)
  )
    problems.push(problem('must be a spec file path or an inline spec', 'spec'));
  if (name !== undefined && typeof name !== 'string') problems.push(problem('must be a string', 'name'));
  for (const key of Object.keys(rest)) if (!isOverride(key)) problems.push(problem(`unknown key (${ALLOWED})`, key));
  if (problems.length > 0) return problems;
  return {
    where,
    order,
    ...(columns ? { columns } : {}),
    spec: spec as ManifestRow['spec'],
    overrides: rest,
    ...(name ? { name: name as string } : {}),
  };
}

/** Rows of a JSON Lines manifest text: one object a line; blank lines are skipped. */
export function jsonLinesRows(text: string): ManifestRows {
  const rows: ManifestRow[] = [];
  const problems: RowProblem[] = [];
  let total = 0;
  text.split('\n').forEach((raw, index) => {
    const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    if (line.trim() === '') return;
    total += 1;
    const n = index + 1;
    const scan = scanJson(line);
    if (scan.error) {
      problems.push({
        where: `line ${n}, column ${scan.error.at + 1}`,
        order: n,
        message: `not JSON: ${scan.error.reason}`,
      });
      return;
    }
    if (scan.repeated) {
      const { key, at, first } = scan.repeated;
      problems.push({
        where: `line ${n}, column ${at + 1}`,
        order: n,
        path: key,
        message: `the key is given twice in one object (column ${first + 1} too): JSON would keep only the last value`,
      });
      return;
    }
    const columns = Object.fromEntries([...scan.topKeys].map(([key, at]) => [key, at + 1]));
    const row = objectRow(JSON.parse(line) as unknown, `line ${n}`, n, columns);
    if (Array.isArray(row)) problems.push(...row);
    else rows.push(row);
  });
  return { rows, problems, headerProblems: [], total };
}

/** Rows of a JSON manifest: `{name?, concurrency?, items: [...]}` or the array alone. */
function jsonRows(file: string): ManifestRows {
  const raw = readJsonFile(file);
  const body = Array.isArray(raw) ? { items: raw } : (raw as Record<string, unknown> | null);
  if (!body || typeof body !== 'object' || !Array.isArray(body.items)) {
    throw new CliError(
      `${file}: a manifest is an array of items or an object with "items" (spec file paths, inline specs or rows)`,
      EXIT.usage,
    );
  }
  if (body.name !== undefined && typeof body.name !== 'string')
    throw new CliError(`${file}: name: must be a string`, EXIT.usage);
  if (body.concurrency !== undefined && !(Number.isInteger(body.concurrency) && (body.concurrency as number) >= 1)) {
    throw new CliError(`${file}: concurrency: must be a whole number ≥ 1`, EXIT.usage);
  }
  const rows: ManifestRow[] = [];
  const problems: RowProblem[] = [];
  (body.items as unknown[]).forEach((item, index) => {
    const row = objectRow(item, `items.${index}`, index);
    if (Array.isArray(row)) problems.push(...row);
    else rows.push(row);
  });
  return {
    rows,
    problems,
    headerProblems: [],
    total: body.items.length,
    ...(typeof body.name === 'string' ? { name: body.name } : {}),
    ...(typeof body.concurrency === 'number' ? { concurrency: body.concurrency } : {}),
  };
}

/** Reads a manifest file's rows (no spec is loaded yet); by extension: `.csv`, `.jsonl`/`.ndjson`, else JSON. */
export function readManifestRows(file: string): ManifestRows {
  const lower = file.toLowerCase();
  if (lower.endsWith('.csv')) return csvRows(readTextFile(file));
  if (lower.endsWith('.jsonl') || lower.endsWith('.ndjson')) return jsonLinesRows(readTextFile(file));
  return jsonRows(file);
}

/** Rows of a CSV manifest text with their lines; any problem is a CliError (exit 2) listing them all. */
export function csvManifestRows(text: string): Array<{ spec: string; name?: string; line: number }> {
  const { rows, problems, headerProblems: header } = csvRows(text);
  const all = [...header, ...problems];
  if (all.length > 0)
    throw new CliError(`CSV manifest:\n${all.map((p) => `  ${formatProblem(p)}`).join('\n')}`, EXIT.usage);
  return rows.map((row) => ({ spec: row.spec as string, line: row.order, ...(row.name ? { name: row.name } : {}) }));
}
