import { Command } from 'commander';
import {
  resumedStartOptions,
  schedulingFlags,
  schedulingStartOptions,
} from '../../../../src/cli/lib/scheduling-options';
import { pipelineStartOptions } from '../../../../src/pipeline-spec/ui-text';
import { validatePipelineSpec } from '../../../../src/pipeline-spec/spec';

/** `--priority`, `--fairness-key` and `--fairness-weight` as `reelflow run` and `reelflow batch` parse them. */
function parse(what: 'pipeline' | 'batch', args: string[]): Record<string, unknown> {
  const command = schedulingFlags(new Command('x').exitOverride().configureOutput({ writeErr: () => undefined }), what);
  command.parse(args, { from: 'user' });
  return command.opts();
}

describe('scheduling flags', () => {
  it('become Temporal start options, nothing when none is given', () => {
    expect(schedulingStartOptions(parse('batch', []))).toEqual({});
    expect(
      schedulingStartOptions(
        parse('batch', ['--priority', '1', '--fairness-key', 'tenant-a', '--fairness-weight', '3']),
      ),
    ).toEqual({ priority: { priorityKey: 1, fairnessKey: 'tenant-a', fairnessWeight: 3 } });
    expect(schedulingStartOptions(parse('pipeline', ['--priority', '5']))).toEqual({ priority: { priorityKey: 5 } });
  });

  it('a resumed pipeline keeps the priority, key and weight its earlier run had, else takes its spec’s priority', () => {
    const kept = { priorityKey: 2, fairnessKey: 'batch/nightly', fairnessWeight: 3 };
    expect(resumedStartOptions(kept, { priority: 5 })).toEqual({ priority: kept });
    // Temporal reports what was never set as 0 and "": the spec's priority, nothing else.
    expect(resumedStartOptions({ priorityKey: 0, fairnessKey: '', fairnessWeight: 0 }, { priority: 1 })).toEqual({
      priority: { priorityKey: 1 },
    });
    expect(resumedStartOptions(undefined, {})).toEqual({});
  });

  it('refuse a priority outside 1–5, a weight outside 0.001–1000 and a key over 64 bytes', () => {
    expect(() => parse('pipeline', ['--priority', '0'])).toThrow(/must be 1 \(highest\) to 5/);
    expect(() => parse('pipeline', ['--priority', '2.5'])).toThrow(/must be 1 \(highest\) to 5/);
    expect(() => parse('batch', ['--fairness-weight', '0'])).toThrow(/0\.001 to 1000/);
    expect(() => parse('batch', ['--fairness-key', 'k'.repeat(65)])).toThrow(/1 to 64 bytes/);
    // A lone pipeline has no fairness flags (its key is its name).
    expect(() => parse('pipeline', ['--fairness-key', 'a'])).toThrow(/unknown option/);
  });

  it('a spec’s top-level priority is checked (1–5) and starts the pipeline with it', () => {
    const spec = {
      name: 'rush',
      priority: 1,
      steps: [
        {
          id: 'generate',
          model: 'service-video-cinema-long-form-from-references',
          input: { image_urls: ['https://example.com/a.png'] },
        },
      ],
    };
    const checked = validatePipelineSpec(spec);
    expect(checked.ok).toBe(true);
    if (checked.ok) expect(pipelineStartOptions(checked.value).priority).toEqual({ priorityKey: 1 });
    const refused = validatePipelineSpec({ ...spec, priority: 6 });
    expect(refused.ok ? [] : refused.errors.map((error) => error.path)).toEqual(['priority']);
  });
});
