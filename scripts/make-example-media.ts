/**
 * `npm run examples:media`: writes the small media files the examples under examples/ use
 * (examples/media/), with ffmpeg only — nothing is downloaded. Run once; the files are committed,
 * so the examples work offline from a fresh clone. Re-running rewrites them (bit-exact flags keep
 * the output stable for one ffmpeg build; another build may differ by a few bytes, which is fine).
 */
import { mkdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { probe, runFfmpeg } from '../src/media/ffmpeg';
import { VOICE_EXPRESSION } from '../src/stack/reference-inputs';

const DIR = resolve(__dirname, '..', 'examples', 'media');
const BITEXACT = ['-fflags', '+bitexact', '-flags:v', '+bitexact', '-flags:a', '+bitexact', '-map_metadata', '-1'];

/** What each file is, and the ffmpeg arguments that make it (output path appended). */
const FILES: Array<{ name: string; what: string; args: string[] }> = [
  {
    name: 'hero.png',
    what: 'reference image (test pattern), 320x180',
    args: ['-f', 'lavfi', '-i', 'testsrc2=size=320x180:rate=1', '-frames:v', '1'],
  },
  {
    name: 'product.png',
    what: 'reference image (colour bars), 320x180',
    args: ['-f', 'lavfi', '-i', 'smptehdbars=size=320x180:rate=1', '-frames:v', '1'],
  },
  {
    name: 'voice-over.m4a',
    what: 'speech-like voice track, 6 s, AAC',
    args: ['-f', 'lavfi', '-i', `aevalsrc=${VOICE_EXPRESSION}:s=22050:d=6`, '-c:a', 'aac', '-b:a', '32k'],
  },
  {
    name: 'voice-over-2min.m4a',
    what: 'voice track for the two-minute ad (examples/long-ad.json), 120 s, AAC',
    args: ['-f', 'lavfi', '-i', `aevalsrc=${VOICE_EXPRESSION}:s=16000:d=120`, '-c:a', 'aac', '-b:a', '20k'],
  },
  {
    name: 'clip.mp4',
    what: 'short clip to re-voice or upscale, 4 s, 320x180 H.264 with a tone',
    args: [
      '-f',
      'lavfi',
      '-i',
      'testsrc2=size=320x180:rate=12:duration=4',
      '-f',
      'lavfi',
      '-i',
      'sine=frequency=330:sample_rate=22050:duration=4',
      '-c:v',
      'libx264',
      '-preset',
      'veryfast',
      '-crf',
      '36',
      '-pix_fmt',
      'yuv420p',
      '-c:a',
      'aac',
      '-b:a',
      '32k',
      '-movflags',
      '+faststart',
      '-shortest',
    ],
  },
];

async function main(): Promise<void> {
  mkdirSync(DIR, { recursive: true });
  for (const file of FILES) {
    const out = join(DIR, file.name);
    await runFfmpeg([...file.args, ...BITEXACT, out]);
    const probed = await probe(out);
    const duration = probed.duration > 0 ? ` ${probed.duration.toFixed(2)}s` : '';
    console.log(`${file.name.padEnd(20)} ${String(statSync(out).size).padStart(7)} bytes${duration}  ${file.what}`);
  }
}

main().catch((error: unknown) => {
  console.error(`make-example-media: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
