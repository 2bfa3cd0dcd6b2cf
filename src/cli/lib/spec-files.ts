import * as fs from 'node:fs';
import * as path from 'node:path';
import { formatPath, MEDIA_LIMITS, type FieldError, type UriRules } from '../../contract';
import type { MediaRef } from '../../media/reference';
import { putMediaBytes, putMediaFile, type MediaStore } from '../../media/store';
import { PayloadBudgetError } from '../../pipeline-spec/errors';
import { assertWithinBudget, jsonBytes } from '../../pipeline-spec/payload-budget';
import { DEFAULT_CLI_ARCHIVE, validatePipelineSpec, type PipelineSpec } from '../../pipeline-spec/spec';
import { stepKindKeyOf } from '../../pipeline-spec/steps/match';
import { OP_MEDIA_FIELDS } from '../../pipeline-spec/steps/op-types';
import { CliError, SpecFileError } from './errors';
import { EXIT } from './exit';
import { inputAddressProblems } from './input-addresses';

/**
 * Loading a pipeline spec from disk for the CLI: JSON; local file paths in URL fields, and data URIs
 * over MEDIA_LIMITS.inlineDataUriMaxChars, put into the media store and replaced by references
 * (workflows carry references, never bytes); validated (path + reason per error, exit 2); and the
 * size guard (a spec Temporal would refuse or replay at length is refused before anything starts).
 */

/** Where the CLI puts local media: the configured store; the pipeline name becomes the referrer. */
export interface SpecMedia {
  store: MediaStore;
  /**
   * Files stored so far, by absolute path (a manifest's rows often name the same file: it is hashed
   * and copied once; its first pipeline is its referrer, the batch is added by `reelflow batch`).
   */
  stored?: Map<string, Promise<MediaRef>>;
}

const MIME_BY_EXTENSION: Record<string, string> = {
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.webp': 'image/webp',
  '.gif': 'image/gif',
  '.wav': 'audio/wav',
  '.mp3': 'audio/mpeg',
  '.m4a': 'audio/mp4',
  '.aac': 'audio/aac',
  '.ogg': 'audio/ogg',
  '.flac': 'audio/flac',
  '.mp4': 'video/mp4',
  '.mov': 'video/quicktime',
  '.webm': 'video/webm',
  '.mkv': 'video/x-matroska',
};

/** True for a field name that carries media URLs (`video_url`, `image_urls`, ...). */
function isUrlField(key: string): boolean {
  return /_urls?$/.test(key);
}

function isLocalPath(value: string): boolean {
  return !/^(https?:|data:)/i.test(value);
}

