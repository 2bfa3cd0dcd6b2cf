import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { runFfmpeg } from '../media/ffmpeg';

/** Files the demo generates for itself: reference images and a voice track, no download. */
export interface ReferenceInputs {
  imagePaths: string[];
  voicePath: string;
}

/**
 * Three distinct still frames, each a different ffmpeg source, so the slideshow visibly changes.
 * 854x480 JPEGs: the demo's 480p output needs no more, and inline (data URI) inputs travel in
 * Temporal payloads, which should stay well under the SDK's 512 KB warning size.
 */
const IMAGE_SOURCES = [
  'testsrc2=size=854x480:rate=1',
  'mandelbrot=size=854x480:rate=1',
  'gradients=size=854x480:rate=1:c0=0x1f4e79:c1=0xf2a541:seed=7',
] as const;

/**
 * A speech-like voice track: a gliding fundamental with two formant-like partials, chopped into
 * syllables by a 4 Hz envelope. Distinct from any tone the models generate, so a re-voiced
 * output can be told apart from its source.
 */
export const VOICE_EXPRESSION =
  '(0.45*sin(2*PI*(150+25*sin(2*PI*0.7*t))*t)+0.2*sin(2*PI*720*t)+0.1*sin(2*PI*1240*t))*sin(PI*4*t)*sin(PI*4*t)';

/**
 * Writes the demo's reference inputs under `dir` (reusing files already there) and returns their
 * paths. `voiceSeconds` should cover the generated clip; the re-voicing model trims or pads.
 */
export async function ensureReferenceInputs(dir: string, voiceSeconds = 6): Promise<ReferenceInputs> {
  mkdirSync(dir, { recursive: true });
  const imagePaths: string[] = [];
  for (const [index, source] of IMAGE_SOURCES.entries()) {
    const file = join(dir, `reference-${index + 1}.jpg`);
    if (!existsSync(file)) await renderImage(source, file);
    imagePaths.push(file);
  }
  const voicePath = join(dir, `voice-${voiceSeconds}s.m4a`);
  if (!existsSync(voicePath)) {
    await runFfmpeg([
      '-f',
      'lavfi',
      '-i',
      `aevalsrc=${VOICE_EXPRESSION}:s=44100:d=${voiceSeconds}`,
      '-c:a',
      'aac',
      '-b:a',
      '96k',
      voicePath,
    ]);
  }
  return { imagePaths, voicePath };
}

async function renderImage(source: string, file: string): Promise<void> {
  try {
    await runFfmpeg(['-f', 'lavfi', '-i', source, '-frames:v', '1', '-q:v', '4', file]);
  } catch {
    // Older ffmpeg builds lack some sources (gradients); a colour test pattern still differs.
    await runFfmpeg(['-f', 'lavfi', '-i', 'smptehdbars=size=854x480:rate=1', '-frames:v', '1', '-q:v', '4', file]);
  }
}
