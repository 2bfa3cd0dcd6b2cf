import { createReadStream } from 'node:fs';
import type { Readable } from 'node:stream';
import type * as S3 from '@aws-sdk/client-s3';
import type * as Presigner from '@aws-sdk/s3-request-presigner';
import { requireOptional } from '../../config/optional-packages';
import { MediaStoreError } from './errors';
import { assertDigest, referrerKey, type MediaStore, type Referrer, type StoredObject } from './types';

/** Settings of the S3-compatible backend (from REELFLOW_MEDIA_* in src/config/media.ts). */
export interface S3StoreSettings {
  bucket: string;
  /** Key prefix without leading or trailing slash ('' for the bucket root). */
  prefix: string;
  /** Custom endpoint (MinIO, R2, ...); absent = AWS. */
  endpoint?: string;
  region: string;
  /** Absent = the SDK's default credential chain (AWS_* variables, profiles, instance roles). */
  credentials?: { accessKeyId: string; secretAccessKey: string };
  /** Path-style addressing (`endpoint/bucket/key`); MinIO and most self-hosted servers need it. */
  forcePathStyle: boolean;
}

/**
 * The AWS SDK, loaded on first use: it costs ~170 ms of start-up, which every `reelflow` command would
 * pay before its first request although only an s3:// store needs it.
 */
function loadSdk(): typeof S3 & typeof Presigner {
  // Optional peers of the package: a missing one is a MissingPackageError naming it.
  return {
    ...requireOptional<typeof S3>('@aws-sdk/client-s3'),
    ...requireOptional<typeof Presigner>('@aws-sdk/s3-request-presigner'),
  };
}

function isNotFound(error: unknown, S3ServiceException: typeof S3.S3ServiceException): boolean {
  if (error instanceof S3ServiceException)
    return error.$metadata.httpStatusCode === 404 || error.name === 'NotFound' || error.name === 'NoSuchKey';
  return false;
}

/**
 * The S3-compatible backend: `<prefix>/objects/<sha256>` (content type and size as the object's own
 * headers, creation time as its LastModified) and `<prefix>/referrers/<sha256>/<pipeline>` empty
 * objects whose LastModified is the last reference (one key per pipeline: concurrent adds never race).
 * Objects are served to the service through presigned GET URLs.
 */
