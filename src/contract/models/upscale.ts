import type { z } from 'zod';
import { PROCESSING_SPEEDS } from '../limits';
import type { ModelDefinition } from './definition';

/**
 * The fast upscaling model: a clip at twice its width and height, priced per second of the clip.
 * Its renderer in the local service: src/local-service/media/models/upscale.ts.
 */

/** The fast upscaling model's definition (see ModelDefinition). */
export const UPSCALE = {
  id: 'service-upscale-video-fast',
  purpose: 'Fast video super-resolution.',
  inputSchema: (zod, uri) =>
    zod.strictObject({
      video_url: uri,
      processing_speed: zod.enum(PROCESSING_SPEEDS).optional(),
    }),
  limits: {},
  uriFields: ['video_url'],
  uriListFields: [],
  expectedRunSeconds: 60,
  frameScale: 2,
  outputSeconds: (): number | null => null,
  price: { kind: 'per-second', clipField: 'video_url', localRates: { standard: 2, 'ultra-fast': 3 } },
  preflight: {},
} as const satisfies ModelDefinition;

/** Input of the fast upscaling model. */
export type UpscaleVideoFastInput = z.infer<ReturnType<typeof UPSCALE.inputSchema>>;
