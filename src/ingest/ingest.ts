/**
 * Turns bytes that have arrived into a stored file: size limits by media type, duplicate skip
 * by content hash within the organization, the move into the blob store, and the file record
 * created in one transaction with its processing job (and the AI-description reservation).
 * Streaming, batch and intent uploads all end here.
 */
import { complianceRequested } from "../compliance/image-compliance.ts";
import type { NewFileRecord } from "../files/file-repository.ts";
import type { SqlClient } from "../db/sql-client.ts";
import { rm } from "node:fs/promises";
import type { IngestDeps } from "./deps.ts";
import { ApiError } from "../errors.ts";
import { FIXED_LIMITS, TIER_LIMITS, type Tier } from "../tenancy/tiers.ts";
import { reserveUsage } from "../usage/usage.ts";
import type { DetectedType, MediaType } from "../files/file.ts";
import type { MediaKinds } from "../kinds/media-kind.ts";
import type { UploadOptions } from "./options.ts";

export interface Placement {
  projectId: string;
  folderId: string | null;
}

/** What an upload knows of a file it is about to store: the record's facts plus the uploader's options. */
export type NewFile = Pick<NewFileRecord, "id" | "orgId" | "filename" | "size" | "sha256" | "type" | "blobKey" | "uploadMethod" | "sessionId" | "uploadedBy"> & {
  options: UploadOptions;
  placement: Placement;
  /** How the file arrived when not by an upload (rules match on it): a watched folder or a mail account. */
  origin?: { source: "watch" | "mail"; detail: string };
};

export interface IngestOutcome {
  fileId: string;
  status: "processing" | "skipped";
  skippedExistingId: string | null;
  type: DetectedType;
}

export function unsupportedFile(reason: string): ApiError {
  return new ApiError("UNSUPPORTED_FILE_TYPE", `unsupported or unsafe file: ${reason}`);
}

/** The streaming limit for a detected type, or null when it is within it. */
export function sizeLimitViolation(kinds: MediaKinds, type: DetectedType, size: number): string | null {
  const limit = kinds.for(type.mediaType)?.content?.maxStreamingBytes ?? FIXED_LIMITS.maxImageBytes;
  if (size <= limit) return null;
  return `${type.mediaType} files are limited to ${limit / 1024 ** 2} MB through this endpoint (got ${size} bytes); use the upload-intent flow (POST /files/uploads) for larger files`;
}

/**
 * Records the file and enqueues its processing job atomically, inside the caller's port
 * transaction `tx`: the row through FileRepository, the job and the description's reservation
 * through `tx`; the kind's state, the compliance request and the origin still synchronously on
 * the SQLite handle the transaction holds.
 * `fill` completes a placeholder created earlier (a cloud import) instead of inserting a row.
 */
export async function insertFileRecord(ctx: IngestDeps, tx: SqlClient, file: NewFile, mode: "create" | "fill" = "create"): Promise<void> {
  const job = await ctx.jobs.submit({ queue: "file.process", orgId: file.orgId, payload: { fileId: file.id } }, tx);
  const { options, type } = file;
  const labels = { method: file.uploadMethod, media_type: type.mediaType };
  ctx.metrics.uploads.inc(labels);
  ctx.metrics.uploadBytes.inc(labels, file.size);
  const record: NewFileRecord = {
    id: file.id,
    orgId: file.orgId,
    projectId: file.placement.projectId,
    folderId: file.placement.folderId,
    filename: file.filename,
    size: file.size,
    sha256: file.sha256,
    type,
    blobKey: file.blobKey,
    uploadMethod: file.uploadMethod,
    sessionId: file.sessionId,
    uploadedBy: file.uploadedBy,
    processingJobId: job.id,
    title: options.title,
    tags: options.tags,
    storageTarget: options.storageTarget,
    autoDescribe: options.autoDescribe,
    contentCategory: options.contentCategory,
    customSchemaId: options.customSchemaId,
    description: DESCRIPTION_CREDITS[type.mediaType] ? await reserveDescription(tx, file.orgId, options.autoDescribe, ctx.clock.now(), DESCRIPTION_CREDITS[type.mediaType]!) : null,
  };
  const files = ctx.files.withTx(tx);
  if (mode === "fill") await files.placeholderFilled(record);
  else {
    await files.create(record);
    if (options.compliance) await complianceRequested(tx, file.id, options.compliance);
  }
  await ctx.kinds.for(type.mediaType)?.queued?.(file.id, tx);
  if (file.origin) await tx.run("INSERT INTO file_origins (file_id, source, detail) VALUES (?, ?, ?)", [file.id, file.origin.source, file.origin.detail]);
}

