import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApplicationFailure } from '@temporalio/activity';
import {
  FAILURE_TYPES,
  DECIDED_LIMITS,
  MODELS,
  modelDefinition,
  type FieldError,
  type ModelId,
  type PreflightRule,
} from '../contract';
import { clipSeconds, probe } from '../media/ffmpeg';
import type { AddressRuleOptions, LookupFn } from '../net/url-rules';
import { InputHeadError } from './errors';
import { readDataUri, readUrlHead, sniffMediaType, type InputHead } from './preflight-source';

/**
 * Preflight: before a step is submitted (and paid for), check every input the service will fetch,
 * as far as a client can — a URL resolves to public address space and answers a ranged GET with a
 * media type that fits the parameter and a size within the limits; a data URI has a fitting type and
 * size; a local reference exists; a clip whose length the model limits (the model's preflight rule,
 * src/contract/models/) is short enough (ffprobe of the first bytes). What it cannot catch is in
 * docs/preflight.md.
 */

/** The kind of media a URI parameter takes, from its name (`image_urls`, `audio_url`, `video_url`, ...). */
export type MediaKind = 'image' | 'audio' | 'video';

/** What was checked for one input value. */
export interface PreflightCheck {
  /** Path inside the step's input (`image_urls.1`). */
  path: string;
  source: 'url' | 'data-uri' | 'reference';
  contentType: string | null;
  size: number | null;
  /** Length of a clip whose length the model limits, when it could be read. */
  durationSeconds?: number;
  /** What could not be checked (e.g. a clip whose length is not in its first bytes). */
  note?: string;
}

/** Outcome of a passing preflight (a failing one throws PreflightRefused with the problems in details). */
export interface PreflightReport {
  model: ModelId;
  checks: PreflightCheck[];
}

/** `details[0]` of a PreflightRefused failure. */
export interface PreflightFailureDetails {
  problems: FieldError[];
  checks: PreflightCheck[];
}

/** A local (media store) reference: whether it exists, and where its bytes are. */
export interface ReferenceResolver {
  /** True for values this resolver owns (e.g. `sha256:...`). */
  owns(value: string): boolean;
  /** The stored object, or null when the store does not have it. */
  stat(value: string): Promise<{ contentType: string | null; size: number; file?: string } | null>;
}

/** Settings of the preflight activity. */
export interface PreflightOptions {
  /** Address rules for URL inputs; default: the spec's (public https on 443/8443). */
  rules?: Partial<AddressRuleOptions>;
  /** Origins whose URLs are read with private addresses and http allowed: the configured service's own output URLs. */
  trustedOrigins?: readonly string[];
  /** DNS resolution (tests resolve names without the network). */
  lookup?: LookupFn;
  /** Deadline of reading one input's head, ms. Default 8000. */
  timeoutMs?: number;
  /** Bytes read from the start of a clip whose length is checked. Default 2 MiB. */
  clipHeadBytes?: number;
  references?: ReferenceResolver;
}

/** The activity registered on the worker. */
export interface PreflightActivities {
  /** Checks a step's resolved input; returns the report, or throws PreflightRefused naming each field. */
  preflightJob(model: ModelId, input: Record<string, unknown>): Promise<PreflightReport>;
}

const SNIFF_BYTES = 64 * 1024;
const GENERIC_TYPES = new Set(['application/octet-stream', 'binary/octet-stream', 'application/binary']);

/** The kind a URI field takes, from its name. */
export function mediaKindOf(field: string): MediaKind | null {
  const match = /^(image|audio|video)_urls?$/.exec(field);
  return match ? (match[1] as MediaKind) : null;
}

/** Every URI value of a model's input with its path and kind. */
export function uriInputs(
  model: ModelId,
  input: Record<string, unknown>,
): Array<{ path: string; field: string; kind: MediaKind; value: string }> {
  const meta = MODELS[model];
  const found: Array<{ path: string; field: string; kind: MediaKind; value: string }> = [];
  for (const field of [...meta.uriFields, ...meta.uriListFields]) {
    const kind = mediaKindOf(field);
    const value = input[field];
    if (!kind || value === undefined) continue;
    const values = Array.isArray(value)
      ? value.map((v, i) => [`${field}.${i}`, v] as const)
      : [[field, value] as const];
    for (const [path, v] of values) if (typeof v === 'string') found.push({ path, field, kind, value: v });
  }
  return found;
}

/** Where preflight may read inputs from, and how long it waits for one. */
interface InputSources {
  readonly options: PreflightOptions;
  readonly timeoutMs: number;
  /** Origins (no trailing slash) whose URLs may resolve to private addresses: the service's own. */
  readonly trusted: readonly string[];
}

/** The address rules for `url`: a trusted origin (the service's own) may be private. */
function rulesFor({ options, trusted }: InputSources, url: string): AddressRuleOptions {
  const own = trusted.some((origin) => url.startsWith(`${origin}/`));
  return { allowPrivate: own, ...(own ? {} : options.rules), ...(options.lookup ? { lookup: options.lookup } : {}) };
}

