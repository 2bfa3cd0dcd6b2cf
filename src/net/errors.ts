import { ReelflowError } from '../contract';

/** Why a safe fetch failed: refused by the address rules, or a transport / size / time failure. */
export type SafeFetchErrorCode = 'refused' | 'too_large' | 'timeout' | 'http_status' | 'network' | 'too_many_redirects';

/** Failure of `safeFetch` / `safeDownload` with a stable code. An abort by the caller throws its reason instead. */
export class SafeFetchError extends ReelflowError {
  readonly status?: number;

  constructor(
    readonly code: SafeFetchErrorCode,
    message: string,
    status?: number,
  ) {
    super(message);
    if (status !== undefined) this.status = status;
  }
}
