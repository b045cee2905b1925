/**
 * Cloud import and export jobs, and the cloud job resource. An import creates its placeholder
 * files at once (their ids are the response's `image_ids`), then the durable `cloud.import` job
 * downloads each file into staging and hands it to the normal ingest path (type detection,
 * refusal of unsafe files, duplicates, pipelines), item by item with per-file progress. An
 * export uploads the originals of library files into an existing or new cloud folder. Both
 * retry provider 429/5xx with exponential backoff (honouring Retry-After), end `partial` when
 * some files failed, stop on cancel, and resume after a crash: finished items are never redone.
 * This module is the only writer of `cloud_jobs` and `cloud_job_items`.
 */
import { mkdirSync, rmSync } from "node:fs";
import { stageStream } from "../storage/stage-stream.ts";
import { join } from "node:path";
import type { Principal } from "../auth/principal.ts";
import { isoAt } from "../clock.ts";
import type { CloudDeps } from "./deps.ts";
import type { SqlClient } from "../db/sql-client.ts";
import { ApiError, badRequest, errorMessage, forTenantsOrNull } from "../errors.ts";
import { originalBlobKey } from "../files/blob-keys.ts";
import type { FileRow } from "../files/file.ts";
import { detectType } from "../ingest/detect.ts";
import { ingestIntoPlaceholder, sizeLimitViolation } from "../ingest/ingest.ts";
import { placement as filePlacement } from "../folders/placement.ts";
import { DEFAULT_UPLOAD_OPTIONS, type UploadOptions } from "../ingest/options.ts";
import { parseTags } from "../files/file-fields.ts";
import type { QueueDefinition } from "../jobs/runner.ts";
import { objectOnDisk, type ObjectOnDisk } from "../storage/object-on-disk.ts";
import { TIER_LIMITS } from "../tenancy/tiers.ts";
import { apiErrorOf, type ConnectionRow } from "./connections.ts";
import { ProviderError } from "./provider.ts";

export const CLOUD_JOB_STATUSES = ["pending", "in_progress", "completed", "partial", "failed", "cancelled"] as const;
export type CloudJobStatus = (typeof CLOUD_JOB_STATUSES)[number];
const TERMINAL: ReadonlySet<CloudJobStatus> = new Set(["completed", "partial", "failed", "cancelled"]);

/** Files per import or export request when the tier has no batch limit (CUSTOM). */
export const MAX_CLOUD_FILES = 1000;
/** Exports of this many files or fewer run before the response, which then carries cloud_file_ids. */
export const INLINE_EXPORT_MAX = 5;
/** Tries per file on provider 429/5xx before the file fails. */
export const ITEM_ATTEMPTS = 4;
const BACKOFF_BASE_MS = 500;
const BACKOFF_MAX_MS = 60_000;
/** The single-shot ceiling of the upload-intent flow; nothing larger is downloaded. */
const MAX_IMPORT_BYTES = 5 * 1024 ** 3;

interface CloudJobRow {
  id: string;
  org_id: string;
  connection_id: string;
  provider: string;
  type: "import" | "export";
  status: CloudJobStatus;
  total_files: number;
  error: string | null;
  options: string;
  runner_job_id: string | null;
  created_by: string | null;
  created_at: string;
  updated_at: string;
  completed_at: string | null;
}

interface ItemRow {
  job_id: string;
  item_index: number;
  cloud_file_id: string | null;
  name: string;
  mime_type: string | null;
  size_bytes: number | null;
  file_id: string;
  status: "pending" | "completed" | "failed" | "skipped";
  error: string | null;
  existing_file_id: string | null;
  attempts: number;
  finished_at: string | null;
}

interface ImportOptions {
  options: UploadOptions;
  placement: { projectId: string; folderId: string | null };
  providerMetadata: Record<string, unknown> | null;
}

interface ExportOptions {
  folderId: string | null;
  folderName: string | null;
  /** The folder made for folder_name, recorded before any upload so a resumed job reuses it. */
  createdFolderId: string | null;
}

export interface ImportRequest {
  connection_id: string;
  files: { id: string; name: string; mime_type?: string | null | undefined; size_bytes?: number | null | undefined }[];
  auto_describe?: boolean | undefined;
  tags?: string[] | undefined;
  folder_id?: string | null | undefined;
  provider_metadata?: Record<string, unknown> | null | undefined;
  skip_duplicates?: boolean | undefined;
}

