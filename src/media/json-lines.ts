import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MediaStoreError } from './store/errors';
import { putMediaFile, type MediaStore } from './store';

/**
 * Records too many for workflow history, kept in the media store as JSON Lines objects (one record a
 * line): a batch's manifest (read back one page at a time through a byte range) and its result pages.
 * Objects are content-addressed like any media, so writing the same records twice is one object.
 */

/** The media type of a JSON Lines object in the store. */
export const JSON_LINES_TYPE = 'application/x-ndjson';

/**
 * A JSON Lines object split into pages of at most `pageSize` records and, past its first record, at
 * most `maxPageBytes`: where each page starts, in bytes and in records.
 */
export interface PagedJsonLines {
  sha256: string;
  bytes: number;
  records: number;
  pageSize: number;
  /** Byte offset of each page's first line; page `p` ends where page `p + 1` starts (or at `bytes`). */
  pageOffsets: number[];
  /** Index of each page's first record (pages bounded by bytes hold fewer than `pageSize`). */
  pageStarts: number[];
}

/**
 * Serialises `records` (one JSON text a line), puts the object into the store with `referrer`
 * recorded (so `reelflow media gc` keeps it while the referrer runs), and returns where its pages are.
 * A page read back is one activity result in workflow history, so `maxPageBytes` keeps it under what
 * one payload may carry: records with large inline values (data URIs) make shorter pages.
 */
export async function putJsonLines(
  store: MediaStore,
  records: readonly unknown[],
  referrer: string,
  pageSize = 100,
  maxPageBytes = Number.POSITIVE_INFINITY,
): Promise<PagedJsonLines> {
  const pageOffsets: number[] = [];
  const pageStarts: number[] = [];
  const lines: string[] = [];
  let bytes = 0;
  records.forEach((record, index) => {
    const line = `${JSON.stringify(record)}\n`;
    const size = Buffer.byteLength(line);
    const pageStart = pageStarts[pageStarts.length - 1];
    const pageBytes = bytes - (pageOffsets[pageOffsets.length - 1] ?? 0);
    if (pageStart === undefined || index - pageStart >= pageSize || pageBytes + size > maxPageBytes) {
      pageOffsets.push(bytes);
      pageStarts.push(index);
    }
    lines.push(line);
    bytes += size;
  });
  const dir = await mkdtemp(join(tmpdir(), 'reelflow-jsonl-'));
  try {
    const file = join(dir, 'records.jsonl');
    await writeFile(file, lines.join(''));
    const ref = await putMediaFile(store, file, JSON_LINES_TYPE, referrer);
    return {
      sha256: ref.$media.slice('sha256:'.length),
      bytes,
      records: records.length,
      pageSize,
      pageOffsets,
      pageStarts,
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function readText(store: MediaStore, sha256: string, range?: { start: number; end: number }): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of await store.read(sha256, range)) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function parseLines(text: string, where: string): unknown[] {
  return text
    .split('\n')
    .filter((line) => line !== '')
    .map((line, index) => {
      try {
        return JSON.parse(line) as unknown;
      } catch (error) {
        throw new MediaStoreError('integrity', `${where} line ${index + 1}: not JSON (${(error as Error).message})`);
      }
    });
}

/** The records of page `page` of a paged object (an empty array past the last page). */
export async function readJsonLinesPage(
  store: MediaStore,
  object: Pick<PagedJsonLines, 'sha256' | 'bytes' | 'pageOffsets'>,
  page: number,
): Promise<unknown[]> {
  const start = object.pageOffsets[page];
  if (start === undefined) return [];
  const end = (object.pageOffsets[page + 1] ?? object.bytes) - 1;
  if (end < start) return [];
  return parseLines(await readText(store, object.sha256, { start, end }), `sha256:${object.sha256} page ${page}`);
}

/** Every record of a JSON Lines object (a result page, or a whole manifest for a re-run). */
export async function readJsonLines(store: MediaStore, sha256: string): Promise<unknown[]> {
  return parseLines(await readText(store, sha256), `sha256:${sha256}`);
}
