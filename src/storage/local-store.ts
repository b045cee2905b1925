/**
 * The local-disk blob store (the default). Objects live under `<data>/blobs/objects/<key>`;
 * multipart uploads collect their parts under `<data>/blobs/multipart/<uploadId>/` until they
 * are completed or aborted (directories from DataDir). Presigned URLs point at the appliance's
 * own S3-compatible endpoint (local-s3-endpoint.ts), signed with a secret generated on first
 * start; the store offers that endpoint, real file paths and its multipart inventory as optional
 * capabilities (capabilities.ts).
 */
import { existsSync, mkdirSync, readdirSync, rmSync, statSync } from "node:fs";
import { open, readFile, rm, stat, writeFile } from "node:fs/promises";
import { join, resolve, sep } from "node:path";
import type { Clock } from "../clock.ts";
import { digestStream, normalizeEtag, type BlobBody, type BlobStore, type CompletedPart, type MultipartLayout, type ObjectDigest, type PartInfo, type PresignGetOptions, type PresignPutOptions } from "./blob-store.ts";
import { digestFileOffThread } from "./hash-threads.ts";
import type { LocalEndpoint, LocalFiles, MultipartInventory } from "./capabilities.ts";
import type { LocalBlobLayout } from "./data-dir.ts";
import { commitFile, fsyncDir, readHead, ShortWriteError, SizeLimitError, writeRange, writeStreamAtomically, type WrittenFile } from "./disk.ts";
import type { LocalCredentials } from "./local-credentials.ts";
import { makeS3Client, Presigner } from "./presigner.ts";
import { PrefixDigests } from "./prefix-digest.ts";

export const LOCAL_BUCKET = "mediabox";
export const LOCAL_S3_PATH = "/s3";

export class LocalStoreError extends Error {
  constructor(
    readonly code: "NoSuchKey" | "NoSuchUpload" | "InvalidPart" | "InvalidPartOrder" | "InvalidArgument" | "BadDigest",
    message: string,
  ) {
    super(message);
    this.name = "LocalStoreError";
  }
}

interface MultipartMeta extends MultipartLayout {
  key: string;
  contentType: string;
}

/** The preallocated object inside a multipart upload's directory. */
const ASSEMBLY = "object";

/** Runs tasks with the same key one after another. */
class KeyedLock {
  private readonly tails = new Map<string, Promise<unknown>>();
  async run<T>(key: string, task: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(key) ?? Promise.resolve();
    const current = previous.catch(() => undefined).then(task);
    this.tails.set(key, current);
    try {
      return await current;
    } finally {
      if (this.tails.get(key) === current) this.tails.delete(key);
    }
  }
}

/** A part's recorded ETag and size, or null when absent or torn by a crash (it must be sent again). */
async function readPart(dir: string, partNumber: number): Promise<PartInfo | null> {
  try {
    return JSON.parse(await readFile(join(dir, `${partNumber}.etag`), "utf8")) as PartInfo;
  } catch {
    return null;
  }
}

/** Read and hashed on a hashing thread where there is one: completing a 1 GB upload hashes it all. */
async function digestFile(path: string): Promise<ObjectDigest> {
  return (await digestFileOffThread(path)) ?? digestStream(Bun.file(path).stream());
}

/** Bytes in memory as a one-chunk stream, so every body takes the same durable write. */
async function* chunksOf(body: BlobBody): AsyncIterable<Uint8Array> {
  if (body instanceof Uint8Array) yield body;
  else yield* body as AsyncIterable<Uint8Array>;
}

export class LocalBlobStore implements BlobStore, LocalEndpoint, LocalFiles, MultipartInventory {
  readonly bucket = LOCAL_BUCKET;
  private readonly objects: string;
  private readonly multipart: string;
  private readonly tmp: string;
  private readonly presigners = new Map<string, Presigner>();
  private readonly partLocks = new KeyedLock();
  /** Multipart objects hashed while their parts arrive, so completing hashes only the rest. */
  private readonly prefixes = new PrefixDigests();

  constructor(
    layout: LocalBlobLayout,
    readonly credentials: LocalCredentials,
    private readonly clock: Clock,
  ) {
    this.objects = layout.objects;
    this.multipart = layout.multipart;
    this.tmp = layout.tmp;
    for (const dir of [this.objects, this.multipart, this.tmp]) mkdirSync(dir, { recursive: true });
    // Whatever is in tmp was being written when the process died: never acknowledged, so drop it.
    this.dropUnfinishedWrites();
  }

  /** A stage still writing when the server stopped (its job handed back) leaves its partial file. */
  async close(): Promise<void> {
    this.dropUnfinishedWrites();
  }

