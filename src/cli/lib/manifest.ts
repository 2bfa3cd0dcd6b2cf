import * as path from 'node:path';
import type { FieldError, UriRules } from '../../contract';
import { safeNameSchema, type PipelineSpec } from '../../pipeline-spec/spec';
import { CliError, SpecFileError } from './errors';
import { EXIT } from './exit';
import { formatProblem, readManifestRows, type ManifestRow, type RowProblem } from './manifest-rows';
import { prepareSpec, readJsonFile, type SpecMedia } from './spec-files';

export { parseCsv } from './csv';
export { csvManifestRows } from './manifest-rows';

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
 * Every row is checked before anything starts; the problems of all bad rows (up to MAX_ROW_ERRORS)
 * are reported together, each with its line and column (JSON: its item) and field path. The rows as
 * written are read in manifest-rows.ts; the specs they name are loaded here.
 */

/** A loaded manifest: resolved specs (media as references), and what the manifest itself says. */
export interface Manifest {
  name?: string;
  concurrency?: number;
  items: PipelineSpec[];
}

/** How many bad-row errors one refusal lists (the count of the rest is given). */
export const MAX_ROW_ERRORS = 50;

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
    // `<step>.each`: a fan-out step's items (version 2), a JSON list in the cell.
    if (field === 'each') {
      const items = eachValue(raw);
      if (items) step.each = items;
      else errors.push({ path: column, message: 'must be a JSON list of items, such as [{"prompt": "a cat"}]' });
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

/** The items a `<step>.each` cell or key gives (a JSON list), or undefined when it is not a list. */
function eachValue(raw: unknown): unknown[] | undefined {
  let value = raw;
  if (typeof raw === 'string') {
    try {
      value = JSON.parse(raw) as unknown;
    } catch {
      return undefined;
    }
  }
  return Array.isArray(value) ? value : undefined;
}

/** The refusal of a manifest: every problem in row order (up to MAX_ROW_ERRORS), exit 2. */
function refusal(file: string, header: RowProblem[], problems: RowProblem[], total: number): CliError {
  const sorted = [...problems].sort((a, b) => a.order - b.order);
  const bad = new Set(sorted.map((p) => p.order)).size;
  const all = [...header, ...sorted];
  const head =
    header.length > 0
      ? `${file}: the header is refused, so no row can be read; nothing was started:`
      : `${file}: ${bad} of ${total} row(s) refused; nothing was started:`;
  const shown = all.slice(0, MAX_ROW_ERRORS).map((p) => `  ${formatProblem(p)}`);
  const more =
    all.length > MAX_ROW_ERRORS ? `\n  … (${bad} bad row(s) in all; the first ${MAX_ROW_ERRORS} problems shown)` : '';
  return new CliError(`${head}\n${shown.join('\n')}${more}`, EXIT.usage);
}

/**
 * A row's field errors as problems, placed at the column they name when the row has it: the column
 * itself (`generate.prompt`, `spec`, `name`), or the override column an error inside the spec comes
 * from (`steps.0.input.image_urls.1` of step `generate` → the `generate.image_urls` column).
 */
function rowProblems(row: ManifestRow, errors: FieldError[], spec?: Record<string, unknown>): RowProblem[] {
  const steps = Array.isArray(spec?.steps) ? (spec.steps as Array<{ id?: unknown } | null>) : [];
  const columnOf = (at: string): number | undefined => {
    if (row.columns?.[at] !== undefined) return row.columns[at];
    const inSpec = /^steps\.(\d+)\.input\.([A-Za-z0-9_]+)/.exec(at);
    const step = inSpec ? steps[Number(inSpec[1])] : undefined;
    return inSpec && typeof step?.id === 'string' ? row.columns?.[`${step.id}.${inSpec[2]}`] : undefined;
  };
  return errors.map((e) => {
    const column = columnOf(e.path);
    return {
      where: column === undefined ? row.where : `${row.where}, column ${column}`,
      order: row.order,
      path: e.path,
      message: e.message,
    };
  });
}

/** A row's spec as a fresh object: its file read once per manifest (cached), or its inline spec. */
function rowSpec(
  row: ManifestRow,
  manifestDir: string,
  specFiles: Map<string, unknown>,
): { raw: unknown; specDir: string } | FieldError {
  if (typeof row.spec !== 'string') return { raw: structuredClone(row.spec), specDir: manifestDir };
  const specFile = path.resolve(manifestDir, row.spec);
  if (!specFiles.has(specFile)) {
    try {
      specFiles.set(specFile, readJsonFile(specFile));
    } catch (error) {
      specFiles.set(specFile, error);
    }
  }
  const cached = specFiles.get(specFile);
  if (cached instanceof Error) return { path: 'spec', message: cached.message };
  return { raw: structuredClone(cached), specDir: path.dirname(specFile) };
}

/** Loads one sound row's spec (overrides applied, media stored, validated); its problems otherwise. */
async function loadRow(
  row: ManifestRow,
  manifestDir: string,
  specFiles: Map<string, unknown>,
  rules: UriRules | undefined,
  media: SpecMedia,
): Promise<PipelineSpec | RowProblem[]> {
  const found = rowSpec(row, manifestDir, specFiles);
  if (!('raw' in found)) return rowProblems(row, [found]);
  const { raw, specDir } = found;
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    return rowProblems(row, [{ path: 'spec', message: 'is not a pipeline spec object' }]);
  const record = raw as Record<string, unknown>;
  const overrideErrors = applyOverrides(record, row.overrides, manifestDir);
  if (overrideErrors.length > 0) return rowProblems(row, overrideErrors);
  if (row.name !== undefined) record.name = row.name;
  try {
    return await prepareSpec(record, row.where, specDir, rules, media);
  } catch (error) {
    if (error instanceof SpecFileError) return rowProblems(row, error.errors, record);
    if (error instanceof CliError) return rowProblems(row, [{ path: '(spec)', message: error.message }]);
    throw error;
  }
}

/**
 * Reads and checks a batch manifest (CSV, JSON Lines or JSON; see manifest-rows.ts): every row's
 * text (cells against the header, JSON), then every sound row's spec loaded like `reelflow run`
 * loads one (local media into the store, validated, inputs under the address rules, each spec
 * within the payload budget), overrides applied, names unique. A row without a name gets its spec's
 * name, or `<spec name>-<row number>` when several rows share that spec name. Bad rows are all
 * reported in one CliError (exit 2, up to MAX_ROW_ERRORS problems in row order, each
 * `line 4, column 3: <field path>: <reason>`); nothing is started then. `reelflow batch` and
 * `reelflow quote --batch` both load manifests here.
 */
export async function loadManifest(file: string, rules: UriRules | undefined, media: SpecMedia): Promise<Manifest> {
  const manifestDir = path.dirname(path.resolve(file));
  const { rows, problems, headerProblems, total, ...options } = readManifestRows(file);
  if (headerProblems.length > 0) throw refusal(file, headerProblems, problems, total);
  if (total === 0) throw new CliError(`${file}: the manifest has no items`, EXIT.usage);
  const shared: SpecMedia = { ...media, stored: media.stored ?? new Map() };
  const specFiles = new Map<string, unknown>();
  const loaded: Array<{ row: ManifestRow; spec: PipelineSpec }> = [];
  for (const row of rows) {
    const spec = await loadRow(row, manifestDir, specFiles, rules, shared);
    if (Array.isArray(spec)) problems.push(...spec);
    else loaded.push({ row, spec });
  }
  problems.push(...nameProblems(loaded));
  if (problems.length > 0) throw refusal(file, [], problems, total);
  return { items: loaded.map(({ spec }) => spec), ...options };
}

/**
 * Names the unnamed rows that share a spec name by their row number, and refuses a name given
 * twice (pipeline names are workflow ids).
 */
function nameProblems(loaded: Array<{ row: ManifestRow; spec: PipelineSpec }>): RowProblem[] {
  const problems: RowProblem[] = [];
  const bySpecName = new Map<string, number>();
  for (const { spec } of loaded) bySpecName.set(spec.name, (bySpecName.get(spec.name) ?? 0) + 1);
  const seen = new Map<string, string>();
  loaded.forEach(({ row, spec }, index) => {
    if (row.name === undefined && (bySpecName.get(spec.name) ?? 0) > 1) {
      const name = `${spec.name}-${index + 1}`;
      if (!safeNameSchema.safeParse(name).success) {
        problems.push(
          ...rowProblems(row, [
            { path: 'name', message: `"${name}" is too long for a pipeline name; give the row a name` },
          ]),
        );
        return;
      }
      spec.name = name;
    }
    const earlier = seen.get(spec.name);
    if (earlier !== undefined)
      problems.push(
        ...rowProblems(row, [
          { path: 'name', message: `"${spec.name}" is the name of ${earlier} too (pipeline names are workflow ids)` },
        ]),
      );
    else seen.set(spec.name, row.where);
  });
  return problems;
}