export interface ExportRequest {
  connection_id: string;
  image_ids: string[];
  folder_id?: string | null | undefined;
  folder_name?: string | null | undefined;
}

function checkCount(principal: Principal, count: number, field: string): void {
  const max = TIER_LIMITS[principal.tier].batchFiles ?? MAX_CLOUD_FILES;
  if (count < 1) throw badRequest(`${field}: at least one file is required`);
  if (count > max) throw new ApiError("BATCH_TOO_LARGE", `${field}: at most ${max} files per request on the ${principal.tier} tier (got ${count})`);
}

// ---- the resource -----------------------------------------------------------------------------

async function jobRow(sql: SqlClient, orgId: string, id: string): Promise<CloudJobRow> {
  const row = await sql.one<CloudJobRow>("SELECT * FROM cloud_jobs WHERE id = ? AND org_id = ?", [id.toLowerCase(), orgId]);
  if (!row) throw new ApiError("CLOUD_JOB_NOT_FOUND", `cloud job ${id} not found`);
  return row;
}

function items(sql: SqlClient, jobId: string): Promise<ItemRow[]> {
  return sql.all<ItemRow>("SELECT * FROM cloud_job_items WHERE job_id = ? ORDER BY item_index", [jobId]);
}

function openJob(sql: SqlClient, id: string): Promise<CloudJobRow | null> {
  return sql.one<CloudJobRow>("SELECT * FROM cloud_jobs WHERE id = ?", [id]);
}

/** The cloud job resource (spec), with per-file detail and, for exports, the cloud ids written. */
export async function cloudJobView(ctx: CloudDeps, orgId: string, id: string) {
  const row = await jobRow(ctx.sql, orgId, id);
  const list = await items(ctx.sql, row.id);
  const count = (status: ItemRow["status"]) => list.filter((i) => i.status === status).length;
  return {
    job_id: row.id,
    type: row.type,
    status: row.status,
    connection_id: row.connection_id,
    provider: row.provider,
    total_files: row.total_files,
    completed_files: count("completed"),
    failed_files: count("failed"),
    skipped_files: count("skipped"),
    progress_percentage: row.total_files ? Math.round(((row.total_files - count("pending")) / row.total_files) * 1000) / 10 : 100,
    error: row.error,
    created_at: row.created_at,
    updated_at: row.updated_at,
    completed_at: row.completed_at,
    cloud_file_ids: row.type === "export" ? list.map((i) => (i.status === "completed" ? i.cloud_file_id : null)) : [],
    files: list.map((i) => ({
      index: i.item_index,
      name: i.name,
      cloud_file_id: i.cloud_file_id,
      image_id: i.status === "skipped" && i.existing_file_id ? i.existing_file_id : i.file_id,
      status: i.status,
      error: i.error,
      attempts: i.attempts,
    })),
  };
}

// ---- creating jobs ----------------------------------------------------------------------------

export async function createImport(ctx: CloudDeps, principal: Principal, request: ImportRequest) {
  const connection = await ctx.cloud.connection(principal.orgId, request.connection_id);
  ctx.cloud.provider(connection.provider);
  checkCount(principal, request.files.length, "files");
  // auto_describe is deprecated (spec): descriptions are always generated, as by default.
  const options: UploadOptions = {
    ...DEFAULT_UPLOAD_OPTIONS,
    tags: parseTags(request.tags ?? []),
    skipDuplicates: request.skip_duplicates ?? false,
    folderId: request.folder_id?.toLowerCase() ?? null,
  };
  // An import names no custom schema: only where its files go is checked.
  const placement = await filePlacement(ctx.sql, principal.orgId, options.folderId, options.projectId);
  const stored: ImportOptions = { options, placement, providerMetadata: request.provider_metadata ?? null };
  const jobId = crypto.randomUUID();
  const now = isoAt(ctx.clock.now());
  const imageIds = request.files.map(() => crypto.randomUUID());
  await ctx.sql.transaction(async (tx) => {
    await insertJob(tx, { id: jobId, orgId: principal.orgId, connection, type: "import", totalFiles: request.files.length, options: stored, createdBy: principal.keyId, now });
    for (const [index, file] of request.files.entries()) {
      const name = file.name.trim() || file.id;
      const mime = file.mime_type ?? "application/octet-stream";
      await tx.run(
        `INSERT INTO cloud_job_items (job_id, item_index, cloud_file_id, name, mime_type, size_bytes, file_id, status)
         VALUES (?, ?, ?, ?, ?, ?, ?, 'pending')`,
        [jobId, index, file.id, name, file.mime_type ?? null, file.size_bytes ?? null, imageIds[index]!],
      );
      await ctx.files.withTx(tx).createPlaceholder({
        id: imageIds[index]!,
        orgId: principal.orgId,
        projectId: placement.projectId,
        folderId: placement.folderId,
        filename: name,
        // A guess until detection reads the bytes; a document when nothing hints otherwise.
        mediaType: ctx.kinds.forecast(mime, name) ?? "document",
        contentType: mime,
        size: file.size_bytes ?? 0,
        tags: options.tags,
        uploadedBy: principal.keyId,
        sourceUrl: null,
      });
    }
    const runner = await ctx.jobs.submit({ queue: "cloud.import", orgId: principal.orgId, payload: { cloudJobId: jobId }, dedupeKey: `cloud:${jobId}`, maxAttempts: 10 }, tx);
    await setRunner(tx, jobId, runner.id);
  });
  return {
    image_ids: imageIds,
    job_id: jobId,
    status: "pending" as CloudJobStatus,
    total_files: request.files.length,
    is_async: true as const,
    message: `importing ${request.files.length} file(s) from ${connection.provider}; follow GET /cloud-storage/jobs/${jobId}`,
  };
}

