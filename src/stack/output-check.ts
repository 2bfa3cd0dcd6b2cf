import { createWriteStream, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { pipeline as streamPipeline } from 'node:stream/promises';
import { request } from 'undici';
import { probe } from '../media/ffmpeg';

/** One downloaded output and what ffprobe says about it. */
export interface CheckedOutput {
  step: string;
  url: string;
  path: string;
  width: number | null;
  height: number | null;
  durationSeconds: number;
  /** Empty when the file passes. */
  problems: string[];
}

/** Downloads `url` to `file` (HTTP 200 required). */
export async function download(url: string, file: string): Promise<void> {
  const response = await request(url);
  if (response.statusCode !== 200) {
    await response.body.dump();
    throw new Error(`downloading ${url}: HTTP ${response.statusCode}`);
  }
  await streamPipeline(response.body, createWriteStream(file));
}

/**
 * Downloads a step's output into `dir` and checks it with ffprobe: a video stream is present, the
 * duration is positive and, when `expected` is given, the frame has exactly that size.
 */
export async function fetchAndCheck(
  step: string,
  url: string,
  dir: string,
  expected?: { width: number; height: number },
): Promise<CheckedOutput> {
  mkdirSync(dir, { recursive: true });
  const extension = /\.(\w{2,4})(?:\?|$)/.exec(new URL(url).pathname)?.[1] ?? 'mp4';
  const file = join(dir, `${step}.${extension}`);
  await download(url, file);
  const problems: string[] = [];
  let width: number | null = null;
  let height: number | null = null;
  let durationSeconds = 0;
  try {
    const result = await probe(file);
    width = result.width;
    height = result.height;
    durationSeconds = result.duration;
    if (!result.streams.some((s) => s.codecType === 'video')) problems.push('no video stream');
    if (!(result.duration > 0)) problems.push('duration is not positive');
    if (expected && (width !== expected.width || height !== expected.height)) {
      problems.push(`frame is ${width}x${height}, expected ${expected.width}x${expected.height}`);
    }
  } catch (error) {
    problems.push(`ffprobe cannot read it: ${(error as Error).message}`);
  }
  return { step, url, path: file, width, height, durationSeconds, problems };
}
