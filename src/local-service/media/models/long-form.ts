import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { LONG_FORM, withLongFormDefaults, type LongFormInput } from '../../../contract';
import { MediaError } from '../errors';
import { FILTER_SAFE_PATH, findDrawtextFont } from '../../../media/ffmpeg';
import { frameSize } from '../../../media/frame-size';
import { AAC, encodeTo, FPS, H264, probeInput, seconds, type ModelContext } from './common';
import type { ModelRenderer } from './renderer';

/** Frequency of the tone generated when `sound` is set and no reference audio is given. */
const TONE_HZ = 440;
const PROMPT_LINES = 3;

/** Splits `total` frames over `count` images as evenly as possible; the parts sum to `total`. */
export function splitFrames(total: number, count: number): number[] {
  const base = Math.floor(total / count);
  const extra = total % count;
  return Array.from({ length: count }, (_, i) => base + (i < extra ? 1 : 0));
}

/** Wraps the prompt into at most three lines that fit the frame width (roughly). */
function wrapPrompt(prompt: string, width: number, fontSize: number): string {
  const perLine = Math.max(8, Math.floor(width / (fontSize * 0.55)));
  const words = prompt
    .replace(/\p{Cc}+/gu, ' ')
    .trim()
    .split(/\s+/)
    .filter(Boolean);
  const lines: string[] = [];
  let line = '';
  for (const word of words) {
    const piece = word.length > perLine ? `${word.slice(0, perLine - 1)}…` : word;
    if (!line) line = piece;
    else if (line.length + 1 + piece.length <= perLine) line += ` ${piece}`;
    else {
      lines.push(line);
      line = piece;
    }
    if (lines.length === PROMPT_LINES) break;
  }
  if (line && lines.length < PROMPT_LINES) lines.push(line);
  const truncated = lines.join(' ').length < words.join(' ').length;
  if (truncated && lines.length > 0) {
    const last = lines.length - 1;
    lines[last] = `${(lines[last] ?? '').slice(0, perLine - 1)}…`;
  }
  return lines.join('\n');
}

/** Fetches inputs a few at a time: enough to overlap downloads without opening 30 at once. */
async function fetchAll<T>(
  items: readonly string[],
  worker: (item: string, index: number) => Promise<T>,
): Promise<T[]> {
  const results: T[] = new Array(items.length);
  let next = 0;
  const lanes = Array.from({ length: Math.min(4, items.length) }, async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await worker(items[index] as string, index);
    }
  });
  await Promise.all(lanes);
  return results;
}

/**
 * Long-form model: a slideshow of the reference images, each with a slow zoom, of exactly the
 * requested duration (24 fps, so frames = 24 x seconds), aspect ratio and resolution (see
 * `frameSize`), the prompt drawn as a caption when this ffmpeg build can draw text, and with
 * `sound` an AAC track from the first reference audio (looped or trimmed to the duration) or a
 * 440 Hz tone. H.264 (yuv420p) + AAC in mp4 with faststart. Reference videos are not used.
 */
