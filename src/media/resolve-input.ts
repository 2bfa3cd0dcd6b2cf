import { safeFetch, SafeFetchError } from '../net';
import { MediaResolutionError } from './errors';
import { digestOf, mapMediaRefs, type MediaRef } from './reference';
import { MediaStoreError, type MediaStore } from './store';

/**
 * Turns media references into what the service accepts, at the moment of a call (inside the submit
 * and quote activities, never in workflow history): the service URL of an archived output while the
 * service still serves it, else a signed URL of the store, else (a store that cannot sign: the
 * filesystem) a base64 data URI built here.
 */

/** Largest total of media inlined as data URIs into one request (raw bytes; base64 adds a third). */
export const INLINE_REQUEST_MAX_BYTES = 36 * 1024 * 1024;

/** How one reference was resolved (logged; tests read it). */
export interface ResolvedMedia {
  field: string;
  $media: string;
  as: 'service-url' | 'signed-url' | 'data-uri';
}

export interface MediaResolverOptions {
  store: MediaStore;
  urlLifetimeSeconds: number;
  /** Origin of the configured service: its own output URLs may be private or plain http (local use). */
  serviceOrigin?: string;
  /** How long the "is the service URL still served" probe may take. Default 10 s. */
  probeTimeoutMs?: number;
}

export interface MediaResolver {
  /** A copy of `input` with every reference resolved, and how each was. */
  resolve(input: Record<string, unknown>): Promise<{ input: Record<string, unknown>; resolved: ResolvedMedia[] }>;
  /** True while `url` answers a GET with 2xx (only its headers are read). */
  isServed(url: string): Promise<boolean>;
}

export function createMediaResolver(options: MediaResolverOptions): MediaResolver {
  const { store } = options;

  async function isServed(url: string): Promise<boolean> {
    let own = false;
    try {
      own = options.serviceOrigin !== undefined && new URL(url).origin === new URL(options.serviceOrigin).origin;
    } catch {
      return false;
    }
    try {
      // maxBytes 0: the answer's headers say whether it is served; the body is not read.
      await safeFetch(url, { allowPrivate: own, maxBytes: 0, timeoutMs: options.probeTimeoutMs ?? 10_000 });
      return true;
    } catch (error) {
      if (error instanceof SafeFetchError && error.code === 'too_large') return true;
      if (error instanceof SafeFetchError) return false;
      throw error;
    }
  }

  async function resolve(input: Record<string, unknown>) {
    const resolved: ResolvedMedia[] = [];
    let inlined = 0;
    const output = await mapMediaRefs(input, async (ref: MediaRef, at) => {
      const field = at.join('.');
      if (ref.url && (await isServed(ref.url))) {
        resolved.push({ field, $media: ref.$media, as: 'service-url' });
        return ref.url;
      }
      const sha = digestOf(ref.$media);
      if (!sha) throw new MediaResolutionError(`${field}: ${ref.$media} is not a sha256: media address`, field, true);
      const object = await store.stat(sha);
      if (!object) {
        const why = ref.url ? `the service no longer serves ${ref.url} and ` : '';
        throw new MediaResolutionError(
          `${field}: ${why}${ref.$media} is not in the media store ${store.location}`,
          field,
          true,
        );
      }
      if (object.bytes !== ref.bytes) {
        throw new MediaResolutionError(
          `${field}: ${ref.$media} has ${object.bytes} bytes in the store, the reference says ${ref.bytes}`,
          field,
          true,
        );
      }
      const signed = await store.signedUrl(sha, options.urlLifetimeSeconds);
      if (signed) {
        resolved.push({ field, $media: ref.$media, as: 'signed-url' });
        return signed;
      }
      inlined += object.bytes;
      if (inlined > INLINE_REQUEST_MAX_BYTES) {
        throw new MediaResolutionError(
          `${field}: the media of this request add up to more than ${INLINE_REQUEST_MAX_BYTES} bytes, too many to send as data URIs; ` +
            'use an S3-compatible media store (REELFLOW_MEDIA_STORE=s3://...), which hands the service signed URLs',
          field,
          true,
        );
      }
      const chunks: Buffer[] = [];
      for await (const chunk of await store.read(sha)) chunks.push(chunk as Buffer);
      resolved.push({ field, $media: ref.$media, as: 'data-uri' });
      return `data:${ref.type};base64,${Buffer.concat(chunks).toString('base64')}`;
    }).catch((error: unknown) => {
      if (error instanceof MediaStoreError)
        throw new MediaResolutionError(error.message, '', error.code !== 'unavailable');
      throw error;
    });
    return { input: output as Record<string, unknown>, resolved };
  }

  return { resolve, isServed };
}
