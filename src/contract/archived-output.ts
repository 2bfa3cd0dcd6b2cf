/**
 * Media references as data: how workflows, the spec and the media store name media without carrying
 * its bytes (the functions that read and check them are in src/media/reference.ts). No imports.
 *
 * A reference is `{ "$media": "sha256:<64 hex>", "type": "audio/wav", "bytes": 5292044 }`: the
 * content address of an object in the media store, its media type and its size. An archived output
 * also keeps the service's own `url`, used while it is still served (see docs/media-store.md).
 */

/** A content-addressed object of the media store, standing for a URI input. */
export interface MediaRef {
  $media: string;
  /** Media type (`video/mp4`, `audio/wav`, `image/png`, ...). */
  type: string;
  bytes: number;
  /** For an archived output: the service URL it was copied from, preferred while it is served. */
  url?: string;
}

/** One output of a step as archived: the service's URL and the store's copy. */
export interface ArchivedOutput extends MediaRef {
  /** The service URL the copy was made from (preferred by later steps while it is served). */
  url: string;
  file_name: string;
}
