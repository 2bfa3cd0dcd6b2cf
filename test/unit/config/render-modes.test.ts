import { RENDER_MODES } from '../../../src/config/render-modes';
import { VARIABLES } from '../../../src/config/variables';

describe('RENDER_MODES', () => {
  it('are what REELFLOW_SERVICE_RENDER accepts, ffmpeg by default', () => {
    expect(RENDER_MODES).toEqual(['ffmpeg', 'stub']);
    expect(VARIABLES.REELFLOW_SERVICE_RENDER.schema.parse(undefined)).toBe('ffmpeg');
    expect(VARIABLES.REELFLOW_SERVICE_RENDER.schema.safeParse('blender').success).toBe(false);
  });
});
