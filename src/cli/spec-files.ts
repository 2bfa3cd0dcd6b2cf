import * as fs from 'node:fs';
import * as path from 'node:path';
import { formatPath, type FieldError, type UriRules } from '../contract';
import { validatePipelineSpec, type PipelineSpec } from '../pipeline/spec';
import { CliError, EXIT } from './exit';

/**
 * Loading a pipeline spec from disk for the CLI: JSON, local file paths in URL fields turned into
 * base64 data URIs, then validated (path + reason per error, exit 2).
 */

/**
 * Largest local file turned into a data URI, and largest total per step (raw bytes). Base64 adds a
 * third, so a step's body stays under the local service's 50 MiB request limit; larger media belong
 * on an https URL (docs/decisions/cli.md).
 */
export const DATA_URI_LIMITS = { fileBytes: 25 * 1024 * 1024, stepBytes: 36 * 1024 * 1024 } as const;

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

/** An invalid spec: every error with its path; exit code 2. */
export class SpecFileError extends CliError {
  constructor(
    readonly file: string,
    readonly errors: FieldError[],
  ) {
    super(`invalid pipeline spec ${file}:\n${errors.map((e) => `  ${e.path}: ${e.message}`).join('\n')}`, EXIT.usage);
    this.name = 'SpecFileError';
  }
}

/** True for a field name that carries media URLs (`video_url`, `image_urls`, ...). */
function isUrlField(key: string): boolean {
  return /_urls?$/.test(key);
}

function isLocalPath(value: string): boolean {
  return !/^(https?:|data:)/i.test(value);
}

/** Reads a JSON file; unreadable or malformed → CliError exit 2 naming the file. */
export function readJsonFile(file: string): unknown {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (error) {
    throw new CliError(`cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`, EXIT.usage);
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new CliError(`${file} is not valid JSON: ${(error as Error).message}`, EXIT.usage);
  }
}

/**
 * Replaces local file paths in URL fields of every step's input with data URIs (relative paths are
 * relative to `baseDir`). Returns the errors (missing file, unknown type, too large) with their paths.
 */
export function inlineLocalFiles(spec: unknown, baseDir: string): FieldError[] {
  const errors: FieldError[] = [];
  if (typeof spec !== 'object' || spec === null || !Array.isArray((spec as { steps?: unknown }).steps)) return errors;
  ((spec as { steps: unknown[] }).steps).forEach((step, index) => {
    const input = (step as { input?: unknown } | null)?.input;
    if (typeof input !== 'object' || input === null || Array.isArray(input)) return;
    let stepBytes = 0;
    const convert = (value: string, at: (string | number)[]): string => {
      const where = formatPath(['steps', index, 'input', ...at]);
      const file = path.resolve(baseDir, value);
      const mime = MIME_BY_EXTENSION[path.extname(file).toLowerCase()];
      let size: number;
      try {
        const stat = fs.statSync(file);
        if (!stat.isFile()) throw new Error('not a file');
        size = stat.size;
      } catch {
        errors.push({ path: where, message: `is neither an https URL, a data URI nor a readable local file (${file})` });
        return value;
      }
      if (!mime) {
        errors.push({ path: where, message: `local file ${file}: unknown media type (use one of ${Object.keys(MIME_BY_EXTENSION).join(' ')})` });
        return value;
      }
      if (size > DATA_URI_LIMITS.fileBytes) {
        errors.push({ path: where, message: `local file ${file} is ${size} bytes, more than the ${DATA_URI_LIMITS.fileBytes} that can be sent as a data URI; host it and give an https URL` });
        return value;
      }
      stepBytes += size;
      return `data:${mime};base64,${fs.readFileSync(file).toString('base64')}`;
    };
    const record = input as Record<string, unknown>;
    for (const [key, value] of Object.entries(record)) {
      if (!isUrlField(key)) continue;
      if (typeof value === 'string' && isLocalPath(value)) record[key] = convert(value, [key]);
      else if (Array.isArray(value)) {
        record[key] = value.map((item, i) => (typeof item === 'string' && isLocalPath(item) ? convert(item, [key, i]) : item));
      }
    }
    if (stepBytes > DATA_URI_LIMITS.stepBytes) {
      errors.push({ path: formatPath(['steps', index, 'input']), message: `local files add up to ${stepBytes} bytes, more than the ${DATA_URI_LIMITS.stepBytes} one request can carry as data URIs` });
    }
  });
  return errors;
}

/** Validates an in-memory spec (file paths already relative to `baseDir`); throws SpecFileError. */
export function prepareSpec(raw: unknown, label: string, baseDir: string, rules?: UriRules): PipelineSpec {
  const fileErrors = inlineLocalFiles(raw, baseDir);
  if (fileErrors.length > 0) throw new SpecFileError(label, fileErrors);
  const checked = validatePipelineSpec(raw, rules);
  if (!checked.ok) throw new SpecFileError(label, checked.errors);
  return checked.value;
}

/** Reads, inlines and validates a spec file. */
export function loadSpecFile(file: string, rules?: UriRules): PipelineSpec {
  return prepareSpec(readJsonFile(file), file, path.dirname(path.resolve(file)), rules);
}
