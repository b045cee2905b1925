/**
 * The blob store contract shared by the local-disk and S3 backends. Callers see object keys,
 * never paths or buckets; bytes enter from memory or a stream (`put`: what the pipelines and
 * exports produce), from a file already staged on local disk (`importFile`: uploads streamed
 * through the API, moved rather than copied) or directly from clients through presigned URLs
 * (upload intents). What only one backend can do is an optional capability (capabilities.ts),
 * asked for by the caller that needs it.
 */
import type { CrossOriginStore, LocalEndpoint, LocalFiles, MultipartInventory } from "./capabilities.ts";

/** What `put` stores: bytes already in memory, or a stream read once to its end. */
export type BlobBody = Uint8Array | ReadableStream<Uint8Array> | AsyncIterable<Uint8Array>;

export interface ObjectDigest {
  size: number;
  /** Lower-case hex. */
  sha256: string;
}

export interface PresignPutOptions {
  contentType: string;
  /** Base64 SHA-256 the client must send as x-amz-checksum-sha256 (the store then verifies it). */
  checksumSha256Base64?: string;
  expiresInSeconds: number;
}

export interface PresignGetOptions {
  expiresInSeconds: number;
  /** Sets Content-Disposition on the download (attachment with this file name). */
  downloadName?: string;
  contentType?: string;
}

export interface CompletedPart {
  partNumber: number;
  etag: string;
}

export interface MultipartLayout {
  /** Every part is this size except a shorter last one. */
  partSize: number;
  totalSize: number;
}

export interface PartInfo {
  /** Quoted, as the store returns it. */
  etag: string;
  size: number;
}

/** Size and SHA-256 of a stream, read once. */
export async function digestStream(stream: AsyncIterable<Uint8Array>): Promise<ObjectDigest> {
  const hasher = new Bun.CryptoHasher("sha256");
  let size = 0;
  for await (const chunk of stream) {
    hasher.update(chunk);
    size += chunk.byteLength;
  }
  return { size, sha256: hasher.digest("hex") };
}

/** An object's whole content in memory (media the pipelines decode), or null when it does not exist. */
export async function readObject(blobs: Pick<BlobStore, "read">, key: string): Promise<Buffer | null> {
  const stream = await blobs.read(key);
  return stream ? Buffer.from(await new Response(stream).arrayBuffer()) : null;
}

/**
 * The origin of the store's signed URLs when it is not the appliance itself (an S3 bucket), for
 * the pages that send bytes there; null for the local store, whose URLs use the origin asked by.
 */
export async function signedUrlOrigin(blobs: BlobStore): Promise<string | null> {
  if (blobs.localEndpoint()) return null;
  // Signing is local work; a store that cannot sign (no credentials yet) names no origin, and its uploads fail on their own.
  return blobs.presignGet("origin-probe", { expiresInSeconds: 60 }, "").then((url) => new URL(url).origin, () => null);
}

/** ETags are compared without their quotes (clients pass them either way). */
export function normalizeEtag(etag: string): string {
  return etag.trim().replace(/^W\//, "").replace(/^"|"$/g, "").toLowerCase();
}

export interface BlobStore {
  readonly bucket: string;

  /**
   * Stores `body` as the whole object under `key`. Atomic and durable like importFile: readers
   * see the whole object or nothing, and once this resolves the object survives a crash. A body
   * that fails (a stream that errors) stores nothing and the key keeps what it held before.
   */
  put(key: string, body: BlobBody, contentType: string): Promise<void>;
  /**
   * Moves a fully written local file into the store under `key`. The file must be on the data
   * volume; it is consumed (renamed locally, uploaded and removed for S3). Atomic: readers see
   * the whole object or nothing, and once this resolves the object survives a crash.
   */
  importFile(key: string, path: string, contentType: string): Promise<void>;
  /** The object's bytes, or null when it does not exist. */
  read(key: string): Promise<ReadableStream<Uint8Array> | null>;
  /** Size in bytes, or null when the object does not exist. */
  size(key: string): Promise<number | null>;
  /** First bytes of the object (for type detection), or null when it does not exist. */
  head(key: string, bytes: number): Promise<Uint8Array | null>;
  /** Reads the whole object back and hashes it. */
  digest(key: string): Promise<ObjectDigest | null>;
  /** Idempotent. */
  delete(key: string): Promise<void>;
  /**
   * Called once the server has stopped its work: writes still in flight were never acknowledged,
   * so whatever they left behind goes now rather than at the next start.
   */
  close(): Promise<void>;

  /** `layout` is what the upload will hold (the local store writes parts straight into place). */
  createMultipartUpload(key: string, contentType: string, layout: MultipartLayout): Promise<string>;
  /** Assembles the parts in order; returns the final object's digest. */
  completeMultipartUpload(key: string, uploadId: string, parts: CompletedPart[]): Promise<ObjectDigest>;
  /**
   * What the store holds for one part: null when the part was never received, undefined when
   * the store cannot say (some S3-compatible servers lack ListParts; completion still checks).
   */
  getPart(key: string, uploadId: string, partNumber: number): Promise<PartInfo | null | undefined>;
  /** Idempotent. */
  abortMultipartUpload(key: string, uploadId: string): Promise<void>;

  /** `origin` is the base URL the client reached the API by (used by the local backend only). */
  presignPut(key: string, options: PresignPutOptions, origin: string): Promise<string>;
  presignPart(key: string, uploadId: string, partNumber: number, expiresInSeconds: number, origin: string): Promise<string>;
  presignGet(key: string, options: PresignGetOptions, origin: string): Promise<string>;

  // Optional capabilities (capabilities.ts): each answers null on a backend without it.
  /** Objects as files on this machine, for a caller that must read one in place. */
  localFiles(): LocalFiles | null;
  /** What the appliance's own S3-compatible endpoint needs to serve this store. */
  localEndpoint(): LocalEndpoint | null;
  /** Multipart uploads the store stages itself, for the sweeper of abandoned ones. */
  multipartInventory(): MultipartInventory | null;
  /** A store the browser reaches at another origin, for the check that its CORS rules let the dashboard upload. */
  crossOriginStore(): CrossOriginStore | null;
}
