/** How the local service produces outputs: `ffmpeg` renders every job; `stub` hands out pre-rendered fixtures (a benchmarking aid). */
export const RENDER_MODES = ['ffmpeg', 'stub'] as const;
export type RenderMode = (typeof RENDER_MODES)[number];
