/**
 * Media references: how workflows name media without carrying its bytes. Pure (no I/O), so the
 * workflows, the spec validation and the activities all import it.
 *
 * A reference is `{ "$media": "sha256:<64 hex>", "type": "audio/wav", "bytes": 5292044 }`: the
 * content address of an object in the media store, its media type and its size. An archived output
 * also keeps the service's own `url`, used while it is still served (see docs/media-store.md).
 */

import type { ArchivedOutput, MediaRef } from '../contract';

/** The shapes are data of the contract (workflows read them); this module holds what reads and checks them. */
export type { ArchivedOutput, MediaRef };

const SHA256_ADDRESS = /^sha256:([0-9a-f]{64})$/;
const MEDIA_TYPE = /^[a-z0-9!#$&^_.+-]+\/[a-z0-9!#$&^_.+-]+$/i;

/** `sha256:<hex>` for a hex digest. */
export function mediaAddress(sha256Hex: string): string {
  return `sha256:${sha256Hex}`;
}

/** The hex digest of an address, or null when it is not `sha256:<64 lowercase hex>`. */
export function digestOf(address: string): string | null {
  return SHA256_ADDRESS.exec(address)?.[1] ?? null;
}

/** True when a value is shaped like a media reference (an object with a `$media` key). */
export function isMediaRef(value: unknown): value is MediaRef {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && '$media' in value;
}

/** Why a `$media` object is malformed, or null when it is a valid reference. */
export function mediaRefProblem(value: MediaRef): string | null {
  const keys = Object.keys(value).filter((k) => !['$media', 'type', 'bytes', 'url'].includes(k));
  if (keys.length > 0) return `unknown key ${keys.map((k) => `"${k}"`).join(', ')} in a media reference`;
  if (typeof value.$media !== 'string' || !digestOf(value.$media))
    return '$media must be "sha256:" and 64 lowercase hex digits';
  if (typeof value.type !== 'string' || !MEDIA_TYPE.test(value.type))
    return 'type must be a media type such as video/mp4';
  if (typeof value.bytes !== 'number' || !Number.isInteger(value.bytes) || value.bytes < 0)
    return 'bytes must be a whole number';
  if (value.url !== undefined && (typeof value.url !== 'string' || !/^https?:\/\//.test(value.url)))
    return 'url must be an http(s) URL';
  return null;
}

/** Calls `visit` on every media reference inside a value, with its location (`image_urls.3`). */
export function forEachMediaRef(
  value: unknown,
  visit: (ref: MediaRef, path: (string | number)[]) => void,
  at: (string | number)[] = [],
): void {
  if (isMediaRef(value)) visit(value, at);
  else if (Array.isArray(value)) value.forEach((item, i) => forEachMediaRef(item, visit, [...at, i]));
  else if (typeof value === 'object' && value !== null) {
    for (const [key, item] of Object.entries(value)) forEachMediaRef(item, visit, [...at, key]);
  }
}

/** A copy of `value` with every media reference replaced by `replace(ref, location)` (may be async). */
export async function mapMediaRefs(
  value: unknown,
  replace: (ref: MediaRef, path: (string | number)[]) => Promise<unknown>,
  at: (string | number)[] = [],
): Promise<unknown> {
  if (isMediaRef(value)) return replace(value, at);
  if (Array.isArray(value)) return Promise.all(value.map((item, i) => mapMediaRefs(item, replace, [...at, i])));
  if (typeof value === 'object' && value !== null) {
    const entries = await Promise.all(
      Object.entries(value).map(async ([key, item]) => [key, await mapMediaRefs(item, replace, [...at, key])] as const),
    );
    return Object.fromEntries(entries);
  }
  return value;
}
