import { ReelflowError } from '../../contract';

/** Why a media-store operation failed. */
export type MediaStoreErrorCode = 'not_found' | 'integrity' | 'too_large' | 'unavailable' | 'invalid_config';

/** A store failure with a stable code. */
export class MediaStoreError extends ReelflowError {
  constructor(
    readonly code: MediaStoreErrorCode,
    message: string,
  ) {
    super(message);
  }
}