export async function createExport(ctx: CloudDeps, principal: Principal, request: ExportRequest) {
  const connection = await ctx.cloud.connection(principal.orgId, request.connection_id);
  ctx.cloud.provider(connection.provider);
  const ids = [...new Set(request.image_ids.map((id) => id.toLowerCase()))];
  checkCount(principal, ids.length, "image_ids");
  const files: FileRow[] = [];
  for (const id of ids) {
    const row = await ctx.files.ofOrg(principal.orgId, id);
    if (!row || row.deleted_at) throw new ApiError("FILE_NOT_FOUND", `file ${id} not found`);
    if (!row.blob_key) throw badRequest(`image_ids: file ${id} has no original to export (its bytes have not arrived, or it is a link)`);
    files.push(row);
  }
  const folderName = request.folder_name?.trim() || null;
  const stored: ExportOptions = { folderId: request.folder_id ?? null, folderName, createdFolderId: null };
  const jobId = crypto.randomUUID();
  const now = isoAt(ctx.clock.now());
  const inline = files.length <= INLINE_EXPORT_MAX;
  await ctx.sql.transaction(async (tx) => {
    await insertJob(tx, { id: jobId, orgId: principal.orgId, connection, type: "export", totalFiles: files.length, options: stored, createdBy: principal.keyId, now });
    for (const [index, f] of files.entries()) {
      await tx.run(
        "INSERT INTO cloud_job_items (job_id, item_index, name, mime_type, size_bytes, file_id, status) VALUES (?, ?, ?, ?, ?, ?, 'pending')",
        [jobId, index, f.filename, f.content_type, f.size_bytes, f.id],
      );
    }
    if (!inline) {
      const runner = await ctx.jobs.submit({ queue: "cloud.export", orgId: principal.orgId, payload: { cloudJobId: jobId }, dedupeKey: `cloud:${jobId}`, maxAttempts: 10 }, tx);
      await setRunner(tx, jobId, runner.id);
    }
  });
  // A small export runs now, so the response can carry the cloud ids; a crash meanwhile is
  // recovered at the next start (recoverCloudJobs) like any unfinished job. A provider that is
  // down or rate limiting hands the rest to the durable job, which retries with backoff.
  let ranInline = inline;
  if (inline) {
    try {
      await runExport(ctx, jobId);
    } catch (err) {
      ctx.log.warn("inline cloud export interrupted; the job continues in the background", { job_id: jobId, error: errorMessage(err) });
      await ctx.sql.transaction(async (tx) => {
        const runner = await ctx.jobs.submit({ queue: "cloud.export", orgId: principal.orgId, payload: { cloudJobId: jobId }, dedupeKey: `cloud:${jobId}`, maxAttempts: 10, runAt: ctx.clock.now() + 2_000 }, tx);
        await setRunner(tx, jobId, runner.id);
      });
      ranInline = false;
    }
  }
  const view = await cloudJobView(ctx, principal.orgId, jobId);
  return {
    cloud_file_ids: view.cloud_file_ids.filter((id): id is string => id !== null),
    job_id: jobId,
    job_status: view.status,
    is_async: !ranInline,
    message: ranInline
      ? `exported ${view.completed_files} of ${files.length} file(s) to ${connection.provider}${view.failed_files ? `; ${view.failed_files} failed (see GET /cloud-storage/jobs/${jobId})` : ""}`
      : `exporting ${files.length} file(s) to ${connection.provider}; follow GET /cloud-storage/jobs/${jobId}`,
  };
}

