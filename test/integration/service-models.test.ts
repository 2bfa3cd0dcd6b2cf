import { copyFile, mkdir, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  ASPECT_RATIOS,
  LONG_FORM_DURATIONS,
  RESOLUTIONS,
  type AspectRatio,
  type LongFormInput,
  type Resolution,
} from '../../src/contract';
import { probe, runFfmpeg, type ProbeResult, type ProbeStream } from '../../src/media/ffmpeg';
import { frameSize } from '../../src/media/frame-size';
import { createFfmpegModelRunner, MediaError, type ModelRunner } from '../../src/local-service/media/runner';

const FRAME = 1 / 24;
const ownOrigin = 'http://127.0.0.1:8787';

let workDir: string;
let filesDir: string;
let runner: ModelRunner;
const data: Record<string, string> = {};

/** Generates a test input with ffmpeg's sources (testsrc, sine) into workDir. */
async function make(name: string, args: string[]): Promise<string> {
  const file = join(workDir, name);
  await runFfmpeg(['-v', 'error', ...args, file]);
  return file;
}

async function dataUri(file: string, type: string): Promise<string> {
  return `data:${type};base64,${(await readFile(file)).toString('base64')}`;
}

/** Puts a file where the service serves outputs and returns its own-origin URL. */
async function own(file: string, requestId: string, name: string): Promise<string> {
  await mkdir(join(filesDir, requestId), { recursive: true });
  await copyFile(file, join(filesDir, requestId, name));
  return `${ownOrigin}/files/${requestId}/${name}`;
}

/** ffmpeg's astats over a window of the first audio stream. */
async function astats(file: string, start: number, end: number): Promise<{ hz: number; rmsDb: number }> {
  const out = await runFfmpeg([
    '-v',
    'info',
    '-nostats',
    '-i',
    file,
    '-map',
    '0:a:0',
    '-af',
    `atrim=${start}:${end},astats`,
    '-f',
    'null',
    '-',
  ]);
  const zcr = Number(/Zero crossings rate: ([\d.]+)/.exec(out)?.[1]);
  const rms = [...out.matchAll(/RMS level dB: (-?[\d.]+|-inf)/g)].at(-1)?.[1];
  // Two zero crossings per period; outputs are 48 kHz.
  return { hz: (zcr * 48_000) / 2, rmsDb: rms === undefined || rms === '-inf' ? -Infinity : Number(rms) };
}

function stream(result: ProbeResult, type: 'video' | 'audio'): ProbeStream | undefined {
  return result.streams.find((s) => s.codecType === type);
}

function ratio(text: string | null): number {
  const [a, b] = (text ?? '').split(':').map(Number);
  return (a ?? NaN) / (b ?? NaN);
}

async function failure(promise: Promise<unknown>): Promise<MediaError> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(MediaError);
  return error as MediaError;
}

function render(
  model: Parameters<ModelRunner['render']>[0]['model'],
  input: Parameters<ModelRunner['render']>[0]['input'],
  requestId: string,
  signal = new AbortController().signal,
) {
  return runner.render({ model, input, requestId, outputDir: join(filesDir, requestId), signal });
}

beforeAll(async () => {
  workDir = await mkdtemp(join(tmpdir(), 'reelflow-models-'));
  filesDir = join(workDir, 'files');
  runner = createFfmpegModelRunner({ allowPrivate: false, ownOrigin, ownFilesDir: filesDir });
  const [a, b, c, refAudio, voiceShort, voiceLong] = await Promise.all([
    make('a.png', ['-f', 'lavfi', '-i', 'testsrc=size=320x240:rate=1', '-frames:v', '1']),
    make('b.jpg', ['-f', 'lavfi', '-i', 'testsrc2=size=200x300:rate=1', '-frames:v', '1']),
    make('c.png', ['-f', 'lavfi', '-i', 'color=c=orange:size=640x360:rate=1', '-frames:v', '1']),
    make('ref.m4a', ['-f', 'lavfi', '-i', 'sine=frequency=300:sample_rate=48000:duration=1.5', '-c:a', 'aac']),
    make('voice-short.wav', ['-f', 'lavfi', '-i', 'sine=frequency=3000:sample_rate=44100:duration=2']),
    make('voice-long.wav', ['-f', 'lavfi', '-i', 'sine=frequency=1500:sample_rate=44100:duration=5']),
  ]);
  data.a = await dataUri(a, 'image/png');
  data.b = await dataUri(b, 'image/jpeg');
  data.c = await dataUri(c, 'image/png');
  data.refAudio = await dataUri(refAudio, 'audio/mp4');
  data.voiceShort = await dataUri(voiceShort, 'audio/wav');
  data.voiceLong = await dataUri(voiceLong, 'audio/wav');
  const [clip, mpeg4Clip, longClip] = await Promise.all([
    make('clip.mp4', [
      '-f',
      'lavfi',
      '-i',
      'testsrc=size=320x240:rate=25',
      '-f',
      'lavfi',
      '-i',
      'sine=frequency=440:sample_rate=48000',
      '-t',
      '3',
      '-c:v',
      'libx264',
      '-preset',
      'ultrafast',
      '-pix_fmt',
      'yuv420p',
      '-c:a',
      'aac',
    ]),
    make('clip-mpeg4.mp4', ['-f', 'lavfi', '-i', 'testsrc=size=176x144:rate=25', '-t', '2', '-c:v', 'mpeg4']),
    // Just over 10 minutes, yet tiny and quick: 16x16 pixels at 1 frame per second.
    make('long.mp4', [
      '-f',
      'lavfi',
      '-i',
      'color=c=black:size=16x16:rate=1',
      '-t',
      '601',
      '-c:v',
      'libx264',
      '-preset',
      'ultrafast',
    ]),
  ]);
  data.clip = await own(clip, 'src', 'clip.mp4');
  data.mpeg4Clip = await own(mpeg4Clip, 'src', 'clip-mpeg4.mp4');
  data.longClip = await own(longClip, 'src', 'long.mp4');
});