/** AI-description credits a file reserves at upload: the spec's 2-credit reservation for videos. */
const DESCRIPTION_CREDITS: Partial<Record<MediaType, number>> = { image: 1, video: 2 };

/**
 * An image's or video's AI description is reserved against the tier's monthly quota when the
 * file is recorded; past the quota (or with auto_describe=false) the description is skipped, and
 * the error says why. A video's pipeline gives its credits back when no description is made.
 * Taken in the record's transaction `tx`: a record that rolls back gives its credits back.
 */
async function reserveDescription(tx: SqlClient, orgId: string, autoDescribe: boolean, now: number, credits: number) {
  if (!autoDescribe) return { status: "skipped" as const, error: null, credits: 0 };
  const tier = (await tx.one<{ tier: Tier }>("SELECT tier FROM organizations WHERE id = ?", [orgId]))?.tier ?? "FREE";
  const limit = TIER_LIMITS[tier].aiDescriptionsPerMonth;
  if (!(await reserveUsage(tx, orgId, "ai_descriptions", credits, limit, now))) {
    return { status: "skipped" as const, error: `monthly AI description quota of the ${tier} tier (${limit}) is used up; the description was skipped`, credits: 0 };
  }
  return { status: "pending" as const, error: null, credits };
}

/**
 * Stores a file staged on local disk. With skip_duplicates an existing file of the same content
 * wins and the staged bytes are dropped. Idempotent by file id, so a batch job that crashed
 * half-way can run the same item again.
 */
export async function ingestStagedFile(ctx: IngestDeps, stagedPath: string | null, file: NewFile): Promise<IngestOutcome> {
  const { blobs, files } = ctx;
  if (await files.exists(file.id)) {
    if (stagedPath) await rm(stagedPath, { force: true });
    return { fileId: file.id, status: "processing", skippedExistingId: null, type: file.type };
  }
  if (file.options.skipDuplicates) {
    const existing = await files.findDuplicate(file.orgId, file.sha256);
    if (existing) {
      // Bytes already in the store (a shared deployment's batch, or a store cut off before its record) are nobody's.
      if (stagedPath) await rm(stagedPath, { force: true });
      else await blobs.delete(file.blobKey);
      return { fileId: existing.id, status: "skipped", skippedExistingId: existing.id, type: file.type };
    }
  }
  if (stagedPath) await blobs.importFile(file.blobKey, stagedPath, file.type.mime);
  else if ((await blobs.size(file.blobKey)) === null) throw new Error(`the bytes of ${file.filename} are gone from staging and the store`);
  await ctx.sql.transaction((tx) => insertFileRecord(ctx, tx, file));
  return { fileId: file.id, status: "processing", skippedExistingId: null, type: file.type };
}

/**
 * ingestStagedFile for a placeholder (cloud imports): the same duplicate rule, move into the store
 * and record-with-job transaction, filling the placeholder's row. With skip_duplicates an
 * existing file of the same content wins and the placeholder is deleted. Idempotent: a filled
 * placeholder is left as it is, so an import resumed after a crash can run the item again.
 */
export async function ingestIntoPlaceholder(ctx: IngestDeps, stagedPath: string, file: NewFile): Promise<IngestOutcome> {
  const { blobs, files } = ctx;
  if (!(await files.isPlaceholder(file.id))) {
    await rm(stagedPath, { force: true });
    return { fileId: file.id, status: "processing", skippedExistingId: null, type: file.type };
  }
  if (file.options.skipDuplicates) {
    const existing = await files.findDuplicate(file.orgId, file.sha256);
    if (existing) {
      await rm(stagedPath, { force: true });
      await files.softDelete(file.id);
      return { fileId: existing.id, status: "skipped", skippedExistingId: existing.id, type: file.type };
    }
  }
  await blobs.importFile(file.blobKey, stagedPath, file.type.mime);
  await ctx.sql.transaction((tx) => insertFileRecord(ctx, tx, file, "fill"));
  return { fileId: file.id, status: "processing", skippedExistingId: null, type: file.type };
}