async function insertJob(
  tx: SqlClient,
  job: { id: string; orgId: string; connection: ConnectionRow; type: "import" | "export"; totalFiles: number; options: ImportOptions | ExportOptions; createdBy: string | null; now: string },
): Promise<void> {
  await tx.run(
    `INSERT INTO cloud_jobs (id, org_id, connection_id, provider, type, status, total_files, options, created_by, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, 'pending', ?, ?, ?, ?, ?)`,
    [job.id, job.orgId, job.connection.id, job.connection.provider, job.type, job.totalFiles, JSON.stringify(job.options), job.createdBy, job.now, job.now],
  );
}

async function setRunner(sql: SqlClient, jobId: string, runnerJobId: string): Promise<void> {
  await sql.run("UPDATE cloud_jobs SET runner_job_id = ? WHERE id = ?", [runnerJobId, jobId]);
}

// ---- cancellation -------------------------------------------------------------------------------

/** Files not yet transferred become skipped (import placeholders fail) and the job cancelled. */
async function markCancelled(ctx: CloudDeps, row: CloudJobRow): Promise<void> {
  const now = isoAt(ctx.clock.now());
  await ctx.sql.transaction(async (tx) => {
    if (row.type === "import") {
      for (const item of await items(tx, row.id)) if (item.status === "pending") await ctx.files.withTx(tx).placeholderFailed(item.file_id, "the cloud import was cancelled before this file was downloaded");
    }
    await tx.run("UPDATE cloud_job_items SET status = 'skipped', error = 'cancelled', finished_at = ? WHERE job_id = ? AND status = 'pending'", [now, row.id]);
    await tx.run(
      "UPDATE cloud_jobs SET status = 'cancelled', error = 'cancelled by request', completed_at = ?, updated_at = ? WHERE id = ? AND status IN ('pending','in_progress')",
      [now, now, row.id],
    );
  });
}

/** Cancels a job that has not finished: files not yet transferred are skipped (their placeholders fail). */
export async function cancelCloudJob(ctx: CloudDeps, orgId: string, id: string) {
  const row = await jobRow(ctx.sql, orgId, id);
  if (TERMINAL.has(row.status)) throw new ApiError("JOB_FINISHED", `cloud job ${row.id} is already ${row.status}`);
  await markCancelled(ctx, row);
  if (row.runner_job_id) {
    try {
      await ctx.jobs.cancel(orgId, row.runner_job_id);
    } catch (err) {
      // Already finished: the job saw nothing left to do.
      if (!(err instanceof ApiError)) throw err;
    }
  }
  return cloudJobView(ctx, orgId, row.id);
}

// ---- running jobs -------------------------------------------------------------------------------

async function setStatus(ctx: CloudDeps, id: string, status: CloudJobStatus, error: string | null = null): Promise<void> {
  const now = isoAt(ctx.clock.now());
  await ctx.sql.run(
    `UPDATE cloud_jobs SET status = ?, error = coalesce(?, error), updated_at = ?, completed_at = CASE WHEN ? = 1 THEN ? ELSE completed_at END
     WHERE id = ? AND status NOT IN ('completed','partial','failed','cancelled')`,
    [status, forTenantsOrNull(error), now, TERMINAL.has(status) ? 1 : 0, now, id],
  );
}

async function finishItem(ctx: CloudDeps, item: ItemRow, outcome: { status: ItemRow["status"]; error?: string | null; cloudFileId?: string | null; existingFileId?: string | null }): Promise<void> {
  const now = isoAt(ctx.clock.now());
  await ctx.sql.transaction(async (tx) => {
    await tx.run(
      `UPDATE cloud_job_items SET status = ?, error = ?, cloud_file_id = coalesce(?, cloud_file_id), existing_file_id = ?, finished_at = ?
       WHERE job_id = ? AND item_index = ? AND status = 'pending'`,
      [outcome.status, forTenantsOrNull(outcome.error), outcome.cloudFileId ?? null, outcome.existingFileId ?? null, now, item.job_id, item.item_index],
    );
    await tx.run("UPDATE cloud_jobs SET updated_at = ? WHERE id = ?", [now, item.job_id]);
  });
}