afterAll(async () => {
  await rm(workDir, { recursive: true, force: true });
});

describe('frame sizes of the long-form model', () => {
  const expected: Record<AspectRatio, Record<Resolution, string>> = {
    '21:9': { '480p': '1120x480', '720p': '1680x720' },
    '16:9': { '480p': '854x480', '720p': '1280x720' },
    '4:3': { '480p': '640x480', '720p': '960x720' },
    '1:1': { '480p': '480x480', '720p': '720x720' },
    '3:4': { '480p': '360x480', '720p': '540x720' },
    '9:16': { '480p': '270x480', '720p': '406x720' },
  };
  it.each(ASPECT_RATIOS.flatMap((a) => RESOLUTIONS.map((r) => [a, r] as const)))('%s %s', (aspect, resolution) => {
    const size = frameSize(aspect, resolution);
    expect(`${size.width}x${size.height}`).toBe(expected[aspect][resolution]);
    expect(size.width % 2).toBe(0);
    expect((size.width * size.sar[0]) / (size.height * size.sar[1])).toBeCloseTo(ratio(aspect), 12);
  });
});

describe('long-form model', () => {
  // Every aspect ratio at both resolutions, every allowed duration at least once, with and
  // without sound, from the reference audio or a generated tone.
  const combos = ASPECT_RATIOS.flatMap((aspect) => RESOLUTIONS.map((resolution) => ({ aspect, resolution })));
  const durations = ['30', '4', '25', '5', '20', '4', '15', '5', '10', '4', '4', '5'] as const;
  const cases = combos.map((combo, i) => ({
    ...combo,
    duration: durations[i] ?? '4',
    sound: i % 3 !== 2,
    fromReference: i % 3 === 1,
    images: (['a', 'b', 'c'] as const).slice(0, 1 + (i % 3)),
  }));

  it('covers every allowed duration', () => {
    expect(new Set(cases.map((c) => c.duration))).toEqual(new Set(LONG_FORM_DURATIONS));
  });

  it.each(cases)(
    '$aspect $resolution $duration s, sound $sound (reference audio $fromReference), $images.length image(s)',
    async (c) => {
      const input: LongFormInput = {
        image_urls: c.images.map((k) => data[k] as string),
        aspect_ratio: c.aspect,
        resolution: c.resolution,
        duration: c.duration,
        sound: c.sound,
        prompt: 'A lighthouse at dusk, waves rolling in, cinematic',
        ...(c.fromReference ? { audio_urls: [data.refAudio as string] } : {}),
      };
      const id = `lf-${c.aspect.replace(':', 'x')}-${c.resolution}`;
      const result = await render('service-video-cinema-long-form-from-references', input, id);
      expect(result.files).toHaveLength(1);
      const [file] = result.files;
      expect(file).toMatchObject({ contentType: 'video/mp4', fileName: expect.stringMatching(/\.mp4$/) });
      const seconds = Number(c.duration);
      const probed = await probe(file?.path as string);
      const video = stream(probed, 'video');
      const size = frameSize(c.aspect, c.resolution);
      expect(probed.formatName).toMatch(/mp4/);
      expect(Math.abs(probed.duration - seconds)).toBeLessThanOrEqual(FRAME);
      expect(Math.abs(result.outputSeconds - seconds)).toBeLessThanOrEqual(FRAME);
      expect(video).toMatchObject({
        codecName: 'h264',
        pixFmt: 'yuv420p',
        width: size.width,
        height: size.height,
        frameCount: seconds * 24,
      });
      expect(Math.abs((video?.duration ?? 0) - seconds)).toBeLessThanOrEqual(FRAME);
      expect(ratio(video?.displayAspectRatio ?? null)).toBeCloseTo(ratio(c.aspect), 9);
      const audio = stream(probed, 'audio');
      if (!c.sound) {
        expect(audio).toBeUndefined();
      } else {
        expect(audio?.codecName).toBe('aac');
        expect(Math.abs((audio?.duration ?? 0) - seconds)).toBeLessThanOrEqual(FRAME);
        // The reference audio is a 300 Hz tone of 1.5 s, looped; without one, a 440 Hz tone.
        const tail = await astats(file?.path as string, seconds - 1, seconds - 0.1);
        expect(tail.hz).toBeCloseTo(c.fromReference ? 300 : 440, -1);
      }
      // faststart: the index (moov) comes before the media data (mdat).
      const bytes = await readFile(file?.path as string);
      expect(bytes.indexOf('moov')).toBeLessThan(bytes.indexOf('mdat'));
    },
  );

  it('refuses a request without images, an unreadable image, and audio without sound in it', async () => {
    expect(
      await failure(render('service-video-cinema-long-form-from-references', { image_urls: [] }, 'lf-none')),
    ).toMatchObject({
      code: 'input_refused',
      path: 'image_urls',
    });
    const garbage = `data:image/png;base64,${Buffer.from('not an image at all').toString('base64')}`;
    expect(
      await failure(
        render(
          'service-video-cinema-long-form-from-references',
          { image_urls: [data.a as string, garbage] },
          'lf-garbage',
        ),
      ),
    ).toMatchObject({
      code: 'input_refused',
      path: 'image_urls.1',
    });
    expect(
      await failure(
        render(
          'service-video-cinema-long-form-from-references',
          { image_urls: [data.a as string], sound: true, audio_urls: [data.b as string] },
          'lf-mute',
        ),
      ),
    ).toMatchObject({ code: 'input_refused', path: 'audio_urls.0' });
    expect(await readdir(join(filesDir, 'lf-garbage'))).toEqual([]);
  });

  it('bills the requested duration', async () => {
    await expect(
      runner.billedSeconds('service-video-cinema-long-form-from-references', { image_urls: [], duration: '15' }),
    ).resolves.toBe(15);
    await expect(
      runner.billedSeconds('service-video-cinema-long-form-from-references', { image_urls: [] }),
    ).resolves.toBe(4);
  });

  it('stops on abort, killing ffmpeg and leaving no output', async () => {
    const controller = new AbortController();
    const requestId = 'lf-aborted';
    const outputDir = join(filesDir, requestId);
    const pending = render(
      'service-video-cinema-long-form-from-references',
      {
        image_urls: [data.a as string, data.b as string],
        duration: '30',
        resolution: '720p',
        aspect_ratio: '21:9',
        sound: true,
      },
      requestId,
      controller.signal,
    );
    const reason = new Error('cancelled');
    // Abort once ffmpeg has started writing its partial file.
    const watcher = setInterval(() => {
      void readdir(outputDir).then(
        (names) => {
          if (names.some((n) => n.endsWith('.partial'))) controller.abort(reason);
        },
        () => undefined,
      );
    }, 10);
    try {
      await expect(pending).rejects.toBe(reason);
    } finally {
      clearInterval(watcher);
    }
    expect(await readdir(outputDir)).toEqual([]);
  });
});

