/**
 * Upload intents: files that go straight to the blob store by presigned URL (single-shot PUT,
 * or a multipart upload), then are verified and turned into a file record on `complete`.
 *
 * States: PENDING (created; bytes may be arriving) → UPLOADED (the object exists, or every part
 * is confirmed) → COMPLETED (verified, file record created). Any active intent becomes FAILED on
 * abort, on expiry, or when completion finds the bytes wrong (hash or size mismatch, unsupported
 * content); a FAILED intent's bytes are removed from the store. Retrying a part moves an
 * UPLOADED multipart intent back to PENDING until the part is confirmed again.
 */
import { mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import type { Principal } from "../auth/principal.ts";
import { isoAt } from "../clock.ts";
import type { IngestDeps } from "./deps.ts";
import { ApiError, badRequest, forTenants } from "../errors.ts";
import { normalizeEtag, type ObjectDigest } from "../storage/blob-store.ts";
import { detectType, type Detection } from "./detect.ts";
import type { MediaType } from "../files/file.ts";
import { insertFileRecord, unsupportedFile } from "./ingest.ts";
import { resolvePlacement, uploadOptions, type UploadFields, type UploadOptions } from "./options.ts";
import { SVG_MAX_BYTES } from "./svg-check.ts";
import {
  activeStoreUploadIds,
  completeIntentRow,
  dropPart,
  expiredIntents,
  insertIntent,
  intentByIdempotencyKey,
  intentParts,
  intentRow,
  isActive,
  markFailed,
  markUploaded,
  recordPart,
  type IntentRow,
  type IntentStatus,
  type UploadMode,
} from "./intent-store.ts";

export type { IntentStatus, UploadMode } from "./intent-store.ts";

const MiB = 1024 ** 2;
const GiB = 1024 ** 3;

/** The object store's own limits (S3's), in binary units as S3 counts them. */
export const INTENT_LIMITS = {
  singleShotMaxBytes: 5 * GiB,
  multipartMaxBytes: 5 * 1024 * GiB,
  minPartBytes: 5 * MiB,
  maxPartBytes: 5 * GiB,
  maxParts: 10_000,
  /** Without an explicit upload_mode, files above this size go multipart. */
  autoMultipartAboveBytes: 100 * MiB,
  defaultPartBytes: 16 * MiB,
  maxIntentTags: 20,
  /** SigV4 presigned URLs cannot live longer than seven days. */
  maxUrlSeconds: 7 * 86_400,
} as const;

/** Bytes read from the stored object to detect its type (enough for a docx's zip directory entries). */
const DETECTION_HEAD_BYTES = 1 * MiB;

/** The body as the route's schema checked it. */
export interface CreateIntentBody extends Omit<UploadFields, "tags"> {
  tags?: string[];
  filename: string;
  content_type: string;
  size_bytes: number;
  claimed_file_hash: string;
  upload_mode?: UploadMode;
  part_size_bytes?: number;
  idempotency_key?: string | null;
}

// ---------------------------------------------------------------------------------------------
// Reading

function isExpired(ctx: IngestDeps, row: IntentRow): boolean {
  return ctx.clock.now() >= row.expires_at_ms;
}

/** Size of part n (1-based): every part is part_size_bytes except a shorter last one. */
function expectedPartSize(row: IntentRow, partNumber: number): number {
  const partSize = row.part_size_bytes!;
  return partNumber < row.total_parts! ? partSize : row.size_bytes - partSize * (row.total_parts! - 1);
}

function progressPercent(row: IntentRow, confirmedBytes: number): number {
  if (row.status === "COMPLETED") return 100;
  return Math.floor((confirmedBytes / row.size_bytes) * 1000) / 10;
}

/** An intent as its owner sees it: the row's facts, its confirmed parts and its progress. */
export interface IntentState {
  id: string;
  status: IntentStatus;
  mode: UploadMode;
  mediaType: MediaType;
  filename: string;
  contentType: string;
  sizeBytes: number;
  claimedSha256: string;
  objectKey: string;
  bucket: string;
  storeUploadId: string | null;
  partSizeBytes: number | null;
  /** Null for single_shot: parts and progress mean nothing for a single PUT (the spec has them null). */
  totalParts: number | null;
  partsConfirmed: number | null;
  confirmedParts: { partNumber: number; etag: string; sizeBytes: number; confirmedAt: string }[];
  progressPercent: number | null;
  confirmedAt: string | null;
  idempotencyKey: string | null;
  fileId: string | null;
  deduplicated: boolean;
  errorMessage: string | null;
  createdAt: string;
  updatedAt: string;
  expiresAt: string;
  completedAt: string | null;
}

async function intentState(ctx: IngestDeps, row: IntentRow): Promise<IntentState> {
  const multipart = row.upload_mode === "multipart";
  const parts = multipart ? await intentParts(ctx.sql, row.id) : [];
  const confirmedBytes = parts.reduce((sum, p) => sum + p.size_bytes, 0);
  return {
    id: row.id,
    status: row.status,
    mode: row.upload_mode,
    mediaType: row.media_type,
    filename: row.filename,
    contentType: row.content_type,
    sizeBytes: row.size_bytes,
    claimedSha256: row.claimed_sha256,
    objectKey: row.object_key,
    bucket: ctx.blobs.bucket,
    storeUploadId: row.store_upload_id,
    partSizeBytes: row.part_size_bytes,
    totalParts: multipart ? row.total_parts : null,
    partsConfirmed: multipart ? parts.length : null,
    confirmedParts: parts.map((p) => ({ partNumber: p.part_number, etag: p.etag, sizeBytes: p.size_bytes, confirmedAt: p.confirmed_at })),
    progressPercent: multipart ? progressPercent(row, confirmedBytes) : null,
    confirmedAt: row.confirmed_at,
    idempotencyKey: row.idempotency_key,
    fileId: row.file_id,
    deduplicated: row.deduplicated === 1,
    errorMessage: row.error_message,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    expiresAt: row.expires_at,
    completedAt: row.completed_at,
  };
}

/** `GET /files/uploads/{id}`. A pending single-shot intent whose object has arrived shows as UPLOADED. */
export async function getIntent(ctx: IngestDeps, orgId: string, id: string): Promise<IntentState> {
  let row = await intentRow(ctx.sql, orgId, id);
  if (row.status === "PENDING" && row.upload_mode === "single_shot" && (await ctx.blobs.size(row.object_key)) !== null) {
    // Reaching UPLOADED is when the bytes were confirmed present (single-shot: the object exists).
    row = await markUploaded(ctx.sql, row, isoAt(ctx.clock.now()));
  }
  return intentState(ctx, row);
}

// ---------------------------------------------------------------------------------------------
// Creating

function validateCreate(body: CreateIntentBody) {
  const filename = body.filename.trim();
  if (!filename || filename.length > 255 || /[\u0000/\\]/.test(filename)) {
    throw badRequest("filename: must be 1-255 characters without /, \\ or NUL");
  }
  const contentType = body.content_type.trim();
  if (!contentType || contentType.length > 255) throw badRequest("content_type: must be 1-255 characters");
  const size = body.size_bytes;
  if (size > INTENT_LIMITS.multipartMaxBytes) {
    throw new ApiError("FILE_TOO_LARGE", `size_bytes: files are limited to 5 TB (got ${size} bytes)`);
  }
  const mode: UploadMode = body.upload_mode ?? (size > INTENT_LIMITS.autoMultipartAboveBytes ? "multipart" : "single_shot");
  if (mode === "single_shot") {
    if (size > INTENT_LIMITS.singleShotMaxBytes) {
      throw badRequest(`size_bytes: single_shot uploads are limited to 5 GB (got ${size} bytes); use upload_mode multipart`);
    }
    if (body.part_size_bytes !== undefined) throw badRequest("part_size_bytes: only allowed with upload_mode multipart");
    return { filename, contentType, mode, partSize: null, totalParts: null };
  }
  let partSize = body.part_size_bytes;
  if (partSize === undefined) {
    // The smallest whole MiB that keeps the part count within the store's limit.
    partSize = Math.max(INTENT_LIMITS.defaultPartBytes, Math.ceil(size / INTENT_LIMITS.maxParts / MiB) * MiB);
  } else {
    if (!Number.isSafeInteger(partSize) || partSize < INTENT_LIMITS.minPartBytes) {
      throw badRequest(`part_size_bytes: must be at least 5 MB (${INTENT_LIMITS.minPartBytes} bytes)`);
    }
    if (partSize > INTENT_LIMITS.maxPartBytes) throw badRequest(`part_size_bytes: must be at most 5 GB (${INTENT_LIMITS.maxPartBytes} bytes)`);
  }
  const totalParts = Math.ceil(size / partSize);
  if (totalParts > INTENT_LIMITS.maxParts) {
    throw badRequest(`part_size_bytes: ${partSize} bytes gives ${totalParts} parts; at most ${INTENT_LIMITS.maxParts} parts are allowed`);
  }
  return { filename, contentType, mode, partSize, totalParts };
}

function sameRequest(row: IntentRow, body: CreateIntentBody, mode: UploadMode): boolean {
  return (
    row.filename === body.filename.trim() &&
    row.size_bytes === body.size_bytes &&
    row.claimed_sha256 === body.claimed_file_hash.toLowerCase() &&
    row.upload_mode === mode
  );
}

/** Where and how the client sends the bytes: one signed PUT, or one signed URL per part not yet confirmed. */
export type IntentCreation = {
  id: string;
  mediaType: MediaType;
  objectKey: string;
  bucket: string;
  expiresAt: string;
} & (
  | { mode: "single_shot"; url: string; headers: Record<string, string>; maxSizeBytes: number }
  | { mode: "multipart"; storeUploadId: string; partUrls: PartUrl[]; partSizeBytes: number; totalParts: number }
);

export interface PartUrl {
  partNumber: number;
  url: string;
  expiresAt: string;
}

/** Presigned URL(s) for the bytes. Replays of an idempotency key get fresh URLs for the same intent. */
async function creation(ctx: IngestDeps, row: IntentRow, origin: string): Promise<IntentCreation> {
  const expiresIn = urlLifetime(ctx, row);
  const common = { id: row.id, mediaType: row.media_type, objectKey: row.object_key, bucket: ctx.blobs.bucket, expiresAt: row.expires_at };
  if (row.upload_mode === "single_shot") {
    const checksum = Buffer.from(row.claimed_sha256, "hex").toString("base64");
    const url = await ctx.blobs.presignPut(
      row.object_key,
      { contentType: row.content_type, checksumSha256Base64: checksum, expiresInSeconds: expiresIn },
      origin,
    );
    return {
      ...common,
      mode: "single_shot",
      url,
      headers: { "Content-Type": row.content_type, "x-amz-checksum-sha256": checksum, "x-amz-sdk-checksum-algorithm": "SHA256" },
      maxSizeBytes: row.size_bytes,
    };
  }
  const confirmed = new Set((await intentParts(ctx.sql, row.id)).map((p) => p.part_number));
  const partUrls: PartUrl[] = [];
  for (let n = 1; n <= row.total_parts!; n++) {
    if (confirmed.has(n)) continue;
    partUrls.push({ partNumber: n, url: await ctx.blobs.presignPart(row.object_key, row.store_upload_id!, n, expiresIn, origin), expiresAt: row.expires_at });
  }
  return { ...common, mode: "multipart", storeUploadId: row.store_upload_id!, partUrls, partSizeBytes: row.part_size_bytes!, totalParts: row.total_parts! };
}

/** Presigned URLs live until the intent expires (at least a minute, at most SigV4's seven days). */
function urlLifetime(ctx: IngestDeps, row: IntentRow): number {
  const seconds = Math.floor((row.expires_at_ms - ctx.clock.now()) / 1000);
  return Math.max(60, Math.min(INTENT_LIMITS.maxUrlSeconds, seconds));
}

/** `POST /files/uploads`. Returns `replayed` when the idempotency key named an existing intent. */
export async function createIntent(ctx: IngestDeps, principal: Principal, body: CreateIntentBody, origin: string): Promise<{ replayed: boolean; intent: IntentCreation }> {
  const { clock, blobs } = ctx;
  const checked = validateCreate(body);
  const idempotencyKey = body.idempotency_key ?? null;
  if (idempotencyKey) {
    const existing = await intentByIdempotencyKey(ctx.sql, principal.orgId, idempotencyKey);
    if (existing) return replay(ctx, existing, body, checked.mode, origin);
  }
  const options = uploadOptions(body, { maxTags: INTENT_LIMITS.maxIntentTags });
  await resolvePlacement(ctx, principal.orgId, options);
  const mediaType = ctx.kinds.forecast(checked.contentType, checked.filename);
  if (!mediaType) throw unsupportedFile(`content_type ${checked.contentType} (${checked.filename}) is not a supported image, document or video`);

  const id = crypto.randomUUID();
  const objectKey = `orgs/${principal.orgId}/uploads/${id}/original`;
  const storeUploadId = checked.mode === "multipart" ? await blobs.createMultipartUpload(objectKey, checked.contentType, { partSize: checked.partSize!, totalSize: body.size_bytes }) : null;
  const now = clock.now();
  const expiresMs = now + ctx.config.uploadIntentTtlSeconds * 1000;
  let inserted;
  try {
    inserted = await insertIntent(ctx.sql, {
      id, orgId: principal.orgId, mode: checked.mode, mediaType, objectKey, filename: checked.filename, contentType: checked.contentType,
      sizeBytes: body.size_bytes, claimedSha256: body.claimed_file_hash.toLowerCase(), partSizeBytes: checked.partSize, totalParts: checked.totalParts,
      storeUploadId, idempotencyKey, options: JSON.stringify(options), createdBy: principal.keyId,
      createdAt: isoAt(now), expiresAt: isoAt(expiresMs), expiresAtMs: expiresMs,
    });
  } catch (err) {
    if (storeUploadId) await blobs.abortMultipartUpload(objectKey, storeUploadId).catch(() => undefined);
    throw err;
  }
  if (!inserted.created) {
    // Two requests raced with one idempotency key: the loser answers with the winner's intent.
    if (storeUploadId) await blobs.abortMultipartUpload(objectKey, storeUploadId).catch(() => undefined);
    return replay(ctx, inserted.row, body, checked.mode, origin);
  }
  return { replayed: false, intent: await creation(ctx, inserted.row, origin) };
}

async function replay(ctx: IngestDeps, row: IntentRow, body: CreateIntentBody, mode: UploadMode, origin: string) {
  if (!sameRequest(row, body, mode)) {
    throw new ApiError(
      "IDEMPOTENCY_KEY_REUSED",
      `idempotency_key "${row.idempotency_key}" already names upload ${row.id} for a different file (filename, size_bytes, claimed_file_hash or upload_mode differ)`,
    );
  }
  return { replayed: true, intent: await creation(ctx, row, origin) };
}

// ---------------------------------------------------------------------------------------------
// Parts

function requireActiveMultipart(ctx: IngestDeps, row: IntentRow): void {
  if (row.upload_mode !== "multipart") throw new ApiError("UPLOAD_STATE_CONFLICT", `upload ${row.id} is single_shot; it has no parts`);
  requireActive(ctx, row);
}

function requireActive(ctx: IngestDeps, row: IntentRow): void {
  if (!isActive(row)) {
    throw new ApiError("UPLOAD_STATE_CONFLICT", `upload ${row.id} is ${row.status}${row.error_message ? ` (${row.error_message})` : ""}`);
  }
  if (isExpired(ctx, row)) throw new ApiError("UPLOAD_EXPIRED", `upload ${row.id} expired at ${row.expires_at}; create a new upload`);
}

function checkPartNumber(row: IntentRow, partNumber: number): void {
  if (!Number.isInteger(partNumber) || partNumber < 1 || partNumber > row.total_parts!) {
    throw badRequest(`part_number: must be an integer from 1 to ${row.total_parts}`);
  }
}

/** `POST /files/uploads/{id}/parts/confirm`: records a part the client has PUT, checked against the store when it can tell. */
export interface PartConfirmation {
  id: string;
  partNumber: number;
  partsConfirmed: number;
  totalParts: number;
  progressPercent: number;
}

export async function confirmPart(ctx: IngestDeps, orgId: string, id: string, body: { partNumber: number; etag: string; sizeBytes: number }): Promise<PartConfirmation> {
  const { clock, blobs } = ctx;
  const row = await intentRow(ctx.sql, orgId, id);
  requireActiveMultipart(ctx, row);
  checkPartNumber(row, body.partNumber);
  const expected = expectedPartSize(row, body.partNumber);
  if (body.sizeBytes !== expected) {
    throw badRequest(`size_bytes: part ${body.partNumber} must be ${expected} bytes (part_size_bytes ${row.part_size_bytes}, total ${row.size_bytes})`);
  }
  const etag = `"${normalizeEtag(body.etag)}"`;
  if (etag === '""') throw badRequest("etag: required (the ETag header of the part's PUT response)");
  const stored = await blobs.getPart(row.object_key, row.store_upload_id!, body.partNumber);
  if (stored === null) {
    throw new ApiError("UPLOAD_STATE_CONFLICT", `part ${body.partNumber} has not been received by the object store; PUT it to its URL first`);
  }
  if (stored && normalizeEtag(stored.etag) !== normalizeEtag(etag)) {
    throw new ApiError("UPLOAD_STATE_CONFLICT", `etag: part ${body.partNumber} in the store has ETag ${stored.etag}, not ${body.etag}`);
  }
  if (stored && stored.size !== expected) {
    throw new ApiError("UPLOAD_STATE_CONFLICT", `part ${body.partNumber} in the store is ${stored.size} bytes, expected ${expected}`);
  }
  const at = isoAt(clock.now());
  const result = await recordPart(ctx.sql, orgId, id, { partNumber: body.partNumber, etag, sizeBytes: body.sizeBytes }, at, (current) => requireActiveMultipart(ctx, current));
  return {
    id,
    partNumber: body.partNumber,
    partsConfirmed: result.partsConfirmed,
    totalParts: result.totalParts,
    progressPercent: progressPercent({ ...row, status: result.status }, result.confirmedBytes),
  };
}

/** `POST /files/uploads/{id}/parts/retry`: a fresh URL for a part; any earlier confirmation of it is dropped. */
export async function retryPart(ctx: IngestDeps, orgId: string, id: string, partNumber: number, origin: string): Promise<PartUrl & { id: string }> {
  const { clock, blobs } = ctx;
  const row = await intentRow(ctx.sql, orgId, id);
  requireActiveMultipart(ctx, row);
  checkPartNumber(row, partNumber);
  await dropPart(ctx.sql, orgId, id, partNumber, isoAt(clock.now()), (current) => requireActiveMultipart(ctx, current));
  const url = await blobs.presignPart(row.object_key, row.store_upload_id!, partNumber, urlLifetime(ctx, row), origin);
  return { id, partNumber, url, expiresAt: row.expires_at };
}

// ---------------------------------------------------------------------------------------------
// Completing

/** Multipart staging on disk untouched this long, with no active intent, is removed. */
const ORPHAN_GRACE_MS = 60 * 60 * 1000;

export interface CompletionResult {
  id: string;
  fileId: string;
  mediaType: MediaType;
  filename: string;
  objectKey: string;
  sizeBytes: number;
  /** The organization already held these bytes: the existing file is the result. */
  deduplicated: boolean;
}

function completionResult(row: IntentRow): CompletionResult {
  return {
    id: row.id,
    fileId: row.file_id!,
    mediaType: row.media_type,
    filename: row.filename,
    objectKey: row.object_key,
    sizeBytes: row.size_bytes,
    deduplicated: row.deduplicated === 1,
  };
}

/**
 * `POST /files/uploads/{id}/complete`: assembles the parts, re-hashes the stored bytes, detects
 * the type from them and creates the file record with its processing job. Completing a completed
 * intent answers the same result again, so a client that lost the response can simply retry.
 */
export async function completeIntent(ctx: IngestDeps, principal: Principal, id: string): Promise<CompletionResult> {
  const first = await intentRow(ctx.sql, principal.orgId, id);
  if (first.status === "COMPLETED") return completionResult(first);
  if (ctx.uploadSlots.completingIntents.has(id)) throw new ApiError("UPLOAD_STATE_CONFLICT", `upload ${id} is already being completed`);
  ctx.uploadSlots.completingIntents.add(id);
  try {
    return await complete(ctx, principal, first);
  } finally {
    ctx.uploadSlots.completingIntents.delete(id);
  }
}

async function complete(ctx: IngestDeps, principal: Principal, row: IntentRow): Promise<CompletionResult> {
  const { clock, blobs } = ctx;
  requireActive(ctx, row);
  const digest = await assembledDigest(ctx, row);

  const claimed = row.claimed_sha256;
  if (digest.size !== row.size_bytes || digest.sha256 !== claimed) {
    const why =
      digest.size !== row.size_bytes
        ? `the stored object is ${digest.size} bytes, but size_bytes was ${row.size_bytes}`
        : `the SHA-256 of the stored bytes is ${digest.sha256}, but claimed_file_hash was ${claimed}`;
    await fail(ctx, row, `hash mismatch: ${why}`);
    throw new ApiError("UPLOAD_HASH_MISMATCH", `${why}; the upload was discarded, create a new one`);
  }

  const detection = await detectStored(ctx, row, digest.size);
  if (!detection.ok) {
    await fail(ctx, row, `unsupported content: ${detection.reason}`);
    throw unsupportedFile(detection.reason);
  }
  const type = detection.type;
  const options = JSON.parse(row.options) as UploadOptions;
  const placement = await resolvePlacement(ctx, principal.orgId, options);
  const duplicate = options.skipDuplicates ? await ctx.files.findDuplicate(principal.orgId, digest.sha256) : null;
  const at = isoAt(clock.now());

  if (duplicate) {
    const done = await completeIntentRow(ctx.sql, principal.orgId, row.id, { fileId: duplicate.id, mediaType: type.mediaType, deduplicated: true }, at);
    // Only the completion that recorded the duplicate drops the bytes: another one's file may be them.
    if (done.completed) await blobs.delete(row.object_key);
    return completionResult(done.row);
  }

  const fileId = crypto.randomUUID();
  // Another process completing the same intent at once: the locked row lets one create the file.
  const done = await completeIntentRow(ctx.sql, principal.orgId, row.id, { fileId, mediaType: type.mediaType, deduplicated: false }, at, (tx) =>
    insertFileRecord(ctx, tx, {
      id: fileId,
      orgId: principal.orgId,
      filename: row.filename,
      size: digest.size,
      sha256: digest.sha256,
      type,
      blobKey: row.object_key,
      uploadMethod: "presigned",
      sessionId: null,
      uploadedBy: principal.keyId,
      options,
      placement,
    }),
  );
  return completionResult(done.row);
}

/**
 * Detects the stored object's type with the whole object on local disk whenever it can be, so
 * an SVG is checked to its end (detect.ts refuses an SVG it cannot read whole): the local
 * store's object is read in place; an S3 object is fetched into scratch only when it is small
 * enough to be an acceptable SVG (anything larger is detected from its head).
 */
async function detectStored(ctx: IngestDeps, row: IntentRow, size: number): Promise<Detection> {
  const { blobs } = ctx;
  const head = (await blobs.head(row.object_key, DETECTION_HEAD_BYTES)) ?? new Uint8Array();
  const local = blobs.localFiles();
  if (local) return detectType(ctx.kinds.uploaded(), head, row.filename, local.pathOf(row.object_key));
  if (size > SVG_MAX_BYTES) return detectType(ctx.kinds.uploaded(), head, row.filename);
  const dir = join(ctx.dataDir.scratch, `detect-${crypto.randomUUID()}`);
  mkdirSync(dir, { recursive: true });
  try {
    const stream = await blobs.read(row.object_key);
    if (!stream) return detectType(ctx.kinds.uploaded(), head, row.filename);
    const path = join(dir, "object");
    await Bun.write(path, new Response(stream));
    return await detectType(ctx.kinds.uploaded(), head, row.filename, path);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The whole object's size and SHA-256, assembling a multipart upload first. */
async function assembledDigest(ctx: IngestDeps, row: IntentRow): Promise<ObjectDigest> {
  const { blobs } = ctx;
  if (row.upload_mode === "single_shot") {
    const digest = await blobs.digest(row.object_key);
    if (!digest) throw new ApiError("UPLOAD_STATE_CONFLICT", `nothing has been uploaded for ${row.id} yet; PUT the file to presigned_url first`);
    return digest;
  }
  // Already assembled by an earlier attempt that stopped before recording the file.
  if ((await blobs.size(row.object_key)) !== null) return (await blobs.digest(row.object_key))!;
  const parts = await intentParts(ctx.sql, row.id);
  const have = new Set(parts.map((p) => p.part_number));
  const missing: number[] = [];
  for (let n = 1; n <= row.total_parts!; n++) if (!have.has(n)) missing.push(n);
  if (missing.length) {
    const shown = missing.slice(0, 50).join(", ");
    throw new ApiError(
      "UPLOAD_PARTS_MISSING",
      `parts not confirmed: ${shown}${missing.length > 50 ? ` and ${missing.length - 50} more` : ""} (${missing.length} of ${row.total_parts} missing)`,
    );
  }
  try {
    return await blobs.completeMultipartUpload(
      row.object_key,
      row.store_upload_id!,
      parts.map((p) => ({ partNumber: p.part_number, etag: p.etag })),
    );
  } catch (err) {
    // Another process completing the same intent assembled the object between our look and our
    // call, and the store no longer knows the upload (S3 answers NoSuchUpload): the object is there.
    const assembled = await blobs.digest(row.object_key).catch(() => null);
    if (assembled) return assembled;
    const name = (err as { code?: string; name?: string }).code ?? (err as { name?: string }).name;
    if (name === "InvalidPart" || name === "InvalidPartOrder") {
      throw new ApiError("UPLOAD_PARTS_MISSING", `the object store refused the confirmed parts: ${(err as Error).message}; retry the affected parts and confirm them again`);
    }
    throw err;
  }
}

/** Marks an active intent FAILED and removes its bytes from the store. */
async function fail(ctx: IngestDeps, row: IntentRow, message: string): Promise<boolean> {
  if (!(await markFailed(ctx.sql, row.id, forTenants(message), isoAt(ctx.clock.now())))) return false;
  await discardBytes(ctx, row);
  return true;
}

async function discardBytes(ctx: IngestDeps, row: IntentRow): Promise<void> {
  try {
    if (row.store_upload_id) await ctx.blobs.abortMultipartUpload(row.object_key, row.store_upload_id);
  } catch (err) {
    ctx.log.warn("could not abort the store's multipart upload", { upload_id: row.id, err });
  }
  try {
    await ctx.blobs.delete(row.object_key);
  } catch (err) {
    ctx.log.warn("could not delete an upload's object", { upload_id: row.id, err });
  }
}

// ---------------------------------------------------------------------------------------------
// Aborting and expiry

/** `DELETE /files/uploads/{id}`. `aborted` is false when the intent had already finished. */
export async function abortIntent(ctx: IngestDeps, orgId: string, id: string, reason: string | null): Promise<{ id: string; aborted: boolean; reason: string | null }> {
  if (reason !== null && reason.length > 255) throw badRequest("reason: must be at most 255 characters");
  const row = await intentRow(ctx.sql, orgId, id);
  if (ctx.uploadSlots.completingIntents.has(id)) throw new ApiError("UPLOAD_STATE_CONFLICT", `upload ${id} is being completed`);
  const aborted = isActive(row) ? await fail(ctx, row, `aborted${reason ? `: ${reason}` : ""}`) : false;
  return { id, aborted, reason };
}

/**
 * Fails intents past their expiry and removes their bytes, and (local store) removes multipart
 * staging that no active intent refers to. Idempotent; run by the housekeeping timer.
 */
export async function sweepExpiredIntents(ctx: IngestDeps): Promise<{ expired: number; orphans: number }> {
  const expired = await expiredIntents(ctx.sql, ctx.clock.now());
  let count = 0;
  for (const row of expired) {
    if (ctx.uploadSlots.completingIntents.has(row.id)) continue;
    if (await fail(ctx, row, `expired at ${row.expires_at}`)) count += 1;
  }
  let orphans = 0;
  const inventory = ctx.blobs.multipartInventory();
  if (inventory) {
    const active = await activeStoreUploadIds(ctx.sql);
    for (const upload of inventory.multipartUploads()) {
      // Young staging may belong to an intent whose row is being inserted right now.
      if (active.has(upload.id) || Date.now() - upload.modifiedMs < ORPHAN_GRACE_MS) continue;
      await ctx.blobs.abortMultipartUpload("", upload.id);
      orphans += 1;
    }
  }
  if (count || orphans) ctx.log.info("expired upload intents swept", { expired: count, orphaned_multipart: orphans });
  return { expired: count, orphans };
}
