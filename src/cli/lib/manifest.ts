import * as path from 'node:path';
import type { FieldError, UriRules } from '../../contract';
import { safeNameSchema, type PipelineSpec } from '../../spec/spec';
import { CliError, SpecFileError } from './errors';
import { EXIT } from './exit';
import { prepareSpec, readJsonFile, readTextFile, type SpecMedia } from './spec-files';

/**
 * Batch manifests (docs/batches.md): CSV (`.csv`), JSON Lines (`.jsonl`, `.ndjson`) or JSON (anything
 * else). Every row names a spec (`spec`: a spec file path relative to the manifest, or an inline
 * spec in JSON), optionally a `name`, and per-item overrides of step inputs as `<step>.<field>`
 * columns/keys (`generate.prompt`, `revoice.audio_url`). Local paths in override `*_url(s)` fields
 * are relative to the manifest and go into the media store like a spec's own.
 *
 * JSON: `{ "name"?, "concurrency"?, "items": [row | spec path | inline spec] }` or the array alone.
 * JSON Lines: one row object a line (`{"spec": "a.json", "name": "x", "generate.prompt": "…"}`).
 *
 * Every row is checked before anything starts; the errors of all bad rows (up to MAX_ROW_ERRORS)
 * are reported together, each with its line (item) and field path.
 */

/** A loaded manifest: resolved specs (media as references), and what the manifest itself says. */
export interface Manifest {
  name?: string;
  concurrency?: number;
  items: PipelineSpec[];
}

/** One row of a manifest as written, before its spec is loaded. */
export interface ManifestRow {
  /** Where the row is, for errors: `line 7` (CSV, JSON Lines) or `items.3` (JSON). */
  where: string;
  /** A spec file path (relative to the manifest) or an inline spec. */
  spec: string | Record<string, unknown>;
  name?: string;
  /** `<step>.<field>` → value (CSV cells are strings until applied; see applyOverrides). */
  overrides: Record<string, unknown>;
}

/** How many bad-row errors one refusal lists (the count of the rest is given). */
export const MAX_ROW_ERRORS = 50;

/** Parses CSV text (RFC 4180: quoted fields, `""` escapes, CRLF); blank lines are skipped. */
export function parseCsv(text: string): string[][] {
  return parseCsvLines(text).map((row) => row.cells);
}

/** parseCsv with the line each row starts on (a quoted field may span lines). */
export function parseCsvLines(text: string): Array<{ line: number; cells: string[] }> {
  const rows: Array<{ line: number; cells: string[] }> = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  let wasQuoted = false;
  let line = 1;
  let rowLine = 1;
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
      field = '';
    } else if (c === ',') endField();
    else if (c === '\n') {
      endRow();
      rowLine = line;
    } else if (c !== '\r') field += c;
  }
  if (quoted) throw new CliError(`CSV manifest line ${rowLine}: a quoted field is not closed`, EXIT.usage);
  if (field !== '' || row.length > 0) endRow();
  return rows;
}

const OVERRIDE_COLUMN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}\.[a-z_][a-z0-9_]*$/;

/** True for a `<step>.<field>` column or key. */
function isOverride(column: string): boolean {
  return OVERRIDE_COLUMN.test(column);
}

/** Rows of a CSV manifest; errors name the line and column. */
export function csvManifestRows(text: string): Array<{ spec: string; name?: string; line: number }> {
  return csvRows(text).map((row) => ({
    spec: row.spec as string,
    line: Number(row.where.slice('line '.length)),
    ...(row.name ? { name: row.name } : {}),
  }));
}

function csvRows(text: string): ManifestRow[] {
  const [header, ...rows] = parseCsvLines(text);
  if (!header)
    throw new CliError(
      'CSV manifest: empty (expected a header row with the columns spec[,name][,<step>.<field>…])',
      EXIT.usage,
    );
  const columns = header.cells.map((h) => (isOverride(h) ? h : h.toLowerCase()));
  const specAt = columns.indexOf('spec');
  const nameAt = columns.indexOf('name');
  if (specAt < 0)
    throw new CliError(
      `CSV manifest: the header must have a "spec" column (got ${header.cells.join(',')})`,
      EXIT.usage,
    );
  const unknown = columns.filter((c) => c !== 'spec' && c !== 'name' && !isOverride(c));
  if (unknown.length > 0)
    throw new CliError(
      `CSV manifest: unknown column(s) ${unknown.join(', ')} (allowed: spec, name, and <step>.<field> overrides such as generate.prompt)`,
      EXIT.usage,
    );
  return rows.map(({ line, cells }) => {
    const spec = cells[specAt] ?? '';
    if (spec === '') throw new CliError(`CSV manifest line ${line}: the spec column is empty`, EXIT.usage);
    const name = nameAt >= 0 ? cells[nameAt] : undefined;
    const overrides: Record<string, unknown> = {};
    columns.forEach((column, at) => {
      const cell = cells[at];
      // An empty cell keeps the spec's own value.
      if (isOverride(column) && cell !== undefined && cell !== '') overrides[column] = cell;
    });
    return { where: `line ${line}`, spec, overrides, ...(name ? { name } : {}) };
  });
}