describe('re-voicing model (service-horizon-studio)', () => {
  it('replaces the audio over the clip length, padding a shorter track with silence', async () => {
    const result = await render(
      'service-horizon-studio',
      { video_url: data.clip as string, audio_url: data.voiceShort as string },
      'hz-short',
    );
    const out = result.files[0]?.path as string;
    const probed = await probe(out);
    const video = stream(probed, 'video');
    const audio = stream(probed, 'audio');
    expect(video).toMatchObject({ codecName: 'h264', width: 320, height: 240 });
    expect(Math.abs((video?.duration ?? 0) - 3)).toBeLessThanOrEqual(FRAME);
    expect(Math.abs((audio?.duration ?? 0) - 3)).toBeLessThanOrEqual(FRAME);
    expect(Math.abs(result.outputSeconds - 3)).toBeLessThanOrEqual(FRAME);
    const original = await astats(join(filesDir, 'src', 'clip.mp4'), 0.1, 1.9);
    const voiced = await astats(out, 0.1, 1.9);
    const padded = await astats(out, 2.2, 2.9);
    expect(original.hz).toBeCloseTo(440, -1);
    expect(voiced.hz).toBeCloseTo(3000, -2);
    expect(voiced.rmsDb).toBeGreaterThan(-30);
    expect(padded.rmsDb).toBeLessThan(-80);
  });

  it('trims a longer track to the clip length', async () => {
    const result = await render(
      'service-horizon-studio',
      { video_url: data.clip as string, audio_url: data.voiceLong as string },
      'hz-long',
    );
    const out = result.files[0]?.path as string;
    const probed = await probe(out);
    expect(Math.abs(probed.duration - 3)).toBeLessThanOrEqual(FRAME);
    expect(Math.abs((stream(probed, 'audio')?.duration ?? 0) - 3)).toBeLessThanOrEqual(FRAME);
    const end = await astats(out, 2.2, 2.9);
    expect(end.hz).toBeCloseTo(1500, -2);
  });

  it('re-encodes a clip that is not H.264', async () => {
    const result = await render(
      'service-horizon-studio',
      { video_url: data.mpeg4Clip as string, audio_url: data.voiceShort as string },
      'hz-mpeg4',
    );
    const probed = await probe(result.files[0]?.path as string);
    expect(stream(probed, 'video')).toMatchObject({ codecName: 'h264', width: 176, height: 144 });
    expect(stream(probed, 'audio')?.codecName).toBe('aac');
    expect(Math.abs(probed.duration - 2)).toBeLessThanOrEqual(FRAME);
  });

  it('bills the probed clip length', async () => {
    const seconds = await runner.billedSeconds('service-horizon-studio', {
      video_url: data.clip as string,
      audio_url: data.voiceShort as string,
    });
    expect(Math.abs(seconds - 3)).toBeLessThanOrEqual(FRAME);
  });

  it('refuses a clip over 10 minutes, when quoting and when rendering', async () => {
    const input = { video_url: data.longClip as string, audio_url: data.voiceShort as string };
    expect(await failure(runner.billedSeconds('service-horizon-studio', input))).toMatchObject({
      code: 'input_too_long',
      path: 'video_url',
    });
    expect(await failure(render('service-horizon-studio', input, 'hz-too-long'))).toMatchObject({
      code: 'input_too_long',
      path: 'video_url',
    });
    expect(await readdir(join(filesDir, 'hz-too-long'))).toEqual([]);
  });

  it('refuses an audio input without audio', async () => {
    expect(
      await failure(
        render('service-horizon-studio', { video_url: data.clip as string, audio_url: data.a as string }, 'hz-mute'),
      ),
    ).toMatchObject({
      code: 'input_refused',
      path: 'audio_url',
    });
  });
});