/** Counts one more try of the item; returns the tries so far (kept across restarts). */
async function countAttempt(ctx: CloudDeps, item: ItemRow): Promise<number> {
  const row = await ctx.sql.one<{ attempts: number }>("UPDATE cloud_job_items SET attempts = attempts + 1 WHERE job_id = ? AND item_index = ? RETURNING attempts", [item.job_id, item.item_index]);
  return row!.attempts;
}

/** Ends the job by its items: completed, partial, failed (nothing transferred) or left cancelled. */
async function settle(ctx: CloudDeps, id: string): Promise<void> {
  const list = await items(ctx.sql, id);
  if (list.some((i) => i.status === "pending")) return;
  const ok = list.filter((i) => i.status === "completed" || (i.status === "skipped" && i.existing_file_id)).length;
  const failed = list.filter((i) => i.status === "failed");
  const status: CloudJobStatus = failed.length === 0 ? "completed" : ok === 0 ? "failed" : "partial";
  await setStatus(ctx, id, status, failed.length ? `${failed.length} of ${list.length} file(s) failed; first: ${failed[0]!.error}` : null);
}

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener("abort", () => {
      clearTimeout(timer);
      reject(signal.reason);
    }, { once: true });
  });

/**
 * Runs one item's transfer with retries: provider 429/5xx (and network failures) are tried up to
 * ITEM_ATTEMPTS times with exponential backoff, or after the provider's Retry-After. Each try is
 * counted in the item's row, so a resumed job continues the count.
 */
async function withRetries<T>(ctx: CloudDeps, item: ItemRow, work: () => Promise<T>, signal?: AbortSignal): Promise<T> {
  for (;;) {
    const attempts = await countAttempt(ctx, item);
    try {
      return await work();
    } catch (err) {
      if (!(err instanceof ProviderError) || !err.retryable || attempts >= ITEM_ATTEMPTS) throw err;
      const backoff = Math.min(BACKOFF_MAX_MS, BACKOFF_BASE_MS * 2 ** (attempts - 1));
      const wait = err.retryAfterSeconds !== null ? Math.min(BACKOFF_MAX_MS, err.retryAfterSeconds * 1000) : backoff;
      ctx.log.info("cloud transfer will be retried", { job_id: item.job_id, item: item.item_index, attempt: attempts, wait_ms: wait, error: err.message });
      await sleep(wait, signal);
    }
  }
}

async function isCancelled(ctx: CloudDeps, id: string): Promise<boolean> {
  return (await ctx.sql.one<{ status: string }>("SELECT status FROM cloud_jobs WHERE id = ?", [id]))?.status === "cancelled";
}

async function liveConnection(ctx: CloudDeps, job: CloudJobRow): Promise<ConnectionRow | null> {
  try {
    return await ctx.cloud.connection(job.org_id, job.connection_id);
  } catch {
    return null;
  }
}

/** Fails every pending item with one reason (the connection is gone or its grant was revoked). */
async function failRest(ctx: CloudDeps, job: CloudJobRow, why: string): Promise<void> {
  for (const item of await items(ctx.sql, job.id)) {
    if (item.status !== "pending") continue;
    if (job.type === "import") await ctx.files.placeholderFailed(item.file_id, why);
    await finishItem(ctx, item, { status: "failed", error: why });
  }
}

