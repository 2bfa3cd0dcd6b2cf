import { ReelflowError } from '../../contract';

/** Machine-readable reasons a render or a probe of model inputs fails. */
export type MediaErrorCode = 'input_fetch_failed' | 'input_refused' | 'input_too_long' | 'render_failed';

/**
 * Failure of the media layer with a stable `code` and, when an input is to blame, the input field
 * it came from (`path`, e.g. `image_urls.2`), so the service can answer with a field path.
 */
export class MediaError extends ReelflowError {
  readonly code: MediaErrorCode;
  readonly path?: string;

  constructor(code: MediaErrorCode, message: string, path?: string) {
    super(path ? `${path}: ${message}` : message);
    this.code = code;
    if (path !== undefined) this.path = path;
  }
}
