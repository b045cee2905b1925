/**
 * The S3 blob store: any S3-compatible endpoint (AWS, MinIO, Ceph, ...) through the AWS SDK.
 * Presigned URLs point straight at the object store, so intent uploads never pass through
 * the appliance. S3 cannot add nosniff or a CSP per request, so objects the appliance writes
 * are stored with the type and disposition serving-policy.ts allows (an SVG is stored as an
 * opaque attachment), and presigned GETs ask for the same; the bucket should add the rest.
 */
import { createReadStream } from "node:fs";
import { rm } from "node:fs/promises";
import { Readable } from "node:stream";
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  GetBucketCorsCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListPartsCommand,
  NoSuchKey,
  NotFound,
  type S3Client,
} from "@aws-sdk/client-s3";
import { Upload } from "@aws-sdk/lib-storage";
import type { Clock } from "../clock.ts";
import { digestStream, type BlobBody, type BlobStore, type CompletedPart, type ObjectDigest, type PartInfo, type PresignGetOptions, type PresignPutOptions } from "./blob-store.ts";
import { Presigner } from "./presigner.ts";
import { browserUploadGap, type CorsRule } from "./bucket-cors.ts";
import type { CrossOriginStore } from "./capabilities.ts";
import { errorMessage } from "../errors.ts";
import { servedContentType, servedDisposition } from "./serving-policy.ts";

/** The object's own Content-Type and Content-Disposition: what a GET without overrides would answer. */
function storedHeaders(contentType: string): { ContentType: string; ContentDisposition?: string } {
  const type = servedContentType(contentType);
  const disposition = servedDisposition(type, null);
  return { ContentType: type, ...(disposition ? { ContentDisposition: disposition } : {}) };
}

/** lib-storage takes bytes, web streams and Node streams; any other async iterable becomes a Node stream. */
function uploadBody(body: BlobBody): Uint8Array | ReadableStream<Uint8Array> | Readable {
  if (body instanceof Uint8Array || body instanceof ReadableStream || body instanceof Readable) return body;
  return Readable.from(body);
}

function isMissing(err: unknown): boolean {
  return err instanceof NoSuchKey || err instanceof NotFound || (err as { name?: string })?.name === "NotFound" || (err as { $metadata?: { httpStatusCode?: number } })?.$metadata?.httpStatusCode === 404;
}

export class S3BlobStore implements BlobStore, CrossOriginStore {
  private readonly presigner: Presigner;
  /** Cleared when the endpoint answers ListParts with "not implemented" (s3rver, some gateways). */
  private listPartsSupported = true;

  constructor(
    private readonly client: S3Client,
    readonly bucket: string,
    clock: Clock,
  ) {
    this.presigner = new Presigner(client, bucket, clock);
  }

  // The objects are remote: nothing to read in place, no endpoint to mount, and abandoned
  // multipart uploads are the bucket's lifecycle rule's to expire.
  localFiles(): null {
    return null;
  }

  localEndpoint(): null {
    return null;
  }

  multipartInventory(): null {
    return null;
  }

  crossOriginStore(): CrossOriginStore {
    return this;
  }

  async browserUploadGap(pageOrigin: string | null): Promise<string | null> {
    let rules: CorsRule[];
    try {
      rules = (await this.client.send(new GetBucketCorsCommand({ Bucket: this.bucket }))).CORSRules ?? [];
    } catch (err) {
      if ((err as { name?: string })?.name !== "NoSuchCORSConfiguration") return `the bucket's CORS rules could not be read (${errorMessage(err)})`;
      rules = [];
    }
    return browserUploadGap(rules, pageOrigin);
  }

  /**
   * lib-storage sends a small body as one PutObject and a large one as a multipart upload of
   * 16 MiB parts (two in flight), so memory stays bounded whatever the stream's length. A body
   * that fails before the end never reaches the key: a single PUT is not sent, and a multipart
   * upload is aborted instead of completed.
   */
  async put(key: string, body: BlobBody, contentType: string): Promise<void> {
    await new Upload({
      client: this.client,
      params: { Bucket: this.bucket, Key: key, Body: uploadBody(body), ...storedHeaders(contentType) },
      partSize: 16 * 1024 * 1024,
      queueSize: 2,
    }).done();
  }