/** Reads a UTF-8 file; unreadable → CliError exit 2 naming the file and the reason. */
export function readTextFile(file: string): string {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch (error) {
    throw new CliError(
      `cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
      EXIT.usage,
    );
  }
}

/** Reads a JSON file; unreadable or malformed → CliError exit 2 naming the file. */
export function readJsonFile(file: string): unknown {
  const text = readTextFile(file);
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new CliError(`${file} is not valid JSON: ${(error as Error).message}`, EXIT.usage);
  }
}

const DATA_URI =
  /^data:([a-z0-9!#$&^_.+-]+\/[a-z0-9!#$&^_.+-]+)(?:;[a-z0-9-]+=[^;,]+)*;base64,([A-Za-z0-9+/]*={0,2})$/i;

/** Every string in a URL field of a step's input, with its location and a setter. */
function urlFieldValues(spec: unknown): { value: string; at: (string | number)[]; set: (value: unknown) => void }[] {
  const found: { value: string; at: (string | number)[]; set: (value: unknown) => void }[] = [];
  if (typeof spec !== 'object' || spec === null || !Array.isArray((spec as { steps?: unknown }).steps)) return found;
  (spec as { steps: unknown[] }).steps.forEach((step, index) => {
    const input = (step as { input?: unknown } | null)?.input;
    if (typeof input !== 'object' || input === null || Array.isArray(input)) return;
    const record = input as Record<string, unknown>;
    // An operation names its media fields plainly (`video`, `videos`); a model's end in `_url(s)`.
    const operation = stepKindKeyOf(step as Record<string, unknown>) === 'op';
    for (const [key, value] of Object.entries(record)) {
      if (operation ? !OP_MEDIA_FIELDS.includes(key) : !isUrlField(key)) continue;
      if (typeof value === 'string')
        found.push({ value, at: ['steps', index, 'input', key], set: (v) => (record[key] = v) });
      else if (Array.isArray(value)) {
        value.forEach((item, i) => {
          if (typeof item === 'string')
            found.push({ value: item, at: ['steps', index, 'input', key, i], set: (v) => (value[i] = v) });
        });
      }
    }
  });
  return found;
}

function pipelineNameOf(spec: unknown): string | undefined {
  const name = (spec as { name?: unknown } | null)?.name;
  return typeof name === 'string' && name.length > 0 ? name : undefined;
}

/**
 * Puts local files named in URL fields (relative to `baseDir`) into the store, and data URIs longer
 * than `inlineMax` characters, replacing each by its reference; then, while the spec is still over
 * the payload budget, the largest remaining data URIs too. Returns the errors (missing file, unknown
 * type) with their paths; nothing is half-replaced when there are errors (files are content-addressed,
 * so storing one twice is harmless).
 */
export async function storeLocalMedia(
  spec: unknown,
  baseDir: string,
  media: SpecMedia,
  inlineMax: number = MEDIA_LIMITS.inlineDataUriMaxChars,
): Promise<FieldError[]> {
  const errors: FieldError[] = [];
  const pipeline = pipelineNameOf(spec);
  const fields = urlFieldValues(spec);
  const replacements: { set: (value: unknown) => void; ref: MediaRef }[] = [];
  const inline: typeof fields = [];
  for (const field of fields) {
    const where = formatPath(field.at);
    if (field.value.startsWith('data:')) {
      inline.push(field);
      continue;
    }
    if (!isLocalPath(field.value)) continue;
    const file = path.resolve(baseDir, field.value);
    const mime = MIME_BY_EXTENSION[path.extname(file).toLowerCase()];
    let stat: fs.Stats;
    try {
      stat = fs.statSync(file);
      if (!stat.isFile()) throw new Error('not a file');
    } catch {
      errors.push({ path: where, message: `is neither an https URL, a data URI nor a readable local file (${file})` });
      continue;
    }
    if (!mime) {
      errors.push({
        path: where,
        message: `local file ${file}: unknown media type (use one of ${Object.keys(MIME_BY_EXTENSION).join(' ')})`,
      });
      continue;
    }
    if (stat.size > MEDIA_LIMITS.maxObjectBytes) {
      errors.push({
        path: where,
        message: `local file ${file} is ${stat.size} bytes, more than the ${MEDIA_LIMITS.maxObjectBytes} a media object may have`,
      });
      continue;
    }
    let stored = media.stored?.get(file);
    if (!stored) {
      stored = putMediaFile(media.store, file, mime, pipeline);
      media.stored?.set(file, stored);
    }
    replacements.push({ set: field.set, ref: await stored });
  }
  if (errors.length > 0) return errors;
  for (const { set, ref } of replacements) set(ref);
  // Data URIs: the long ones always, then the largest until the spec fits the payload budget.
  inline.sort((a, b) => b.value.length - a.value.length);
  for (const field of inline) {
    if (field.value.length <= inlineMax && jsonBytes(spec) <= MEDIA_LIMITS.payloadBudgetBytes) break;
    const match = DATA_URI.exec(field.value);
    if (!match) continue; // left for validation to name
    field.set(
      await putMediaBytes(media.store, Buffer.from(match[2] ?? '', 'base64'), (match[1] ?? '').toLowerCase(), pipeline),
    );
  }
  return errors;
}

/** Validates an in-memory spec (file paths relative to `baseDir`), storing its media; throws SpecFileError or CliError (size guard). */
export async function prepareSpec(
  raw: unknown,
  label: string,
  baseDir: string,
  rules: UriRules | undefined,
  media: SpecMedia,
): Promise<PipelineSpec> {
  // Outputs a later step or the user still needs are archived unless the spec says otherwise.
  if (typeof raw === 'object' && raw !== null && !Array.isArray(raw) && !('archive' in raw))
    (raw as Record<string, unknown>).archive = DEFAULT_CLI_ARCHIVE;
  const fileErrors = await storeLocalMedia(raw, baseDir, media);
  if (fileErrors.length > 0) throw new SpecFileError(label, fileErrors);
  const checked = validatePipelineSpec(raw, rules);
  if (!checked.ok) throw new SpecFileError(label, checked.errors);
  const refused = inputAddressProblems(checked.value, rules);
  if (refused.length > 0) throw new SpecFileError(label, refused);
  guardPayload(checked.value, `pipeline spec ${label}`);
  return checked.value;
}

/** The size guard at the CLI edge: PayloadBudgetError becomes a usage error (exit 2) naming the fields. */
export function guardPayload(value: unknown, label: string): void {
  try {
    assertWithinBudget(value, label);
  } catch (error) {
    if (error instanceof PayloadBudgetError) throw new CliError(error.message, EXIT.usage);
    throw error;
  }
}

/** Reads a spec file, stores its media and validates it. */
export function loadSpecFile(file: string, rules: UriRules | undefined, media: SpecMedia): Promise<PipelineSpec> {
  return prepareSpec(readJsonFile(file), file, path.dirname(path.resolve(file)), rules, media);
}