async function importItem(ctx: CloudDeps, job: CloudJobRow, connection: ConnectionRow, stored: ImportOptions, item: ItemRow, stagingDir: string, signal?: AbortSignal): Promise<void> {
  const path = join(stagingDir, String(item.item_index));
  let filename = item.name;
  const staged = await withRetries(ctx, item, async () => {
    const download = await ctx.cloud.withAccess(connection, (access, provider) => provider.download(access, { id: item.cloud_file_id!, mimeType: item.mime_type }, signal));
    if (download.filenameSuffix && !filename.toLowerCase().endsWith(download.filenameSuffix)) filename += download.filenameSuffix;
    try {
      return await stageStream(download.body, path, MAX_IMPORT_BYTES);
    } catch (err) {
      if (signal?.aborted) throw err;
      // The connection broke mid-body: as retryable as a 5xx.
      throw err instanceof ProviderError ? err : new ProviderError("unavailable", `the download of ${item.name} broke off: ${errorMessage(err)}`);
    }
  }, signal);
  const detection = await detectType(ctx.kinds.uploaded(), staged.head, filename, path);
  const tooLarge = detection.ok ? sizeLimitViolation(ctx.kinds, detection.type, staged.size) : null;
  if (!detection.ok || tooLarge) {
    rmSync(path, { force: true });
    const why = detection.ok ? tooLarge! : `unsupported or unsafe file: ${detection.reason}`;
    await ctx.files.placeholderFailed(item.file_id, why);
    await finishItem(ctx, item, { status: "failed", error: why });
    return;
  }
  const outcome = await ingestIntoPlaceholder(ctx, path, {
    id: item.file_id,
    orgId: job.org_id,
    filename,
    size: staged.size,
    sha256: staged.sha256,
    type: detection.type,
    blobKey: originalBlobKey(job.org_id, item.file_id),
    uploadMethod: "streaming",
    sessionId: null,
    uploadedBy: job.created_by,
    options: stored.options,
    placement: stored.placement,
  });
  await finishItem(ctx, item, outcome.status === "skipped" ? { status: "skipped", existingFileId: outcome.skippedExistingId } : { status: "completed" });
}

async function runImport(ctx: CloudDeps, jobId: string, signal?: AbortSignal): Promise<void> {
  const job = await openJob(ctx.sql, jobId);
  if (!job || TERMINAL.has(job.status)) return;
  await setStatus(ctx, job.id, "in_progress");
  const stored = JSON.parse(job.options) as ImportOptions;
  const stagingDir = join(ctx.dataDir.staging, `cloud-${job.id}`);
  mkdirSync(stagingDir, { recursive: true });
  try {
    for (const item of await items(ctx.sql, job.id)) {
      if (item.status !== "pending") continue;
      if (signal?.aborted) throw signal.reason;
      if (await isCancelled(ctx, job.id)) return;
      const connection = await liveConnection(ctx, job);
      if (!connection) {
        await failRest(ctx, job, "the cloud connection was removed");
        break;
      }
      try {
        await importItem(ctx, job, connection, stored, item, stagingDir, signal);
      } catch (err) {
        if (signal?.aborted) throw err;
        const why = errorMessage(apiErrorOf(err));
        ctx.log.warn("cloud import item failed", { job_id: job.id, item: item.item_index, error: why });
        await ctx.files.placeholderFailed(item.file_id, why);
        await finishItem(ctx, item, { status: "failed", error: why });
        if (err instanceof ProviderError && (err.kind === "grant_revoked" || err.kind === "unauthorized")) {
          await failRest(ctx, job, why);
          break;
        }
      }
    }
    await settle(ctx, job.id);
  } finally {
    if (!signal?.aborted) rmSync(stagingDir, { recursive: true, force: true });
  }
}

async function runExport(ctx: CloudDeps, jobId: string, signal?: AbortSignal): Promise<void> {
  const job = await openJob(ctx.sql, jobId);
  if (!job || TERMINAL.has(job.status)) return;
  await setStatus(ctx, job.id, "in_progress");
  const stored = JSON.parse(job.options) as ExportOptions;
  const connection = await liveConnection(ctx, job);
  if (!connection) {
    await failRest(ctx, job, "the cloud connection was removed");
    await settle(ctx, job.id);
    return;
  }
  let folderId = stored.createdFolderId ?? stored.folderId;
  if (stored.folderName && !stored.createdFolderId) {
    try {
      const folder = await ctx.cloud.withAccess(connection, (access, provider) => provider.createFolder(access, { parentId: stored.folderId, name: stored.folderName! }));
      folderId = folder.id;
      await ctx.sql.run("UPDATE cloud_jobs SET options = ? WHERE id = ?", [JSON.stringify({ ...stored, createdFolderId: folder.id }), job.id]);
    } catch (err) {
      if (err instanceof ProviderError && err.retryable) throw err;
      const why = `the folder ${stored.folderName} could not be created: ${errorMessage(apiErrorOf(err))}`;
      await failRest(ctx, job, why);
      await settle(ctx, job.id);
      return;
    }
  }
  for (const item of await items(ctx.sql, job.id)) {
    if (item.status !== "pending") continue;
    if (signal?.aborted) throw signal.reason;
    if (await isCancelled(ctx, job.id)) return;
    let original: ObjectOnDisk | null = null;
    try {
      const file = await ctx.files.byId(item.file_id);
      // The original is sent from disk (the local store's file in place, else a scratch copy), never held in memory.
      original = file?.blob_key && !file.deleted_at ? await objectOnDisk(ctx.blobs, file.blob_key, ctx.dataDir.scratch) : null;
      if (!file || !original) throw new Error("the file was deleted before it was exported");
      const body = Bun.file(original.path);
      const uploaded = await withRetries(ctx, item, () =>
        ctx.cloud.withAccess(connection, (access, provider) => provider.upload(access, { folderId, name: file.filename, mimeType: file.content_type, body })), signal);
      await finishItem(ctx, item, { status: "completed", cloudFileId: uploaded.id });
    } catch (err) {
      if (signal?.aborted) throw err;
      const why = errorMessage(apiErrorOf(err));
      ctx.log.warn("cloud export item failed", { job_id: job.id, item: item.item_index, error: why });
      await finishItem(ctx, item, { status: "failed", error: why });
      if (err instanceof ProviderError && (err.kind === "grant_revoked" || err.kind === "unauthorized")) {
        await failRest(ctx, job, why);
        break;
      }
    } finally {
      original?.release();
    }
  }
  await settle(ctx, job.id);
}