/** A row object of JSON or JSON Lines: `{spec, name?, "<step>.<field>"?…}`; anything else is an error. */
function objectRow(value: unknown, where: string): ManifestRow {
  if (typeof value === 'string') return { where, spec: value, overrides: {} };
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new CliError(
      `${where}: a row is a spec path, an inline spec or {"spec", "name"?, "<step>.<field>"?…}`,
      EXIT.usage,
    );
  const record = value as Record<string, unknown>;
  // An inline spec (it has steps) is a row of its own.
  if ('steps' in record && !('spec' in record)) return { where, spec: record, overrides: {} };
  const { spec, name, ...rest } = record;
  if (typeof spec !== 'string' && (typeof spec !== 'object' || spec === null || Array.isArray(spec)))
    throw new CliError(`${where}.spec: must be a spec file path or an inline spec`, EXIT.usage);
  if (name !== undefined && typeof name !== 'string') throw new CliError(`${where}.name: must be a string`, EXIT.usage);
  const bad = Object.keys(rest).filter((key) => !isOverride(key));
  if (bad.length > 0)
    throw new CliError(
      `${where}: unknown key(s) ${bad.join(', ')} (allowed: spec, name, and <step>.<field> overrides such as generate.prompt)`,
      EXIT.usage,
    );
  return { where, spec: spec as ManifestRow['spec'], overrides: rest, ...(name ? { name } : {}) };
}

function jsonLinesRows(text: string): ManifestRow[] {
  const rows: ManifestRow[] = [];
  text.split('\n').forEach((raw, index) => {
    const line = raw.trim();
    if (line === '') return;
    let value: unknown;
    try {
      value = JSON.parse(line) as unknown;
    } catch (error) {
      throw new CliError(`JSON Lines manifest line ${index + 1}: not JSON (${(error as Error).message})`, EXIT.usage);
    }
    rows.push(objectRow(value, `line ${index + 1}`));
  });
  return rows;
}

/**
 * Turns a CSV cell into the value of `field`: JSON for an array or object (`[`/`{`), a number or
 * boolean where the spec's own value is one, a `|`-separated list for a `*_urls` field, else the text.
 */
export function cellValue(cell: string, field: string, current: unknown): unknown {
  const text = cell.trim();
  if (text.startsWith('[') || text.startsWith('{')) {
    try {
      return JSON.parse(text) as unknown;
    } catch {
      return cell;
    }
  }
  if (typeof current === 'number' && text !== '' && Number.isFinite(Number(text))) return Number(text);
  if (typeof current === 'boolean' && (text === 'true' || text === 'false')) return text === 'true';
  if (/_urls$/.test(field))
    return text
      .split('|')
      .map((part) => part.trim())
      .filter((part) => part !== '');
  return cell;
}

/**
 * Applies a row's `<step>.<field>` overrides to a spec (a fresh copy): the step must exist; local
 * paths in `*_url(s)` fields are made absolute against `manifestDir`. Returns the problems.
 */
export function applyOverrides(
  spec: Record<string, unknown>,
  overrides: Record<string, unknown>,
  manifestDir: string,
): FieldError[] {
  const errors: FieldError[] = [];
  const steps = Array.isArray(spec.steps) ? (spec.steps as Array<Record<string, unknown>>) : [];
  for (const [column, raw] of Object.entries(overrides)) {
    const dot = column.lastIndexOf('.');
    const stepId = column.slice(0, dot);
    const field = column.slice(dot + 1);
    const step = steps.find((s) => s?.id === stepId);
    if (!step) {
      errors.push({
        path: column,
        message: `the spec has no step "${stepId}" (its steps: ${steps.map((s) => String(s?.id)).join(', ') || 'none'})`,
      });
      continue;
    }
    const input =
      typeof step.input === 'object' && step.input !== null
        ? (step.input as Record<string, unknown>)
        : (step.input = {});
    let value = typeof raw === 'string' ? cellValue(raw, field, input[field]) : raw;
    if (/_urls?$/.test(field)) {
      const local = (v: unknown) =>
        typeof v === 'string' && !/^(https?:|data:)/i.test(v) ? path.resolve(manifestDir, v) : v;
      value = Array.isArray(value) ? value.map(local) : local(value);
    }
    input[field] = value;
  }
  return errors;
}

