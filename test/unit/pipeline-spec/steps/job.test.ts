import { jobStepKind, jobStepSchema } from '../../../../src/pipeline-spec/steps/job';

describe('the paid job as a kind of step', () => {
  const step = jobStepSchema.parse({ id: 'up', model: 'service-upscale-video-fast', input: {} });

  it('checks the input against its model, with paths relative to the input', () => {
    expect(jobStepKind.checkInput(step, { video_url: 'https://example.com/a.mp4' })).toEqual([]);
    const problems = jobStepKind.checkInput(step, { video_url: 'ftp://example.com/a.mp4' });
    expect(problems).toHaveLength(1);
    expect(problems[0]?.path).toBe('video_url');
  });

  it('keeps the schema of version 1: unknown fields are refused', () => {
    expect(jobStepSchema.safeParse({ id: 'up', model: 'service-upscale-video-fast', input: {}, op: 'x' }).success).toBe(
      false,
    );
  });
});