/**
 * What a runner job's end means for its cloud job: cancelled through the generic job route, the
 * cloud job is cancelled too; failed for good, it fails rather than stay in progress forever.
 * A shutdown or lost lease changes nothing (the job resumes).
 */
async function runnerJobEnded(ctx: CloudDeps, jobId: string, runner: { attempt: number; maxAttempts: number; signal: AbortSignal }, err: unknown): Promise<void> {
  const job = await openJob(ctx.sql, jobId);
  if (!job) return;
  if (runner.signal.aborted) {
    if (errorMessage(runner.signal.reason) === "job cancelled") await markCancelled(ctx, job);
    return;
  }
  if (runner.attempt < runner.maxAttempts) return;
  await failRest(ctx, job, errorMessage(err));
  await setStatus(ctx, jobId, "failed", errorMessage(err));
}

export function cloudImportQueue(ctx: CloudDeps): QueueDefinition<"cloud.import"> {
  return cloudQueue(ctx, "cloud.import", runImport);
}

export function cloudExportQueue(ctx: CloudDeps): QueueDefinition<"cloud.export"> {
  return cloudQueue(ctx, "cloud.export", runExport);
}

/** The queue of one kind of cloud job: each runner job runs one cloud job; runnerJobEnded settles it when a run fails. */
function cloudQueue<Q extends "cloud.import" | "cloud.export">(ctx: CloudDeps, name: Q, run: (ctx: CloudDeps, jobId: string, signal?: AbortSignal) => Promise<void>): QueueDefinition<Q> {
  return {
    name,
    concurrency: 1,
    backoffMs: 2_000,
    maxBackoffMs: 120_000,
    async handler(job) {
      try {
        await run(ctx, job.payload.cloudJobId, job.signal);
      } catch (err) {
        await runnerJobEnded(ctx, job.payload.cloudJobId, job, err);
        throw err;
      }
      return [{ cloud_job_id: job.payload.cloudJobId }];
    },
  };
}

/**
 * At start: unfinished cloud jobs get their runner job back if it is gone (an inline export cut
 * off by a crash, a runner job pruned). Jobs whose runner job is still pending or running are
 * left to it (the dedupe key makes a second enqueue return the same job).
 */
export async function recoverCloudJobs(ctx: CloudDeps): Promise<number> {
  const open = await ctx.sql.all<CloudJobRow>("SELECT * FROM cloud_jobs WHERE status IN ('pending','in_progress')");
  let requeued = 0;
  for (const job of open) {
    const queue = job.type === "import" ? "cloud.import" : "cloud.export";
    // The runner job and its record commit together; another process starting at once finds the same job by its dedupe key.
    await ctx.sql.transaction(async (tx) => {
      const runner = await ctx.jobs.submit({ queue, orgId: job.org_id, payload: { cloudJobId: job.id }, dedupeKey: `cloud:${job.id}`, maxAttempts: 10 }, tx);
      if (runner.id !== job.runner_job_id) {
        await setRunner(tx, job.id, runner.id);
        requeued++;
      }
    });
  }
  return requeued;
}