/** Reads a manifest file's rows (no spec is loaded yet). */
export function readManifestRows(file: string): { name?: string; concurrency?: number; rows: ManifestRow[] } {
  const lower = file.toLowerCase();
  if (lower.endsWith('.csv') || lower.endsWith('.jsonl') || lower.endsWith('.ndjson')) {
    const text = readTextFile(file);
    return { rows: lower.endsWith('.csv') ? csvRows(text) : jsonLinesRows(text) };
  }
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
  return {
    rows: (body.items as unknown[]).map((item, index) => objectRow(item, `items.${index}`)),
    ...(typeof body.name === 'string' ? { name: body.name } : {}),
    ...(typeof body.concurrency === 'number' ? { concurrency: body.concurrency } : {}),
  };
}

/**
 * Reads and checks a batch manifest (CSV, JSON Lines or JSON; see the module comment): every row's
 * spec loaded like `reelflow run` loads one (local media into the store, validated, each spec within
 * the payload budget), overrides applied, names unique. A row without a name gets its spec's name,
 * or `<spec name>-<row number>` when several rows share that spec name. Bad rows are all reported
 * in one CliError (exit 2, up to MAX_ROW_ERRORS of them, each `<file> <line>: <field path>: <reason>`);
 * nothing is started then. `reelflow batch` and `reelflow quote --batch` both load manifests here.
 */
export async function loadManifest(file: string, rules: UriRules | undefined, media: SpecMedia): Promise<Manifest> {
  const manifestDir = path.dirname(path.resolve(file));
  const { rows, ...options } = readManifestRows(file);
  if (rows.length === 0) throw new CliError(`${file}: the manifest has no items`, EXIT.usage);
  const shared: SpecMedia = { ...media, stored: media.stored ?? new Map() };
  const specFiles = new Map<string, unknown>();
  const problems: string[] = [];
  let bad = 0;
  const refuse = (where: string, errors: FieldError[]) => {
    bad += 1;
    for (const e of errors) if (problems.length < MAX_ROW_ERRORS) problems.push(`  ${where}: ${e.path}: ${e.message}`);
  };
  const loaded: Array<{ row: ManifestRow; spec: PipelineSpec }> = [];
  for (const row of rows) {
    let raw: unknown;
    let specDir = manifestDir;
    if (typeof row.spec === 'string') {
      const specFile = path.resolve(manifestDir, row.spec);
      if (!specFiles.has(specFile)) {
        try {
          specFiles.set(specFile, readJsonFile(specFile));
        } catch (error) {
          specFiles.set(specFile, error);
        }
      }
      const cached = specFiles.get(specFile);
      if (cached instanceof Error) {
        refuse(row.where, [{ path: 'spec', message: cached.message }]);
        continue;
      }
      raw = structuredClone(cached);
      specDir = path.dirname(specFile);
    } else raw = structuredClone(row.spec);
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
      refuse(row.where, [{ path: 'spec', message: 'is not a pipeline spec object' }]);
      continue;
    }
    const record = raw as Record<string, unknown>;
    const overrideErrors = applyOverrides(record, row.overrides, manifestDir);
    if (overrideErrors.length > 0) {
      refuse(row.where, overrideErrors);
      continue;
    }
    if (row.name !== undefined) record.name = row.name;
    try {
      loaded.push({ row, spec: await prepareSpec(record, row.where, specDir, rules, shared) });
    } catch (error) {
      if (error instanceof SpecFileError) refuse(row.where, error.errors);
      else if (error instanceof CliError) refuse(row.where, [{ path: '(spec)', message: error.message }]);
      else throw error;
    }
  }
  // Unnamed rows that share a spec name are told apart by their row number.
  const bySpecName = new Map<string, number>();
  for (const { spec } of loaded) bySpecName.set(spec.name, (bySpecName.get(spec.name) ?? 0) + 1);
  const seen = new Map<string, string>();
  loaded.forEach(({ row, spec }, index) => {
    if (row.name === undefined && (bySpecName.get(spec.name) ?? 0) > 1) {
      const name = `${spec.name}-${index + 1}`;
      if (!safeNameSchema.safeParse(name).success) {
        refuse(row.where, [
          { path: 'name', message: `"${name}" is too long for a pipeline name; give the row a name` },
        ]);
        return;
      }
      spec.name = name;
    }
    const earlier = seen.get(spec.name);
    if (earlier !== undefined)
      refuse(row.where, [
        { path: 'name', message: `"${spec.name}" is the name of ${earlier} too (pipeline names are workflow ids)` },
      ]);
    else seen.set(spec.name, row.where);
  });
  if (bad > 0) {
    const more =
      bad > problems.length ? `\n  … (${bad} bad row(s) in all; the first ${MAX_ROW_ERRORS} problems shown)` : '';
    throw new CliError(
      `${file}: ${bad} of ${rows.length} row(s) refused; nothing was started:\n${problems.join('\n')}${more}`,
      EXIT.usage,
    );
  }
  return { items: loaded.map(({ spec }) => spec), ...options };
}
