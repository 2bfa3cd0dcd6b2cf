import type { Readable } from 'node:stream';
import { MediaStoreError } from './errors';

/** What the store knows about one object. */
export interface StoredObject {
  /** Hex SHA-256 of the content (the object's name). */
  sha256: string;
  type: string;
  bytes: number;
  createdAt: Date;
}

/** Bytes `start` to `end` of an object, both inclusive (an HTTP Range). */
export interface ByteRange {
  start: number;
  end: number;
}

/** One pipeline that references an object, and when it last did. */
export interface Referrer {
  pipeline: string;
  at: Date;
}

/**
 * The media store: content-addressed objects (named by their SHA-256), each with the pipelines that
 * reference it. Two backends: the filesystem (one machine) and S3-compatible object storage.
 */
export interface MediaStore {
  /** `file:///path` or `s3://bucket/prefix` (never credentials). */
  readonly location: string;
  /**
   * Adds a file whose SHA-256 the caller has computed (see hashFile); a no-op when the object exists.
   * The file is copied (streamed), never moved.
   */
  putFile(file: string, sha256: string, type: string, bytes: number): Promise<void>;
  /** The object's metadata, or null when it is absent. */
  stat(sha256: string): Promise<StoredObject | null>;
  /**
   * Streams the object's bytes (only `range.start`..`range.end`, both inclusive, when given: a page
   * of a batch manifest); throws MediaStoreError `not_found` when absent.
   */
  read(sha256: string, range?: ByteRange): Promise<Readable>;
  /**
   * A URL that serves the object without credentials for `lifetimeSeconds` (a presigned GET), or
   * null when the backend cannot serve one (the filesystem). Signed as of `signedAt` when given (else
   * now): the same arguments give the same URL, so a retried activity hands out the URL it did before.
   */
  signedUrl(sha256: string, lifetimeSeconds: number, signedAt?: Date): Promise<string | null>;
  /** Records that `pipeline` references the object (idempotent; refreshes the time). */
  addReferrer(sha256: string, pipeline: string): Promise<void>;
  referrers(sha256: string): Promise<Referrer[]>;
  /** Every object (order unspecified). */
  list(): AsyncIterable<StoredObject>;
  /** Removes the object and its referrer records; absent objects are fine. */
  delete(sha256: string): Promise<void>;
}

/** Pipeline names are safe names (letters, digits, . _ -), but a referrer key is escaped anyway. */
export function referrerKey(pipeline: string): string {
  return encodeURIComponent(pipeline);
}

export const HEX_SHA256 = /^[0-9a-f]{64}$/;

/** Throws unless `sha256` is 64 lowercase hex digits (object names never come from elsewhere). */
export function assertDigest(sha256: string): void {
  if (!HEX_SHA256.test(sha256))
    throw new MediaStoreError('invalid_config', `not a SHA-256 digest: ${sha256.slice(0, 80)}`);
}
