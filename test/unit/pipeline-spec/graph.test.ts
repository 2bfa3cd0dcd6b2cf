import { parsePipelineSpec, topologicalOrder, validatePipelineSpec } from '../../../src/pipeline-spec';

const LONG_FORM = 'service-video-cinema-long-form-from-references';
const UPSCALE = 'service-upscale-video-fast';
const IMAGE = { image_urls: ['https://example.com/a.png'] };

function errorsOf(value: unknown) {
  const result = validatePipelineSpec(value);
  if (result.ok) throw new Error('expected the spec to be rejected');
  return result.errors;
}

const scene = (id: string, more: Record<string, unknown> = {}) => ({ id, model: LONG_FORM, input: IMAGE, ...more });
const upscale = (id: string, from: string, path?: string, more: Record<string, unknown> = {}) => ({
  id,
  model: UPSCALE,
  input: { video_url: path === undefined ? { $from: from } : { $from: from, path } },
  ...more,
});

describe('pipeline spec version 2 (the graph)', () => {
  it('accepts a diamond written in any order and orders it by its dependencies', () => {
    const spec = parsePipelineSpec({
      version: 2,
      name: 'diamond',
      steps: [
        upscale('join', 'left', undefined, { after: ['right'] }),
        upscale('left', 'a'),
        upscale('right', 'a'),
        scene('a'),
      ],
    });
    expect(topologicalOrder(spec.steps).map((s) => s.id)).toEqual(['a', 'left', 'right', 'join']);
  });

  it('refuses a cycle, naming it at the field that closes it', () => {
    const errors = errorsOf({
      version: 2,
      name: 'loop',
      steps: [upscale('a', 'c'), upscale('b', 'a'), scene('c', { after: ['b'] })],
    });
    expect(errors).toEqual([{ path: 'steps.0.input.video_url.$from', message: 'forms a cycle: a → c → b → a' }]);
  });

  it('refuses unknown ids in after and $from, and a step after itself', () => {
    const errors = errorsOf({
      version: 2,
      name: 'unknown',
      steps: [scene('a', { after: ['nope', 'a'] }), upscale('b', 'ghost')],
    });
    expect(errors).toEqual([
      { path: 'steps.1.input.video_url.$from', message: 'names no step of this spec (got "ghost")' },
      { path: 'steps.0.after.0', message: 'names no step of this spec (got "nope")' },
      { path: 'steps.0.after.1', message: 'a step cannot come after itself' },
    ]);
  });

  it('refuses after, each and onFailure on a version-1 spec, and a reference to a later step there', () => {
    const errors = errorsOf({
      name: 'v1',
      steps: [upscale('b', 'a'), scene('a', { after: ['b'], each: [{}], onFailure: 'continue' })],
    });
    expect(errors.map((e) => e.path)).toEqual([
      'steps.0.input.video_url.$from',
      'steps.1.after',
      'steps.1.each',
      'steps.1.onFailure',
    ]);
    expect(errors[1]?.message).toMatch(/needs "version": 2/);
  });

  it('refuses more than 100 items, and $item outside each', () => {
    const many = Array.from({ length: 101 }, (_, i) => ({ n: i }));
    expect(errorsOf({ version: 2, name: 'many', steps: [scene('a', { each: many })] })).toEqual([
      expect.objectContaining({ path: 'steps.0.each', message: 'has at most 100 items' }),
    ]);
    const outside = errorsOf({
      version: 2,
      name: 'outside',
      steps: [{ id: 'a', model: LONG_FORM, input: { image_urls: [{ $item: 'image' }] } }],
    });
    expect(outside).toContainEqual({
      path: 'steps.0.input.image_urls.0',
      message: '$item is read only in a step with each',
    });
  });

  it("checks a fan-out step's input once per item, and names an item without the field read", () => {
    const fanOut = {
      id: 'scenes',
      model: LONG_FORM,
      input: { image_urls: [{ $item: 'shot.image' }], prompt: { $item: 'prompt' } },
      each: [
        { shot: { image: 'https://example.com/1.png' }, prompt: 'one' },
        { shot: { image: 'https://example.com/2.png' } },
      ],
    };
    expect(errorsOf({ version: 2, name: 'items', steps: [fanOut] })).toEqual([
      { path: 'steps.0.each.1', message: 'prompt: the item has no field prompt (read by input.prompt)' },
    ]);
    fanOut.each[1] = { shot: { image: 'ftp://nowhere' }, prompt: 'two' };
    const [error] = errorsOf({ version: 2, name: 'items', steps: [fanOut] });
    expect(error?.path).toBe('steps.0.input.image_urls.0');
    expect(error?.message).toMatch(/^item 1: /);
  });

  it('refuses a reference that cannot fit the step it reads: an item that cannot have run, a list read as one', () => {
    const scenes = scene('scenes', { each: [{}, {}, {}] });
    expect(
      errorsOf({ version: 2, name: 'refs', steps: [scenes, upscale('up', 'scenes', '[3].videos[0].url')] }),
    ).toEqual([
      { path: 'steps.1.input.video_url.path', message: 'step "scenes" has 3 item(s): item 3 cannot have run' },
    ]);
    const [single] = errorsOf({ version: 2, name: 'refs', steps: [scenes, upscale('up', 'scenes')] });
    expect(single?.message).toMatch(/step "scenes" fans out: its output is a list; read "\[\*\]\.videos\[0\]\.url"/);
    const [notList] = errorsOf({
      version: 2,
      name: 'refs',
      steps: [scene('a'), upscale('up', 'a', '[0].videos[0].url')],
    });
    expect(notList?.message).toBe('step "a" has no each: its output is not a list');
    expect(
      validatePipelineSpec({ version: 2, name: 'refs', steps: [scenes, upscale('up', 'scenes', '[2].videos[0].url')] })
        .ok,
    ).toBe(true);
  });
});