/** Reads the head of one value; a problem is returned as a message, a transient one thrown. */
async function headOf(
  sources: InputSources,
  value: string,
  headBytes: number,
): Promise<{ head: InputHead; source: PreflightCheck['source']; file?: string } | { problem: string }> {
  const { options, timeoutMs } = sources;
  const data = readDataUri(value, headBytes);
  if (data) return { head: data, source: 'data-uri' };
  if (options.references?.owns(value)) {
    const stored = await options.references.stat(value);
    if (!stored) return { problem: `reference ${value} is not in the media store` };
    return {
      head: { contentType: stored.contentType, size: stored.size, head: Buffer.alloc(0) },
      source: 'reference',
      ...(stored.file ? { file: stored.file } : {}),
    };
  }
  try {
    return {
      head: await readUrlHead(value, rulesFor(sources, value), { maxHeadBytes: headBytes, timeoutMs }),
      source: 'url',
    };
  } catch (error) {
    if (error instanceof InputHeadError && error.definite) return { problem: error.message };
    throw error;
  }
}

/** Creates the preflight activity over `options`. */
export function createPreflightActivities(options: PreflightOptions = {}): PreflightActivities {
  const timeoutMs = options.timeoutMs ?? 8_000;
  const clipHeadBytes = options.clipHeadBytes ?? 2 * 1024 * 1024;
  const trusted = (options.trustedOrigins ?? []).map((o) => o.replace(/\/+$/, ''));

  const sources: InputSources = { options, timeoutMs, trusted };

  async function checkOne(
    model: ModelId,
    item: ReturnType<typeof uriInputs>[number],
    problems: FieldError[],
  ): Promise<PreflightCheck | null> {
    const clipRule = modelDefinition(model).preflight.clipLength;
    const clip = clipRule?.field === item.field ? clipRule : undefined;
    const read = await headOf(sources, item.value, clip ? clipHeadBytes : SNIFF_BYTES);
    if ('problem' in read) {
      problems.push({ path: item.path, message: read.problem });
      return null;
    }
    const { head } = read;
    const declared = head.contentType && !GENERIC_TYPES.has(head.contentType) ? head.contentType : null;
    const contentType = declared ?? sniffMediaType(head.head);
    const check: PreflightCheck = { path: item.path, source: read.source, contentType, size: head.size };
    if (contentType && !fits(item.kind, contentType)) {
      problems.push({
        path: item.path,
        message: `is ${contentType}, not ${item.kind === 'video' ? 'a' : 'an'} ${item.kind} file`,
      });
    } else if (!contentType && read.source !== 'reference') {
      check.note = 'media type not declared and not recognised from the first bytes; the service decides';
    }
    if (head.size !== null && head.size > DECIDED_LIMITS.inputFileMaxBytes) {
      problems.push({
        path: item.path,
        message: `is ${head.size} bytes, more than the ${DECIDED_LIMITS.inputFileMaxBytes} an input file may have`,
      });
    }
    if (clip && (!contentType || fits('video', contentType))) await checkClipLength(read, check, problems, clip);
    return check;
  }

  /** ffprobe of the clip's first bytes (or its stored file): at most the model's `rule.maxSeconds`. */
  async function checkClipLength(
    read: { head: InputHead; file?: string },
    check: PreflightCheck,
    problems: FieldError[],
    rule: NonNullable<PreflightRule['clipLength']>,
  ): Promise<void> {
    let seconds: number | null = null;
    const dir = read.file ? null : await mkdtemp(join(tmpdir(), 'reelflow-preflight-'));
    try {
      const file = read.file ?? join(dir as string, 'clip');
      if (!read.file) await writeFile(file, read.head.head);
      seconds = clipSeconds(await probe(file));
    } catch {
      seconds = null;
    } finally {
      if (dir) await rm(dir, { recursive: true, force: true });
    }
    if (seconds === null || !(seconds > 0)) {
      check.note = `clip length not readable from the first ${read.head.head.length} bytes; the service checks it`;
      return;
    }
    check.durationSeconds = Math.round(seconds * 100) / 100;
    if (seconds > rule.maxSeconds) {
      problems.push({
        path: check.path,
        message: `is a ${seconds.toFixed(1)} s clip, longer than the ${rule.maxSeconds / 60} minutes ${rule.doing} accepts`,
      });
    }
  }

  return {
    async preflightJob(model, input) {
      const problems: FieldError[] = [];
      const checks: PreflightCheck[] = [];
      // One input at a time keeps a 50-reference step from opening 50 connections at once.
      for (const item of uriInputs(model, input)) {
        try {
          const check = await checkOne(model, item, problems);
          if (check) checks.push(check);
        } catch (error) {
          if (!(error instanceof InputHeadError)) throw error;
          throw ApplicationFailure.create({
            type: FAILURE_TYPES.preflightUnavailable,
            message: `preflight could not check ${item.path}: ${error.message}`,
          });
        }
      }
      if (problems.length > 0) {
        const details: PreflightFailureDetails = { problems, checks };
        throw ApplicationFailure.create({
          type: FAILURE_TYPES.preflightRefused,
          nonRetryable: true,
          message: `preflight refused the input, nothing was submitted: ${problems.map((p) => `${p.path}: ${p.message}`).join('; ')}`,
          details: [details],
        });
      }
      return { model, checks };
    },
  };
}

/** True when `contentType` is media of `kind` (a video container also carries audio). */
function fits(kind: MediaKind, contentType: string): boolean {
  const top = contentType.split('/')[0];
  if (kind === 'audio') return top === 'audio' || top === 'video';
  return top === kind;
}
