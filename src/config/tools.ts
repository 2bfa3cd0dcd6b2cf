import { textOf, type Env } from './read';

/** The variables naming external tools (ffmpeg, ffprobe, a font), read by every process that renders or probes media. */
export const TOOL_VARIABLE_NAMES = ['FFMPEG_PATH', 'FFPROBE_PATH', 'REELFLOW_FONT_FILE'] as const;

/** Tool paths set in the environment (FFMPEG_PATH, FFPROBE_PATH, REELFLOW_FONT_FILE); unset ones are absent. */
export function toolPaths(env: Env = process.env): { ffmpeg?: string; ffprobe?: string; fontFile?: string } {
  const ffmpeg = textOf(env, 'FFMPEG_PATH');
  const ffprobe = textOf(env, 'FFPROBE_PATH');
  const fontFile = textOf(env, 'REELFLOW_FONT_FILE');
  return { ...(ffmpeg ? { ffmpeg } : {}), ...(ffprobe ? { ffprobe } : {}), ...(fontFile ? { fontFile } : {}) };
}
