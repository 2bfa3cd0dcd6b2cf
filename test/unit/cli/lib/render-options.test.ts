import { Command } from 'commander';
import { addRenderFlags, renderOptions } from '../../../../src/cli/lib/render-options';

function parse(args: string[]) {
  const command = addRenderFlags(new Command('service').exitOverride().configureOutput({ writeErr: () => undefined }));
  return command.parse(args, { from: 'user' }).opts();
}

describe('render flags', () => {
  it('parses --render, --stub-hold-ms and --stub-fixtures', () => {
    expect(parse(['--render', 'stub', '--stub-hold-ms', '250', '--stub-fixtures', '/tmp/fx'])).toEqual({
      render: 'stub',
      stubHoldMs: 250,
      stubFixtures: '/tmp/fx',
    });
  });

  it.each([
    [['--render', 'blender'], /--render must be one of ffmpeg, stub, got "blender"/],
    [['--stub-hold-ms', '1.5'], /--stub-hold-ms must be a whole number of ms from 0 to 86400000/],
    [['--stub-hold-ms', '86400001'], /--stub-hold-ms must be a whole number/],
  ])('refuses %p', (args, message) => {
    expect(() => parse(args)).toThrow(message);
  });
});

describe('renderOptions', () => {
  it('gives the service options of the flags that were set', () => {
    expect(renderOptions({})).toEqual({});
    expect(renderOptions({ render: 'stub', stubFixtures: '/tmp/fx' })).toEqual({
      render: 'stub',
      stubFixturesDir: '/tmp/fx',
    });
    expect(renderOptions({ stubHoldMs: 0 })).toEqual({ stubHoldMs: 0 });
  });
});
