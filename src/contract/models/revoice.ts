import type { z } from 'zod';
import { PROCESSING_SPEEDS } from '../limits';
import type { ModelDefinition } from './definition';

/**
 * The re-voicing model: a clip (up to 10 minutes) with its mouth matched to a new audio track,
 * priced per second of the clip. Its renderer in the local service:
 * src/local-service/media/models/revoice.ts.
 */

/** The spec's limits of a re-voicing input. */
export const REVOICE_LIMITS = {
  /** Longest clip accepted, in seconds (10 minutes). */
  maxClipSeconds: 600,
} as const;

/** The re-voicing model's definition (see ModelDefinition). */
export const REVOICE = {
  id: 'service-horizon-studio',
  purpose: 'Re-voice a video: the mouth is matched to a new audio track (clips up to 10 minutes).',
  inputSchema: (zod, uri) =>
    zod.strictObject({
      audio_url: uri,
      video_url: uri,
      processing_speed: zod.enum(PROCESSING_SPEEDS).optional(),
    }),
  limits: REVOICE_LIMITS,
  uriFields: ['audio_url', 'video_url'],
  uriListFields: [],
  expectedRunSeconds: 120,
  outputSeconds: (): number | null => null,
  price: {
    kind: 'per-second',
    clipField: 'video_url',
    maxClipSeconds: REVOICE_LIMITS.maxClipSeconds,
    localRates: { standard: 6, 'ultra-fast': 9 },
  },
  preflight: {
    clipLength: { field: 'video_url', maxSeconds: REVOICE_LIMITS.maxClipSeconds, doing: 're-voicing' },
  },
} as const satisfies ModelDefinition;

/** Input of the re-voicing model. */
export type RevoiceInput = z.infer<ReturnType<typeof REVOICE.inputSchema>>;