describe('upscaling model', () => {
  it('doubles width and height and keeps duration and audio', async () => {
    const result = await render('service-upscale-video-fast', { video_url: data.clip as string }, 'up-clip');
    const probed = await probe(result.files[0]?.path as string);
    expect(stream(probed, 'video')).toMatchObject({ codecName: 'h264', width: 640, height: 480 });
    expect(Math.abs(probed.duration - 3)).toBeLessThanOrEqual(FRAME);
    expect(Math.abs((stream(probed, 'audio')?.duration ?? 0) - 3)).toBeLessThanOrEqual(FRAME);
    expect((await astats(result.files[0]?.path as string, 0.5, 2.5)).hz).toBeCloseTo(440, -1);
    await expect(
      runner.billedSeconds('service-upscale-video-fast', { video_url: data.clip as string }),
    ).resolves.toBeCloseTo(3, 1);
  });

  it('accepts an earlier output of the service as input', async () => {
    const first = await render(
      'service-video-cinema-long-form-from-references',
      { image_urls: [data.c as string], aspect_ratio: '9:16', duration: '4' },
      'chain-lf',
    );
    const url = `${ownOrigin}/files/chain-lf/${first.files[0]?.fileName}`;
    const result = await render('service-upscale-video-fast', { video_url: url }, 'chain-up');
    const probed = await probe(result.files[0]?.path as string);
    expect(stream(probed, 'video')).toMatchObject({ width: 540, height: 960 });
    expect(ratio(stream(probed, 'video')?.displayAspectRatio ?? null)).toBeCloseTo(9 / 16, 9);
    expect(Math.abs(probed.duration - 4)).toBeLessThanOrEqual(FRAME);
  });

  it('reads own URLs from the output directory only', async () => {
    for (const url of [
      `${ownOrigin}/files/..%2F..%2Fetc/passwd`,
      `${ownOrigin}/files/src/../../x.mp4`,
      `${ownOrigin}/files/a/b/c.mp4`,
      `${ownOrigin}/files/%2e%2e/clip.mp4`,
    ]) {
      expect(await failure(render('service-upscale-video-fast', { video_url: url }, 'up-escape'))).toMatchObject({
        code: 'input_refused',
        path: 'video_url',
      });
    }
    expect(
      await failure(
        render('service-upscale-video-fast', { video_url: `${ownOrigin}/files/src/nope.mp4` }, 'up-missing'),
      ),
    ).toMatchObject({
      code: 'input_fetch_failed',
      path: 'video_url',
    });
  });
});
