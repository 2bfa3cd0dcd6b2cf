import * as fs from 'node:fs';
import * as path from 'node:path';
import { silentWavDataUri } from '../../test/helpers/inputs';
import { LONG_FORM, PIXEL_PNG, REVOICE, UPSCALE } from './shapes';

/**
 * What the benches that start work through the CLI hand it, as a user's files give it: the image
 * (`hero.png`) and the voice (`voice.wav`) as files the CLI moves into the media store, specs beside them
 * and CSV manifests naming those specs.
 */

/** The throughput bench's first step (4 s, 480p, 16:9, from the image file). */
const generate = {
  id: 'generate',
  model: LONG_FORM,
  input: { image_urls: ['hero.png'], duration: '4', resolution: '480p', aspect_ratio: '16:9' },
};

/** The throughput bench's three steps: long-form → re-voice → upscale. */
export const THREE_STEPS = [
  generate,
  { id: 'revoice', model: REVOICE, input: { video_url: { $from: 'generate' }, audio_url: 'voice.wav' } },
  { id: 'upscale', model: UPSCALE, input: { video_url: { $from: 'revoice' } } },
];

/** Its first step alone. */
export const ONE_STEP = [generate];

/** Writes `hero.png` and `voice.wav` into `dir`. */
export function writeMediaFiles(dir: string): void {
  const bytesOf = (dataUri: string) => Buffer.from(dataUri.slice(dataUri.indexOf(',') + 1), 'base64');
  fs.writeFileSync(path.join(dir, 'hero.png'), bytesOf(PIXEL_PNG));
  fs.writeFileSync(path.join(dir, 'voice.wav'), bytesOf(silentWavDataUri()));
}

/**
 * Writes `<name>.json`, a spec of `steps` with `archive: never` (the throughput bench's pipelines' mode,
 * the workflow's default: `reelflow batch` would otherwise copy every output into the store).
 */
export function writeSpecFile(dir: string, name: string, steps: unknown[]): void {
  fs.writeFileSync(path.join(dir, `${name}.json`), JSON.stringify({ name, archive: 'never', steps }));
}

/** A CSV of `rows` items of `<spec>.json`, named `<prefix>-<n>`, written in chunks (rows may be 100,000). */
export function writeCsv(dir: string, prefix: string, spec: string, rows: number): string {
  const file = path.join(dir, `${prefix}.csv`);
  const out = fs.openSync(file, 'w');
  try {
    fs.writeSync(out, 'spec,name\n');
    for (let start = 0; start < rows; start += 10_000) {
      const lines = [];
      for (let n = start; n < Math.min(rows, start + 10_000); n += 1) lines.push(`${spec}.json,${prefix}-${n}\n`);
      fs.writeSync(out, lines.join(''));
    }
  } finally {
    fs.closeSync(out);
  }
  return file;
}