  /** Uploaded from disk, then the staged file is removed (the store consumes it, as locally). */
  async importFile(key: string, path: string, contentType: string): Promise<void> {
    const body = createReadStream(path);
    try {
      await this.put(key, body, contentType);
    } finally {
      // A failed upload may stop reading half-way; the descriptor must not wait for the collector.
      body.destroy();
    }
    await rm(path, { force: true });
  }

  private async getObject(key: string, range?: string) {
    try {
      return await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: key, ...(range ? { Range: range } : {}) }));
    } catch (err) {
      if (isMissing(err)) return null;
      throw err;
    }
  }

  async read(key: string): Promise<ReadableStream<Uint8Array> | null> {
    const object = await this.getObject(key);
    return object?.Body ? (object.Body.transformToWebStream() as ReadableStream<Uint8Array>) : null;
  }

  async size(key: string): Promise<number | null> {
    try {
      const head = await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: key }));
      return head.ContentLength ?? 0;
    } catch (err) {
      if (isMissing(err)) return null;
      throw err;
    }
  }

  async head(key: string, bytes: number): Promise<Uint8Array | null> {
    const size = await this.size(key);
    if (size === null) return null;
    if (size === 0) return new Uint8Array();
    const object = await this.getObject(key, `bytes=0-${Math.min(bytes, size) - 1}`);
    return object?.Body ? await object.Body.transformToByteArray() : null;
  }

  async digest(key: string): Promise<ObjectDigest | null> {
    const stream = await this.read(key);
    return stream ? digestStream(stream) : null;
  }

  async delete(key: string): Promise<void> {
    await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: key }));
  }

  /** Nothing is written locally; the client's pooled connections are closed. */
  async close(): Promise<void> {
    this.client.destroy();
  }

  async createMultipartUpload(key: string, contentType: string): Promise<string> {
    // S3 needs no layout up front; parts may arrive in any size the client chose.
    const out = await this.client.send(new CreateMultipartUploadCommand({ Bucket: this.bucket, Key: key, ...storedHeaders(contentType) }));
    if (!out.UploadId) throw new Error("the object store returned no UploadId");
    return out.UploadId;
  }

  async completeMultipartUpload(key: string, uploadId: string, parts: CompletedPart[]): Promise<ObjectDigest> {
    await this.client.send(
      new CompleteMultipartUploadCommand({
        Bucket: this.bucket,
        Key: key,
        UploadId: uploadId,
        MultipartUpload: { Parts: parts.map((p) => ({ PartNumber: p.partNumber, ETag: p.etag })) },
      }),
    );
    const digest = await this.digest(key);
    if (!digest) throw new Error(`object ${key} is missing right after its multipart upload completed`);
    return digest;
  }

  async getPart(key: string, uploadId: string, partNumber: number): Promise<PartInfo | null | undefined> {
    if (!this.listPartsSupported) return undefined;
    try {
      const out = await this.client.send(
        new ListPartsCommand({ Bucket: this.bucket, Key: key, UploadId: uploadId, PartNumberMarker: String(partNumber - 1), MaxParts: 1 }),
      );
      const part = out.Parts?.find((p) => p.PartNumber === partNumber);
      return part?.ETag ? { etag: part.ETag, size: part.Size ?? 0 } : null;
    } catch (err) {
      const status = (err as { $metadata?: { httpStatusCode?: number } })?.$metadata?.httpStatusCode;
      const name = (err as { name?: string })?.name;
      if (status === 405 || status === 501 || name === "NotImplemented" || name === "MethodNotAllowed") {
        this.listPartsSupported = false;
        return undefined;
      }
      throw err;
    }
  }

  async abortMultipartUpload(key: string, uploadId: string): Promise<void> {
    try {
      await this.client.send(new AbortMultipartUploadCommand({ Bucket: this.bucket, Key: key, UploadId: uploadId }));
    } catch (err) {
      if ((err as { name?: string })?.name !== "NoSuchUpload" && !isMissing(err)) throw err;
    }
  }

  presignPut(key: string, options: PresignPutOptions): Promise<string> {
    return this.presigner.put(key, options);
  }

  presignPart(key: string, uploadId: string, partNumber: number, expiresInSeconds: number): Promise<string> {
    return this.presigner.part(key, uploadId, partNumber, expiresInSeconds);
  }

  presignGet(key: string, options: PresignGetOptions): Promise<string> {
    return this.presigner.get(key, options);
  }
}
