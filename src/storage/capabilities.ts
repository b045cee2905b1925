/**
 * Optional capabilities of a blob store. The core contract (blob-store.ts) is what every backend
 * does; what only some can do is asked for, not guessed with `instanceof` on a backend class (in
 * the spirit of tusd's composer, where a store declares the extensions it implements). Each
 * capability is the least one caller needs; a backend without it answers null and the caller
 * takes its portable path.
 */
import type { PartInfo } from "./blob-store.ts";
import type { WrittenFile } from "./disk.ts";
import type { LocalCredentials } from "./local-credentials.ts";

/**
 * Objects that are files on this machine. A caller that needs a real path for a bounded read of
 * a whole object (intent completion's SVG check) reads it in place instead of copying it out.
 */
export interface LocalFiles {
  /** Where the object's file is (it may not exist). Throws on a key that would leave the store. */
  pathOf(key: string): string;
}

/**
 * What the appliance's own S3-compatible endpoint (local-s3-endpoint.ts) needs: the secret it
 * verifies signatures with, the files it serves, and the writes of a PUT and of a multipart part.
 * Only a store whose presigned URLs point back at the appliance has one.
 */
export interface LocalEndpoint extends LocalFiles {
  readonly bucket: string;
  readonly credentials: LocalCredentials;
  size(key: string): Promise<number | null>;
  /** A whole object from a client's PUT; a `sha256Base64` that does not match stores nothing. */
  putObject(key: string, body: AsyncIterable<Uint8Array>, maxBytes: number, sha256Base64?: string | null): Promise<WrittenFile>;
  putPart(key: string, uploadId: string, partNumber: number, body: AsyncIterable<Uint8Array>): Promise<PartInfo>;
}

/**
 * Multipart uploads the store stages itself, listed so the housekeeping sweeper can abort those
 * no upload intent refers to. S3 buckets expire theirs with a lifecycle rule instead.
 */
export interface MultipartInventory {
  /** Each staged upload with its last modification (wall-clock ms). */
  multipartUploads(): { id: string; modifiedMs: number }[];
}

/**
 * A store the browser reaches at another origin (an S3 bucket). The dashboard sends large files
 * straight there, which a browser allows only when the bucket's CORS rules let the page's origin
 * PUT (with the headers a signed upload carries) and read the answer's ETag.
 */
export interface CrossOriginStore {
  /** What the bucket's CORS rules lack for a page at `pageOrigin` to upload (null: every origin must be allowed), or null when nothing. */
  browserUploadGap(pageOrigin: string | null): Promise<string | null>;
}
