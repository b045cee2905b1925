/**
 * The local-disk blob store (the default). Objects live under `<data>/blobs/objects/<key>`;
 * multipart uploads collect their parts under `<data>/blobs/multipart/<uploadId>/` until they
 * are completed or aborted. Presigned URLs point at the appliance's own S3-compatible endpoint
 * (local-s3-endpoint.ts), signed with a secret generated on first start.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { readFile, rm, stat, writeFile } from "node:fs/promises";
import { join, resolve, sep } from "node:path";
import type { Clock } from "../clock.ts";
import { normalizeEtag, type BlobStore, type CompletedPart, type ObjectDigest, type PartInfo, type PresignGetOptions, type PresignPutOptions } from "./blob-store.ts";
import { commitFile, fsyncDir, readHead, writeStreamAtomically, type WrittenFile } from "./disk.ts";
import { makeS3Client, Presigner } from "./presigner.ts";

export const LOCAL_BUCKET = "mediabox";
export const LOCAL_S3_PATH = "/s3";

export interface LocalCredentials {
  accessKeyId: string;
  secretAccessKey: string;
}

/** The signing secret for local presigned URLs; created once per data directory. */
export function loadLocalCredentials(dataDir: string): LocalCredentials {
  const dir = join(dataDir, "secrets");
  const file = join(dir, "local-s3.json");
  if (existsSync(file)) return JSON.parse(readFileSync(file, "utf8")) as LocalCredentials;
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const credentials: LocalCredentials = {
    accessKeyId: `MBX${Buffer.from(crypto.getRandomValues(new Uint8Array(10))).toString("hex").toUpperCase()}`,
    secretAccessKey: Buffer.from(crypto.getRandomValues(new Uint8Array(30))).toString("base64url"),
  };
  writeFileSync(file, JSON.stringify(credentials), { mode: 0o600, flag: "wx" });
  return credentials;
}

export class LocalStoreError extends Error {
  constructor(
    readonly code: "NoSuchKey" | "NoSuchUpload" | "InvalidPart" | "InvalidPartOrder" | "InvalidArgument" | "BadDigest",
    message: string,
  ) {
    super(message);
    this.name = "LocalStoreError";
  }
}

interface MultipartMeta {
  key: string;
  contentType: string;
}

export class LocalBlobStore implements BlobStore {
  readonly kind = "local" as const;
  readonly bucket = LOCAL_BUCKET;
  private readonly objects: string;
  private readonly multipart: string;
  readonly tmp: string;
  private readonly presigners = new Map<string, Presigner>();

  constructor(
    root: string,
    readonly credentials: LocalCredentials,
    private readonly clock: Clock,
  ) {
    this.objects = join(root, "objects");
    this.multipart = join(root, "multipart");
    this.tmp = join(root, "tmp");
    for (const dir of [this.objects, this.multipart, this.tmp]) mkdirSync(dir, { recursive: true });
    // Whatever is in tmp was being written when the process died: never acknowledged, so drop it.
    for (const name of readdirSync(this.tmp)) rmSync(join(this.tmp, name), { force: true, recursive: true });
  }

