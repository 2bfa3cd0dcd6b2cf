import { checkOpInput, opStepKind, opStepSchema } from '../../../../src/pipeline-spec/steps/op';
import { OP_LIMITS, isOpStepOutput, opKeyOf } from '../../../../src/pipeline-spec/steps/op-types';
import { parsePipelineSpec, validatePipelineSpec } from '../../../../src/pipeline-spec/spec';

const URL_A = 'https://example.com/a.mp4';
const URL_B = 'https://example.com/b.mp4';
const AUDIO = 'https://example.com/voice.wav';

/** The spec's errors of a pipeline whose last step is `step`, after a paid step `gen`. */
function errorsOf(step: Record<string, unknown>) {
  const result = validatePipelineSpec({
    name: 'ops',
    steps: [{ id: 'gen', model: 'service-upscale-video-fast', input: { video_url: URL_A } }, step],
  });
  return result.ok ? [] : result.errors;
}

describe('the local media operation as a kind of step', () => {
  it('accepts each operation with literal URLs, references and media references', () => {
    const media = { $media: `sha256:${'a'.repeat(64)}`, type: 'video/mp4', bytes: 10 };
    const spec = parsePipelineSpec({
      name: 'ops',
      steps: [
        { id: 'gen', model: 'service-upscale-video-fast', input: { video_url: URL_A } },
        { id: 'cut', op: 'concat', input: { videos: [{ $from: 'gen' }, URL_B, media] } },
        { id: 'short', op: 'trim', input: { video: { $from: 'cut' }, start: 0.5, end: 2 } },
        { id: 'voiced', op: 'mux_audio', input: { video: { $from: 'short' }, audio: AUDIO, mode: 'mix' } },
        { id: 'still', op: 'frame', input: { video: { $from: 'voiced' }, at: 'last', format: 'jpeg' } },
        { id: 'up', model: 'service-upscale-video-fast', input: { video_url: { $from: 'voiced' } } },
      ],
    });
    expect(spec.steps.map((s) => ('op' in s ? s.op : s.model))).toEqual([
      'service-upscale-video-fast',
      'concat',
      'trim',
      'mux_audio',
      'frame',
      'service-upscale-video-fast',
    ]);
  });

  it('refuses an operation it does not know, at `op`', () => {
    expect(errorsOf({ id: 'x', op: 'blur', input: {} })).toEqual([
      { path: 'steps.1.op', message: expect.stringContaining('"mux_audio"') },
    ]);
  });

  it('refuses a field of another kind on an op step', () => {
    expect(errorsOf({ id: 'x', op: 'trim', input: { video: URL_A, start: 0, end: 1 }, preflight: false })).toEqual([
      { path: 'steps.1.preflight', message: 'is not a known field' },
    ]);
  });

  it('concat: needs at least two videos', () => {
    expect(errorsOf({ id: 'x', op: 'concat', input: { videos: [URL_A] } })).toEqual([
      { path: 'steps.1.input.videos', message: expect.stringContaining('2') },
    ]);
  });

  it(`concat: takes at most ${OP_LIMITS.maxConcatVideos} videos`, () => {
    const videos = Array.from({ length: OP_LIMITS.maxConcatVideos + 1 }, () => URL_A);
    expect(errorsOf({ id: 'x', op: 'concat', input: { videos } })).toEqual([
      { path: 'steps.1.input.videos', message: expect.stringContaining(String(OP_LIMITS.maxConcatVideos)) },
    ]);
  });

  it('concat: a video that is not an https URL is refused at its index', () => {
    expect(errorsOf({ id: 'x', op: 'concat', input: { videos: [URL_A, 'http://example.com/b.mp4'] } })).toEqual([
      { path: 'steps.1.input.videos.1', message: 'must use https (or be a base64 data URI)' },
    ]);
  });

  it('concat: a reference to a later step is refused', () => {
    expect(errorsOf({ id: 'x', op: 'concat', input: { videos: [URL_A, { $from: 'later' }] } })).toEqual([
      { path: 'steps.1.input.videos.1.$from', message: 'must name an earlier step (got "later")' },
    ]);
  });

  it('trim: start must come before end', () => {
    expect(errorsOf({ id: 'x', op: 'trim', input: { video: URL_A, start: 2, end: 2 } })).toEqual([
      { path: 'steps.1.input.end', message: 'must be after start' },
    ]);
  });

  it('trim: a negative start is refused', () => {
    expect(errorsOf({ id: 'x', op: 'trim', input: { video: URL_A, start: -1, end: 2 } })).toEqual([
      { path: 'steps.1.input.start', message: expect.stringContaining('0') },
    ]);
  });

  it('trim: seconds must be numbers, and the video is required', () => {
    expect(errorsOf({ id: 'x', op: 'trim', input: { start: '0', end: 2 } })).toEqual([
      { path: 'steps.1.input.video', message: expect.any(String) },
      { path: 'steps.1.input.start', message: expect.stringContaining('number') },
    ]);
  });

  it('mux_audio: the mode is replace or mix', () => {
    expect(errorsOf({ id: 'x', op: 'mux_audio', input: { video: URL_A, audio: AUDIO, mode: 'duck' } })).toEqual([
      { path: 'steps.1.input.mode', message: expect.stringContaining('"replace"') },
    ]);
  });

  it('mux_audio: needs its audio', () => {
    expect(errorsOf({ id: 'x', op: 'mux_audio', input: { video: URL_A } })).toEqual([
      { path: 'steps.1.input.audio', message: expect.any(String) },
    ]);
  });

  it('frame: `at` is seconds or "last"', () => {
    expect(errorsOf({ id: 'x', op: 'frame', input: { video: URL_A, at: 'first' } })).toEqual([
      { path: 'steps.1.input.at', message: 'must be seconds (a number ≥ 0) or "last"' },
    ]);
  });

  it('frame: an unknown input field is named', () => {
    expect(errorsOf({ id: 'x', op: 'frame', input: { video: URL_A, at: 1, quality: 9 } })).toEqual([
      { path: 'steps.1.input.quality', message: 'is not a known field' },
    ]);
  });

  it('leaves a fan-out item placeholder ({"$item": …}) to be checked per item', () => {
    const step = opStepSchema.parse({ id: 'x', op: 'trim', input: {} });
    expect(checkOpInput('trim', { video: URL_A, start: { $item: 'start' }, end: { $item: 'end' } })).toEqual([]);
    expect(opStepKind.checkInput(step, { video: { $item: 'clip' }, start: 0, end: -1 })).toEqual([
      { path: 'end', message: expect.stringContaining('0') },
    ]);
  });

  it('accepts a local service origin under its URI rules', () => {
    const rules = { allowedOrigins: ['http://127.0.0.1:8787'] };
    expect(checkOpInput('frame', { video: 'http://127.0.0.1:8787/files/r/out.mp4', at: 0 }, rules)).toEqual([]);
    expect(checkOpInput('frame', { video: 'http://127.0.0.1:8787/files/r/out.mp4', at: 0 })).toHaveLength(1);
  });
});

describe('op step outputs and keys', () => {
  it('names a node `<pipeline>/op/<step>[/<i>]`', () => {
    expect(opKeyOf('ad', 'cut')).toBe('ad/op/cut');
    expect(opKeyOf('ad', 'scenes', 2)).toBe('ad/op/scenes/2');
  });

  it("tells an operation's output from a job's result", () => {
    expect(isOpStepOutput({ model: 'op:concat', videos: [], archived: [] })).toBe(true);
    expect(isOpStepOutput({ model: 'service-upscale-video-fast', videos: [] })).toBe(false);
    expect(isOpStepOutput(undefined)).toBe(false);
  });
});
