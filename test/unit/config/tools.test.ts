import { toolPaths } from '../../../src/config/tools';

describe('toolPaths', () => {
  it('gives the paths that are set and leaves the others out', () => {
    expect(toolPaths({ FFMPEG_PATH: '/opt/ffmpeg', REELFLOW_FONT_FILE: '/fonts/a.ttf' })).toEqual({
      ffmpeg: '/opt/ffmpeg',
      fontFile: '/fonts/a.ttf',
    });
  });

  it('treats blank values as unset', () => {
    expect(toolPaths({ FFMPEG_PATH: '  ', FFPROBE_PATH: '' })).toEqual({});
  });
});