  pathOf(key: string): string {
    const path = resolve(this.objects, key);
    if (!key || key.startsWith("/") || key.split("/").includes("..") || !path.startsWith(this.objects + sep)) {
      throw new LocalStoreError("InvalidArgument", `invalid object key "${key}"`);
    }
    return path;
  }

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
    const stream = await this.read(key);
    if (!stream) return null;
    const hasher = new Bun.CryptoHasher("sha256");
    let size = 0;
    for await (const chunk of stream) {
      hasher.update(chunk);
      size += chunk.byteLength;
    }
    return { size, sha256: hasher.digest("hex") };
  }

  async delete(key: string): Promise<void> {
    await rm(this.pathOf(key), { force: true });
  }

  async createMultipartUpload(key: string, contentType: string): Promise<string> {
    this.pathOf(key);
    const uploadId = crypto.randomUUID().replaceAll("-", "");
    const dir = join(this.multipart, uploadId);
    mkdirSync(dir, { recursive: true });
    const meta: MultipartMeta = { key, contentType };
    await writeFile(join(dir, "meta.json"), JSON.stringify(meta));
    await fsyncDir(dir);
    return uploadId;
  }

  private async uploadDir(key: string, uploadId: string): Promise<string> {
    const dir = join(this.multipart, uploadId);
    if (!/^[0-9a-f]{32}$/.test(uploadId) || !existsSync(join(dir, "meta.json"))) {
      throw new LocalStoreError("NoSuchUpload", `no multipart upload ${uploadId}`);
    }
    const meta = JSON.parse(await readFile(join(dir, "meta.json"), "utf8")) as MultipartMeta;
    if (meta.key !== key) throw new LocalStoreError("NoSuchUpload", `multipart upload ${uploadId} is not for this key`);
    return dir;
  }

  /** Stores one part (the local endpoint's UploadPart); the ETag is the part's quoted MD5, as on S3. */
  async putPart(key: string, uploadId: string, partNumber: number, body: AsyncIterable<Uint8Array>, maxBytes: number): Promise<{ etag: string; size: number }> {
    const dir = await this.uploadDir(key, uploadId);
    const written = await writeStreamAtomically(body, join(dir, `${partNumber}.part`), this.tmp, { maxBytes, md5: true, headBytes: 0 });
    const etag = `"${written.md5}"`;
    // The ETag beside the part spares re-reading gigabytes to answer getPart; a missing or stale
    // sidecar (crash between the two writes) is detected by size and recomputed.
    await writeFile(join(dir, `${partNumber}.etag`), JSON.stringify({ etag, size: written.size }));
    return { etag, size: written.size };
  }

  async getPart(key: string, uploadId: string, partNumber: number): Promise<PartInfo | null> {
    const dir = await this.uploadDir(key, uploadId);
    const file = join(dir, `${partNumber}.part`);
    if (!existsSync(file)) return null;
    const size = statSync(file).size;
    try {
      const recorded = JSON.parse(await readFile(join(dir, `${partNumber}.etag`), "utf8")) as PartInfo;
      if (recorded.size === size) return recorded;
    } catch {
      // fall through to recomputing
    }
    const hasher = new Bun.CryptoHasher("md5");
    for await (const chunk of Bun.file(file).stream()) hasher.update(chunk);
    return { etag: `"${hasher.digest("hex")}"`, size };
  }

  async completeMultipartUpload(key: string, uploadId: string, parts: CompletedPart[]): Promise<ObjectDigest> {
    const dir = await this.uploadDir(key, uploadId);
    for (let i = 1; i < parts.length; i++) {
      if (parts[i]!.partNumber <= parts[i - 1]!.partNumber) throw new LocalStoreError("InvalidPartOrder", "parts must be in ascending order");
    }
    const files: string[] = [];
    for (const part of parts) {
      const stored = await this.getPart(key, uploadId, part.partNumber);
      if (!stored) throw new LocalStoreError("InvalidPart", `part ${part.partNumber} was not uploaded`);
      if (normalizeEtag(stored.etag) !== normalizeEtag(part.etag)) {
        throw new LocalStoreError("InvalidPart", `part ${part.partNumber}: the ETag does not match the uploaded part`);
      }
      files.push(join(dir, `${part.partNumber}.part`));
    }
    // One pass: concatenate and hash, so completing costs one read of the parts.
    async function* concatenated() {
      for (const file of files) yield* Bun.file(file).stream();
    }
    const written = await writeStreamAtomically(concatenated(), this.pathOf(key), this.tmp, { headBytes: 0 });
    await rm(dir, { recursive: true, force: true });
    return { size: written.size, sha256: written.sha256 };
  }

  async abortMultipartUpload(_key: string, uploadId: string): Promise<void> {
    if (!/^[0-9a-f]{32}$/.test(uploadId)) return;
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
