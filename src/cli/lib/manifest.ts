import * as fs from 'node:fs';
import * as path from 'node:path';
import type { UriRules } from '../../contract';
import type { PipelineSpec } from '../../spec/spec';
import { CliError } from './errors';
import { EXIT } from './exit';
import { guardPayload, prepareSpec, readJsonFile, type SpecMedia } from './spec-files';

/**
 * Batch manifests, JSON or CSV (by extension `.csv`; anything else is read as JSON).
 *
 * JSON: `{ "name"?: string, "concurrency"?: number, "items": [ <spec file path> | <inline spec> ] }`
 * or just the array of items. CSV: a header row with the columns `spec` (path of a spec file,
 * required) and `name` (optional; overrides the spec's name so one spec file can run several times).
 * Paths are relative to the manifest.
 */

export interface Manifest {
  name?: string;
  concurrency?: number;
  items: PipelineSpec[];
}

/** Parses CSV text (RFC 4180: quoted fields, `""` escapes, CRLF); blank lines are skipped. */
export function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  let wasQuoted = false;
  const endField = () => {
    row.push(wasQuoted ? field : field.trim());
    field = '';
    wasQuoted = false;
  };
  const endRow = () => {
    endField();
    if (row.length > 1 || row[0] !== '') rows.push(row);
    row = [];
  };
  for (let i = 0; i < text.length; i += 1) {
    const c = text[i];
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
    else if (c === '\n') endRow();
    else if (c !== '\r') field += c;
  }
  if (quoted) throw new CliError('CSV manifest: a quoted field is not closed', EXIT.usage);
  if (field !== '' || row.length > 0) endRow();
  return rows;
}

/** Rows of a CSV manifest as `{spec, name?}` records; errors name the line and column. */
export function csvManifestRows(text: string): Array<{ spec: string; name?: string; line: number }> {
  const [header, ...rows] = parseCsv(text);
  if (!header)
    throw new CliError('CSV manifest: empty (expected a header row with the columns spec[,name])', EXIT.usage);
  const columns = header.map((h) => h.toLowerCase());
  const specAt = columns.indexOf('spec');
  const nameAt = columns.indexOf('name');
  if (specAt < 0)
    throw new CliError(`CSV manifest: the header must have a "spec" column (got ${header.join(',')})`, EXIT.usage);
  const unknown = columns.filter((c) => c !== 'spec' && c !== 'name');
  if (unknown.length > 0)
    throw new CliError(`CSV manifest: unknown column(s) ${unknown.join(', ')} (allowed: spec, name)`, EXIT.usage);
  return rows.map((cells, index) => {
    const line = index + 2;
    const spec = cells[specAt] ?? '';
    if (spec === '') throw new CliError(`CSV manifest line ${line}: the spec column is empty`, EXIT.usage);
    const name = nameAt >= 0 ? cells[nameAt] : undefined;
    return { spec, line, ...(name ? { name } : {}) };
  });
}

function loadItem(
  item: unknown,
  label: string,
  baseDir: string,
  rules: UriRules | undefined,
  media: SpecMedia,
  nameOverride?: string,
): Promise<PipelineSpec> {
  if (typeof item === 'string') {
    const file = path.resolve(baseDir, item);
    const raw = readJsonFile(file);
    if (nameOverride && typeof raw === 'object' && raw !== null) (raw as Record<string, unknown>).name = nameOverride;
    return prepareSpec(raw, `${label} (${item})`, path.dirname(file), rules, media);
  }
  return prepareSpec(item, label, baseDir, rules, media);
}

async function inOrder<T, R>(items: T[], load: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const loaded: R[] = [];
  for (const [index, item] of items.entries()) loaded.push(await load(item, index));
  return loaded;
}

/**
 * Reads and validates a manifest; every spec is loaded like `reelflow run` loads one (media into
 * the store), and the batch input as a whole must fit the payload budget.
 */
export async function loadManifest(file: string, rules: UriRules | undefined, media: SpecMedia): Promise<Manifest> {
  const baseDir = path.dirname(path.resolve(file));
  let manifest: Manifest;
  if (file.toLowerCase().endsWith('.csv')) {
    let text: string;
    try {
      text = fs.readFileSync(file, 'utf8');
    } catch (error) {
      throw new CliError(
        `cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
        EXIT.usage,
      );
    }
    manifest = {
      items: await inOrder(csvManifestRows(text), (row) =>
        loadItem(row.spec, `${file} line ${row.line}`, baseDir, rules, media, row.name),
      ),
    };
  } else {
    const raw = readJsonFile(file);
    const body = Array.isArray(raw) ? { items: raw } : (raw as Record<string, unknown> | null);
    if (!body || typeof body !== 'object' || !Array.isArray(body.items)) {
      throw new CliError(
        `${file}: a manifest is an array of items or an object with "items" (spec file paths or inline specs)`,
        EXIT.usage,
      );
    }
    if (body.name !== undefined && typeof body.name !== 'string')
      throw new CliError(`${file}: name: must be a string`, EXIT.usage);
    if (body.concurrency !== undefined && !(Number.isInteger(body.concurrency) && (body.concurrency as number) >= 1)) {
      throw new CliError(`${file}: concurrency: must be a whole number ≥ 1`, EXIT.usage);
    }
    manifest = {
      items: await inOrder(body.items as unknown[], (item, index) =>
        loadItem(item, `${file} items.${index}`, baseDir, rules, media),
      ),
      ...(typeof body.name === 'string' ? { name: body.name } : {}),
      ...(typeof body.concurrency === 'number' ? { concurrency: body.concurrency } : {}),
    };
  }
  if (manifest.items.length === 0) throw new CliError(`${file}: the manifest has no items`, EXIT.usage);
  const seen = new Set<string>();
  for (const spec of manifest.items) {
    if (seen.has(spec.name))
      throw new CliError(
        `${file}: two items are named "${spec.name}" (names must be unique; set a name column/field)`,
        EXIT.usage,
      );
    seen.add(spec.name);
  }
  guardPayload(manifest.items, `batch manifest ${file}`);
  return manifest;
}
