import type { ModelId, ModelInputs } from '../../../contract';
import type { ModelContext } from './common';

/** Frame size and length of a clip. */
export interface ClipShape {
  width: number;
  height: number;
  seconds: number;
}

/**
 * What the local service does for one model, in the model's module beside this file: its ffmpeg
 * render, the stem of its output's file name, and the shape of the clip the stub render mode
 * (`--render stub`) hands out instead.
 */
export interface ModelRenderer<M extends ModelId = ModelId> {
  /** Output file name: `<stem>-<request id>.mp4`. */
  stem: string;
  /** Renders the validated input into `ctx.outputDir/ctx.fileName`; returns the file's path. Throws MediaError. */
  render(input: ModelInputs[M], ctx: ModelContext): Promise<string>;
  /**
   * Frame size and length of the output the real render would produce, known without probing:
   * `sourceShape` gives the shape of an earlier stub output named by a URI input (null for any other
   * URI). Null when the stub cannot know it; the real runner then renders.
   */
  stubShape(input: ModelInputs[M], sourceShape: (uri: string) => ClipShape | null): ClipShape | null;
}