export function createS3Store(settings: S3StoreSettings): MediaStore & { client: S3.S3Client } {
  const {
    DeleteObjectCommand,
    DeleteObjectsCommand,
    GetObjectCommand,
    HeadObjectCommand,
    ListObjectsV2Command,
    PutObjectCommand,
    S3Client,
    S3ServiceException,
    getSignedUrl,
  } = loadSdk();
  const client = new S3Client({
    region: settings.region,
    forcePathStyle: settings.forcePathStyle,
    ...(settings.endpoint ? { endpoint: settings.endpoint } : {}),
    ...(settings.credentials ? { credentials: settings.credentials } : {}),
  });
  const base = settings.prefix ? `${settings.prefix}/` : '';
  const objectKey = (sha: string) => `${base}objects/${sha}`;
  const referrerPrefix = (sha: string) => `${base}referrers/${sha}/`;
  const Bucket = settings.bucket;

  const place: S3Place = { client, Bucket, base, S3ServiceException, HeadObjectCommand, ListObjectsV2Command };
  const call = <T>(what: string, run: () => Promise<T>) => callS3(place, what, run);
  const head = (sha256: string) => headObject(place, sha256);
  const keys = (prefix: string) => listKeys(place, prefix);

  return {
    client,
    location: `s3://${Bucket}/${settings.prefix}`,
    async putFile(file, sha256, type, bytes) {
      if (await head(sha256)) return;
      // The SDK computes a CRC32 of the streamed body, and the server checks it: a corrupted upload fails.
      await call('PUT', () =>
        client.send(
          new PutObjectCommand({
            Bucket,
            Key: objectKey(sha256),
            Body: createReadStream(file),
            ContentLength: bytes,
            ContentType: type,
            Metadata: { sha256 },
          }),
        ),
      );
    },
    stat: head,
    async read(sha256, range) {
      assertDigest(sha256);
      try {
        const answer = await client.send(
          new GetObjectCommand({
            Bucket,
            Key: objectKey(sha256),
            ...(range ? { Range: `bytes=${range.start}-${range.end}` } : {}),
          }),
        );
        return answer.Body as Readable;
      } catch (error) {
        if (isNotFound(error, S3ServiceException))
          throw new MediaStoreError('not_found', `sha256:${sha256} is not in the media store s3://${Bucket}/${base}`);
        return call('GET', () => Promise.reject(error));
      }
    },
    async signedUrl(sha256, lifetimeSeconds, signedAt) {
      assertDigest(sha256);
      return getSignedUrl(client, new GetObjectCommand({ Bucket, Key: objectKey(sha256) }), {
        expiresIn: lifetimeSeconds,
        ...(signedAt ? { signingDate: signedAt } : {}),
      });
    },
    async addReferrer(sha256, pipeline) {
      assertDigest(sha256);
      await call('PUT', () =>
        client.send(
          new PutObjectCommand({
            Bucket,
            Key: `${referrerPrefix(sha256)}${referrerKey(pipeline)}`,
            Body: new Uint8Array(0),
            ContentLength: 0,
          }),
        ),
      );
    },
    async referrers(sha256) {
      assertDigest(sha256);
      const found: Referrer[] = [];
      const prefix = referrerPrefix(sha256);
      for await (const item of keys(prefix))
        found.push({ pipeline: decodeURIComponent(item.key.slice(prefix.length)), at: item.at });
      return found;
    },
    async *list() {
      const prefix = `${base}objects/`;
      for await (const item of keys(prefix)) {
        const sha256 = item.key.slice(prefix.length);
        if (!/^[0-9a-f]{64}$/.test(sha256)) continue;
        const object = await head(sha256);
        if (object) yield object;
      }
    },
    async delete(sha256) {
      assertDigest(sha256);
      await call('DELETE', () => client.send(new DeleteObjectCommand({ Bucket, Key: objectKey(sha256) })));
      const markers: { Key: string }[] = [];
      for await (const item of keys(referrerPrefix(sha256))) markers.push({ Key: item.key });
      if (markers.length > 0)
        await call('DELETE', () => client.send(new DeleteObjectsCommand({ Bucket, Delete: { Objects: markers } })));
    },
  };
}

/** The bucket and prefix a store works in, with what its shared helpers need of the SDK. */
interface S3Place {
  readonly client: S3.S3Client;
  readonly Bucket: string;
  /** The key prefix with its trailing slash ('' for the bucket root). */
  readonly base: string;
  readonly S3ServiceException: typeof S3.S3ServiceException;
  readonly HeadObjectCommand: typeof S3.HeadObjectCommand;
  readonly ListObjectsV2Command: typeof S3.ListObjectsV2Command;
}

/** Runs an S3 call; a failure that is not already a MediaStoreError becomes one (`unavailable`). */
async function callS3<T>({ Bucket, base }: S3Place, what: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    if (error instanceof MediaStoreError) throw error;
    const name = error instanceof Error ? error.name : 'Error';
    throw new MediaStoreError(
      'unavailable',
      `S3 ${what} on s3://${Bucket}/${base} failed: ${name}: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
}

async function headObject(place: S3Place, sha256: string): Promise<StoredObject | null> {
  const { client, Bucket, S3ServiceException, HeadObjectCommand } = place;
  assertDigest(sha256);
  try {
    const answer = await client.send(new HeadObjectCommand({ Bucket, Key: `${place.base}objects/${sha256}` }));
    return {
      sha256,
      type: answer.ContentType ?? 'application/octet-stream',
      bytes: answer.ContentLength ?? 0,
      createdAt: answer.LastModified ?? new Date(0),
    };
  } catch (error) {
    if (isNotFound(error, S3ServiceException)) return null;
    return callS3(place, 'HEAD', () => Promise.reject(error));
  }
}

/** Every key under `prefix`, page by page. */
async function* listKeys(place: S3Place, prefix: string): AsyncGenerator<{ key: string; at: Date; bytes: number }> {
  const { client, Bucket, ListObjectsV2Command } = place;
  let token: string | undefined;
  do {
    const page = await callS3(place, 'LIST', () =>
      client.send(new ListObjectsV2Command({ Bucket, Prefix: prefix, ...(token ? { ContinuationToken: token } : {}) })),
    );
    for (const item of page.Contents ?? []) {
      if (item.Key) yield { key: item.Key, at: item.LastModified ?? new Date(0), bytes: item.Size ?? 0 };
    }
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token);
}