  private dropUnfinishedWrites(): void {
    for (const name of readdirSync(this.tmp)) rmSync(join(this.tmp, name), { force: true, recursive: true });
  }

  pathOf(key: string): string {
    const path = resolve(this.objects, key);
    if (!key || key.startsWith("/") || key.split("/").includes("..") || !path.startsWith(this.objects + sep)) {
      throw new LocalStoreError("InvalidArgument", `invalid object key "${key}"`);
    }
    return path;
  }

  // The whole object is local; there is nothing to ask for, and these answer the store itself.
  localFiles(): LocalFiles {
    return this;
  }

  localEndpoint(): LocalEndpoint {
    return this;
  }

  multipartInventory(): MultipartInventory {
    return this;
  }

  /** Signed URLs use the origin the client asked by: the page's own. */
  crossOriginStore(): null {
    return null;
  }

  /** Content types are not kept on disk: the local endpoint serves by serving-policy.ts from what the URL signed. */
  async put(key: string, body: BlobBody): Promise<void> {
    await writeStreamAtomically(chunksOf(body), this.pathOf(key), this.tmp);
  }

  /** A rename: the staged file is on the same volume (DataDir keeps staging beside the blobs). */
  async importFile(key: string, path: string): Promise<void> {
    await commitFile(path, this.pathOf(key));
  }

  /**
   * Stores a stream as a whole object (the local endpoint's PUT). With `sha256Base64` the bytes
   * must match it or nothing changes (an existing object stays), as S3 does with BadDigest.
   */
  async putObject(key: string, body: AsyncIterable<Uint8Array>, maxBytes: number, sha256Base64?: string | null): Promise<WrittenFile> {
    return writeStreamAtomically(body, this.pathOf(key), this.tmp, {
      maxBytes,
      md5: true,
      verify: (written) => {
        if (sha256Base64 && Buffer.from(written.sha256, "hex").toString("base64") !== sha256Base64) {
          throw new LocalStoreError("BadDigest", "The SHA256 you specified did not match the calculated checksum.");
        }
      },
    });
  }

  async read(key: string): Promise<ReadableStream<Uint8Array> | null> {
    const path = this.pathOf(key);
    if (!existsSync(path)) return null;
    return Bun.file(path).stream();
  }

  async size(key: string): Promise<number | null> {
    try {
      return (await stat(this.pathOf(key))).size;
    } catch {
      return null;
    }
  }

  async head(key: string, bytes: number): Promise<Uint8Array | null> {
    const path = this.pathOf(key);
    if (!existsSync(path)) return null;
    return readHead(path, bytes);
  }

  async digest(key: string): Promise<ObjectDigest | null> {
    const path = this.pathOf(key);
    return existsSync(path) ? digestFile(path) : null;
  }

  async delete(key: string): Promise<void> {
    await rm(this.pathOf(key), { force: true });
  }

  /**
   * The object is preallocated (sparse) in the upload's directory and each part is written
   * straight into its range, so completing is a hash pass and a rename rather than a copy of
   * every byte. That needs the layout up front, which the appliance always knows: it creates
   * every multipart upload itself, for an upload intent.
   */
  async createMultipartUpload(key: string, contentType: string, layout: MultipartLayout): Promise<string> {
    this.pathOf(key);
    const uploadId = crypto.randomUUID().replaceAll("-", "");
    const dir = join(this.multipart, uploadId);
    mkdirSync(dir, { recursive: true });
    const handle = await open(join(dir, ASSEMBLY), "w", 0o640);
    try {
      await handle.truncate(layout.totalSize);
      await handle.sync();
    } finally {
      await handle.close();
    }
    const meta: MultipartMeta = { key, contentType, ...layout };
    await writeFile(join(dir, "meta.json"), JSON.stringify(meta));
    await fsyncDir(dir);
    return uploadId;
  }

  private async upload(key: string, uploadId: string): Promise<{ dir: string; meta: MultipartMeta }> {
    const dir = join(this.multipart, uploadId);
    if (!/^[0-9a-f]{32}$/.test(uploadId) || !existsSync(join(dir, "meta.json"))) {
      throw new LocalStoreError("NoSuchUpload", `no multipart upload ${uploadId}`);
    }
    const meta = JSON.parse(await readFile(join(dir, "meta.json"), "utf8")) as MultipartMeta;
    if (meta.key !== key) throw new LocalStoreError("NoSuchUpload", `multipart upload ${uploadId} is not for this key`);
    return { dir, meta };
  }

