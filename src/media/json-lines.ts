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

/** A JSON Lines object split into pages of `pageSize` records: where each page starts, in bytes. */
export interface PagedJsonLines {
  sha256: string;
  bytes: number;
  records: number;
  pageSize: number;
  /** Byte offset of each page's first line; page `p` ends where page `p + 1` starts (or at `bytes`). */
  pageOffsets: number[];
}

/**
 * Serialises `records` (one JSON text a line), puts the object into the store with `referrer`
 * recorded (so `reelflow media gc` keeps it while the referrer runs), and returns where its pages are.
 */
export async function putJsonLines(
  store: MediaStore,
  records: readonly unknown[],
  referrer: string,
  pageSize = 100,
): Promise<PagedJsonLines> {
  const pageOffsets: number[] = [];
  const lines: string[] = [];
  let bytes = 0;
  records.forEach((record, index) => {
    if (index % pageSize === 0) pageOffsets.push(bytes);
    const line = `${JSON.stringify(record)}\n`;
    lines.push(line);
    bytes += Buffer.byteLength(line);
  });
  const dir = await mkdtemp(join(tmpdir(), 'reelflow-jsonl-'));
  try {
    const file = join(dir, 'records.jsonl');
    await writeFile(file, lines.join(''));
    const ref = await putMediaFile(store, file, JSON_LINES_TYPE, referrer);
    return { sha256: ref.$media.slice('sha256:'.length), bytes, records: records.length, pageSize, pageOffsets };
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
export async function readJsonLinesPage(store: MediaStore, object: PagedJsonLines, page: number): Promise<unknown[]> {
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