export async function renderLongForm(input: LongFormInput, ctx: ModelContext): Promise<string> {
  const full = withLongFormDefaults(input);
  if (full.image_urls.length === 0) {
    throw new MediaError('input_refused', 'at least one reference image is needed', 'image_urls');
  }
  const { width, height, sar } = frameSize(full.aspect_ratio, full.resolution);
  const duration = Number(full.duration);
  const frames = splitFrames(duration * FPS, full.image_urls.length);

  const images = await fetchAll(full.image_urls, async (uri, i) => {
    const file = await ctx.fetchInput(uri, `image_urls.${i}`, `image-${i}`);
    await probeInput(file, `image_urls.${i}`, 'video', ctx.signal);
    return file;
  });
  const firstAudio = full.audio_urls[0];
  let audioFile: string | null = null;
  let audioSeconds = 0;
  if (full.sound && firstAudio !== undefined) {
    audioFile = await ctx.fetchInput(firstAudio, 'audio_urls.0', 'audio-0');
    const probed = await probeInput(audioFile, 'audio_urls.0', 'audio', ctx.signal);
    audioSeconds = probed.streams.find((s) => s.codecType === 'audio')?.duration ?? probed.duration;
  }

  const args: string[] = [];
  // Only the first picture of each reference is used; -t keeps ffmpeg from reading a whole video.
  for (const file of images) args.push('-t', '1', '-i', file);
  const audioIndex = images.length;
  if (audioFile) args.push('-i', audioFile);
  else if (full.sound)
    args.push('-f', 'lavfi', '-i', `sine=frequency=${TONE_HZ}:sample_rate=48000:duration=${seconds(duration)}`);

  const graph: string[] = [];
  images.forEach((_, i) => {
    const d = frames[i] ?? 1;
    // Alternate zooming in and out so consecutive stills do not look like one long zoom.
    const zoom = i % 2 === 0 ? `1+0.1*on/${d}` : `1.1-0.1*on/${d}`;
    graph.push(
      `[${i}:v]trim=end_frame=1,setpts=PTS-STARTPTS,scale=${width}:${height}:force_original_aspect_ratio=increase,` +
        `crop=${width}:${height},setsar=1,` +
        `zoompan=z='${zoom}':x='iw/2-(iw/zoom/2)':y='ih/2-(ih/zoom/2)':d=${d}:s=${width}x${height}:fps=${FPS}[v${i}]`,
    );
  });
  let video = `${images.map((_, i) => `[v${i}]`).join('')}concat=n=${images.length}:v=1:a=0`;
  const font = full.prompt?.trim() ? await findDrawtextFont() : null;
  const textFile = join(ctx.workDir, 'prompt.txt');
  if (font && full.prompt && FILTER_SAFE_PATH.test(textFile)) {
    const fontSize = Math.round(height / 20);
    await writeFile(textFile, wrapPrompt(full.prompt, width * 0.9, fontSize));
    video +=
      `,drawtext=fontfile=${font}:textfile=${textFile}:expansion=none:fontcolor=white:fontsize=${fontSize}` +
      `:box=1:boxcolor=black@0.5:boxborderw=6:x=(w-text_w)/2:y=h-text_h-${Math.round(height / 16)}`;
  }
  graph.push(`${video},format=yuv420p,setsar=sar=${sar[0]}/${sar[1]}:max=1000000[vout]`);
  if (full.sound) {
    // A shorter reference is looped on decoded samples (aloop), which joins seamlessly where
    // demuxer-level looping leaves encoder padding at every seam; apad + atrim then make the
    // length exact whatever the reference's rounding.
    const loop =
      audioFile && audioSeconds > 0 && audioSeconds < duration
        ? `aloop=loop=${Math.ceil(duration / audioSeconds)}:size=${Math.round(audioSeconds * 48_000)},`
        : '';
    graph.push(
      `[${audioIndex}:a:0]aresample=48000,${loop}apad,atrim=duration=${seconds(duration)},asetpts=PTS-STARTPTS[aout]`,
    );
  }

  args.push('-filter_complex', graph.join(';'), '-map', '[vout]');
  if (full.sound) args.push('-map', '[aout]', ...AAC);
  args.push(...H264, '-r', String(FPS), '-t', seconds(duration));
  return encodeTo(ctx, args);
}

/** The long-form model in the local service: its output's frame and length follow the input's settings. */
export const longFormRenderer: ModelRenderer<typeof LONG_FORM.id> = {
  stem: 'long-form',
  render: renderLongForm,
  stubShape: (input) => {
    const full = withLongFormDefaults(input);
    const frame = frameSize(full.aspect_ratio, full.resolution);
    return { width: frame.width, height: frame.height, seconds: Number(full.duration) };
  },
};