  /**
   * Stores one part (the local endpoint's UploadPart) into its range of the object; the ETag is
   * the part's quoted MD5, as on S3. A part must have exactly its layout size. Concurrent PUTs of
   * the same part are serialized; the last one wins, as on S3.
   */
  async putPart(key: string, uploadId: string, partNumber: number, body: AsyncIterable<Uint8Array>): Promise<PartInfo> {
    const { dir, meta } = await this.upload(key, uploadId);
    const totalParts = Math.ceil(meta.totalSize / meta.partSize);
    if (partNumber > totalParts) throw new LocalStoreError("InvalidArgument", `this upload has ${totalParts} parts`);
    const expected = partNumber < totalParts ? meta.partSize : meta.totalSize - meta.partSize * (totalParts - 1);
    return this.partLocks.run(`${uploadId}/${partNumber}`, async () => {
      const sidecar = join(dir, `${partNumber}.etag`);
      this.prefixes.partStarted(uploadId, partNumber);
      try {
        // The range is about to change: until the new part is durable, the part does not exist.
        await rm(sidecar, { force: true });
        let written: { size: number; md5: string };
        try {
          written = await writeRange(body, join(dir, ASSEMBLY), (partNumber - 1) * meta.partSize, expected);
        } catch (err) {
          if (err instanceof SizeLimitError || err instanceof ShortWriteError) {
            throw new LocalStoreError("InvalidArgument", `part ${partNumber} must be exactly ${expected} bytes`);
          }
          throw err;
        }
        const part: PartInfo = { etag: `"${written.md5}"`, size: written.size };
        await writeFile(sidecar, JSON.stringify(part));
        return part;
      } finally {
        this.prefixes.partEnded(uploadId, partNumber, { path: join(dir, ASSEMBLY), partSize: meta.partSize, totalSize: meta.totalSize }, async (n) => (await readPart(dir, n)) !== null);
      }
    });
  }

  async getPart(key: string, uploadId: string, partNumber: number): Promise<PartInfo | null> {
    const { dir } = await this.upload(key, uploadId);
    return readPart(dir, partNumber);
  }

  async completeMultipartUpload(key: string, uploadId: string, parts: CompletedPart[]): Promise<ObjectDigest> {
    const { dir, meta } = await this.upload(key, uploadId);
    const totalParts = Math.ceil(meta.totalSize / meta.partSize);
    if (parts.length !== totalParts) throw new LocalStoreError("InvalidPart", `all ${totalParts} parts are required, got ${parts.length}`);
    for (const [i, part] of parts.entries()) {
      if (part.partNumber !== i + 1) throw new LocalStoreError("InvalidPartOrder", "parts must be listed once each, in ascending order");
      const stored = await readPart(dir, part.partNumber);
      if (!stored) throw new LocalStoreError("InvalidPart", `part ${part.partNumber} was not uploaded`);
      if (normalizeEtag(stored.etag) !== normalizeEtag(part.etag)) {
        throw new LocalStoreError("InvalidPart", `part ${part.partNumber}: the ETag does not match the uploaded part`);
      }
    }
    const assembly = join(dir, ASSEMBLY);
    const digest = (await this.prefixes.complete(uploadId, { path: assembly, partSize: meta.partSize, totalSize: meta.totalSize })) ?? (await digestFile(assembly));
    await commitFile(assembly, this.pathOf(key));
    await rm(dir, { recursive: true, force: true });
    return digest;
  }

  async abortMultipartUpload(_key: string, uploadId: string): Promise<void> {
    if (!/^[0-9a-f]{32}$/.test(uploadId)) return;
    this.prefixes.forget(uploadId);
    await rm(join(this.multipart, uploadId), { recursive: true, force: true });
  }

  /** Multipart uploads on disk (last modified, wall-clock ms), for the sweeper that removes ones no intent refers to. */
  multipartUploads(): { id: string; modifiedMs: number }[] {
    return readdirSync(this.multipart).map((id) => ({ id, modifiedMs: statSync(join(this.multipart, id)).mtimeMs }));
  }

  private presigner(origin: string): Presigner {
    let presigner = this.presigners.get(origin);
    if (!presigner) {
      if (this.presigners.size > 64) this.presigners.clear();
      const client = makeS3Client({ region: "us-east-1", endpoint: origin + LOCAL_S3_PATH, forcePathStyle: true, credentials: this.credentials });
      presigner = new Presigner(client, this.bucket, this.clock);
      this.presigners.set(origin, presigner);
    }
    return presigner;
  }

  presignPut(key: string, options: PresignPutOptions, origin: string): Promise<string> {
    return this.presigner(origin).put(key, options);
  }

  presignPart(key: string, uploadId: string, partNumber: number, expiresInSeconds: number, origin: string): Promise<string> {
    return this.presigner(origin).part(key, uploadId, partNumber, expiresInSeconds);
  }

  presignGet(key: string, options: PresignGetOptions, origin: string): Promise<string> {
    return this.presigner(origin).get(key, options);
  }
}
