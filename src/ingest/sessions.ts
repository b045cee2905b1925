/**
 * Upload sessions on the data-access port (docs/scale-out.md): the session and its items as a
 * batch writes them (created, each item's outcome, closed), the session with live counts, the
 * paged results, the summary, cancellation (the spec's transition table), stuck files, and the
 * unified per-file upload status, as camelCase results that session-views.ts maps to the spec's
 * bodies. The only writer of `upload_sessions` and `session_items`.
 */
import { isoAt, type Clock } from "../clock.ts";
import { atomically, type SqlClient } from "../db/sql-client.ts";
import { ApiError } from "../errors.ts";
import { API_PREFIX } from "../http/api-prefix.ts";

export const SESSION_STATUSES = ["pending", "uploading", "processing", "completed", "failed", "expired", "cancelled"] as const;
export type SessionStatus = (typeof SESSION_STATUSES)[number];
export const FINISHED_SESSION_STATUSES: ReadonlySet<SessionStatus> = new Set(["completed", "failed", "expired", "cancelled"]);

export interface SessionRow {
  id: string;
  org_id: string;
  status: SessionStatus;
  upload_method: "streaming" | "presigned";
  total_files: number;
  rejected_files: number;
  options: string;
  created_by: string | null;
  created_at: string;
  started_at: string | null;
  completed_at: string | null;
  updated_at: string;
}

export interface ItemRow {
  session_id: string;
  item_index: number;
  filename: string;
  file_id: string;
  status: "pending" | "completed" | "failed" | "skipped";
  size_bytes: number;
  sha256: string;
  media_type: string;
  content_type: string;
  format: string | null;
  document_type: string | null;
  skipped_existing_file_id: string | null;
  error: string | null;
  processing_time_ms: number | null;
  created_at: string;
  finished_at: string | null;
}

export const websocketChannel = (sessionId: string) => `batch.${sessionId}`;
export const statusUrl = (sessionId: string) => `${API_PREFIX}/files/sessions/${sessionId}/status`;

export function sessionNotFound(id: string) {
  return new ApiError("SESSION_NOT_FOUND", `upload session ${id} not found`);
}

export async function getSessionRow(db: SqlClient, orgId: string, id: string): Promise<SessionRow> {
  const row = await db.one<SessionRow>("SELECT * FROM upload_sessions WHERE id = ? AND org_id = ?", [id, orgId]);
  if (!row) throw sessionNotFound(id);
  return row;
}

interface Counts {
  completed: number;
  failed: number;
  skipped: number;
  pending: number;
}

async function itemCounts(db: SqlClient, sessionId: string): Promise<Counts> {
  const counts: Counts = { completed: 0, failed: 0, skipped: 0, pending: 0 };
  for (const r of await db.all<{ status: keyof Counts; n: number }>("SELECT status, count(*) AS n FROM session_items WHERE session_id = ? GROUP BY status", [sessionId])) {
    counts[r.status] = r.n;
  }
  return counts;
}

/** A session's live counts. */
export interface SessionProgress {
  id: string;
  status: SessionStatus;
  uploadMethod: SessionRow["upload_method"];
  totalFiles: number;
  completedFiles: number;
  /** Items that failed plus files refused at upload. */
  failedFiles: number;
  skippedFiles: number;
  pendingFiles: number;
  progressPercentage: number;
}

/** A session with its live counts and its latest completions and errors. */
export interface SessionState extends SessionProgress {
  createdAt: string;
  startedAt: string | null;
  completedAt: string | null;
  estimatedCompletionTime: string | null;
  recentCompletions: { filename: string; fileId: string | null; status: ItemRow["status"]; processingTimeMs: number | null }[];
  recentErrors: { filename: string; error: string; failedAt: string | null }[];
}

function progressOf(row: SessionRow, c: Counts): SessionProgress {
  const done = row.total_files - c.pending;
  return {
    id: row.id,
    status: row.status,
    uploadMethod: row.upload_method,
    totalFiles: row.total_files,
    completedFiles: c.completed,
    failedFiles: c.failed + row.rejected_files,
    skippedFiles: c.skipped,
    pendingFiles: c.pending,
    progressPercentage: row.total_files === 0 ? 100 : Math.round((done / row.total_files) * 1000) / 10,
  };
}

export async function sessionProgress(db: SqlClient, row: SessionRow): Promise<SessionProgress> {
  return progressOf(row, await itemCounts(db, row.id));
}

export async function sessionState(db: SqlClient, row: SessionRow): Promise<SessionState> {
  const c = await itemCounts(db, row.id);
  let eta: string | null = null;
  if (row.status === "processing" && row.started_at && c.pending > 0) {
    const processed = c.completed + c.failed + c.skipped;
    if (processed > 0) {
      const started = Date.parse(row.started_at);
      const perItem = (Date.parse(row.updated_at) - started) / processed;
      eta = new Date(Date.parse(row.updated_at) + perItem * c.pending).toISOString();
    }
  }
  // finished_at is set on every item that is not pending, so NULLS LAST needs no spelling here.
  const recent = await db.all<ItemRow>(
    "SELECT * FROM session_items WHERE session_id = ? AND status IN ('completed','skipped') ORDER BY finished_at DESC, item_index DESC LIMIT 10",
    [row.id],
  );
  const errors = await db.all<ItemRow>("SELECT * FROM session_items WHERE session_id = ? AND status = 'failed' ORDER BY finished_at DESC, item_index DESC LIMIT 10", [
    row.id,
  ]);
  return {
    ...progressOf(row, c),
    createdAt: row.created_at,
    startedAt: row.started_at,
    completedAt: row.completed_at,
    estimatedCompletionTime: eta,
    recentCompletions: recent.map((i) => ({
      filename: i.filename,
      fileId: i.status === "skipped" ? i.skipped_existing_file_id : i.file_id,
      status: i.status,
      processingTimeMs: i.processing_time_ms,
    })),
    recentErrors: errors.map((i) => ({ filename: i.filename, error: i.error ?? "failed", failedAt: i.finished_at })),
  };
}

export async function listSessions(
  db: SqlClient,
  orgId: string,
  filter: { status?: string | undefined; uploadMethod?: string | undefined },
  limit: number,
  offset: number,
): Promise<{ items: SessionState[]; total: number }> {
  const where = ["org_id = ?"];
  const args: (string | number)[] = [orgId];
  if (filter.status) {
    where.push("status = ?");
    args.push(filter.status);
  }
  if (filter.uploadMethod) {
    where.push("upload_method = ?");
    args.push(filter.uploadMethod);
  }
  const clause = where.join(" AND ");
  const total = (await db.one<{ n: number }>(`SELECT count(*) AS n FROM upload_sessions WHERE ${clause}`, args))?.n ?? 0;
  const rows = await db.all<SessionRow>(`SELECT * FROM upload_sessions WHERE ${clause} ORDER BY created_at DESC, id LIMIT ? OFFSET ?`, [...args, limit, offset]);
  const items: SessionState[] = [];
  for (const row of rows) items.push(await sessionState(db, row));
  return { items, total };
}

export interface SessionResults {
  sessionId: string;
  results: {
    fileId: string | null;
    filename: string;
    status: ItemRow["status"];
    description: string | null;
    visibleText: string | null;
    tags: string[];
    processingTimeMs: number | null;
    errorMessage: string | null;
    createdAt: string;
  }[];
  totalCount: number;
  offset: number;
  limit: number;
  summary: { totalFiles: number; completed: number; failed: number; skipped: number };
}

export async function sessionResults(db: SqlClient, orgId: string, id: string, includeFailed: boolean, limit: number, offset: number): Promise<SessionResults> {
  const session = await getSessionRow(db, orgId, id);
  const filter = includeFailed ? "" : "AND i.status != 'failed'";
  const total = (await db.one<{ n: number }>(`SELECT count(*) AS n FROM session_items i WHERE i.session_id = ? ${filter}`, [id]))?.n ?? 0;
  const rows = await db.all<ItemRow & { tags: string | null; visible_text: string | null; description: string | null; processing_error: string | null }>(
    `SELECT i.*, f.tags, f.visible_text, coalesce(f.user_description, f.upload_description) AS description, f.processing_error
     FROM session_items i LEFT JOIN files f ON f.id = coalesce(i.skipped_existing_file_id, i.file_id)
     WHERE i.session_id = ? ${filter} ORDER BY i.item_index LIMIT ? OFFSET ?`,
    [id, limit, offset],
  );
  const c = await itemCounts(db, id);
  return {
    sessionId: id,
    results: rows.map((r) => ({
      fileId: r.status === "skipped" ? r.skipped_existing_file_id : r.status === "completed" ? r.file_id : null,
      filename: r.filename,
      status: r.status,
      description: r.description ?? null,
      visibleText: r.visible_text ?? null,
      tags: r.tags ? (JSON.parse(r.tags) as string[]) : [],
      processingTimeMs: r.processing_time_ms,
      errorMessage: r.error ?? null,
      createdAt: r.created_at,
    })),
    totalCount: total,
    offset,
    limit,
    summary: { totalFiles: session.total_files, completed: c.completed, failed: c.failed + session.rejected_files, skipped: c.skipped },
  };
}

/**
 * Cancels an active session: its pending items become skipped. The session's row is locked
 * (PostgreSQL) for the check and the writes, so a cancellation and the session's closing after
 * its last item (closeSession) take turns: one of them finishes the session, the other sees it
 * finished.
 */
export function cancelSession(db: SqlClient, clock: Clock, orgId: string, id: string): Promise<SessionRow> {
  return db.transaction(async (tx) => {
    const row = await tx.one<SessionRow>(`SELECT * FROM upload_sessions WHERE id = ? AND org_id = ? ${tx.dialect.forUpdate}`, [id, orgId]);
    if (!row) throw sessionNotFound(id);
    if (FINISHED_SESSION_STATUSES.has(row.status)) {
      throw new ApiError("SESSION_FINISHED", `session ${id} is already ${row.status} and cannot be cancelled`);
    }
    const now = isoAt(clock.now());
    await tx.run("UPDATE session_items SET status = 'skipped', error = 'session cancelled', finished_at = ? WHERE session_id = ? AND status = 'pending'", [now, id]);
    const cancelled = await tx.one<SessionRow>("UPDATE upload_sessions SET status = 'cancelled', completed_at = ?, updated_at = ? WHERE id = ? RETURNING *", [now, now, id]);
    return cancelled!;
  });
}

// ---- a batch's bookkeeping --------------------------------------------------------------------

/** An accepted file of a batch, as its session item records it. */
export interface NewItem {
  index: number;
  filename: string;
  fileId: string;
  size: number;
  sha256: string;
  mediaType: string;
  mime: string;
  format: string | null;
  documentType: string | null;
}

/**
 * Writes a streaming session with its accepted files as pending items: `processing` when there
 * are any, else already `failed` (every file was refused). Runs in the caller's transaction when
 * given one (the batch's job is queued in it too).
 */
export function createSession(
  db: SqlClient,
  session: { id: string; orgId: string; totalFiles: number; rejectedFiles: number; options: string; createdBy: string | null; at: string },
  items: readonly NewItem[],
): Promise<void> {
  return atomically(db, async (tx) => {
    const { id, at } = session;
    await tx.run(
      `INSERT INTO upload_sessions (id, org_id, status, upload_method, total_files, rejected_files, options, created_by, created_at, started_at, updated_at, completed_at)
       VALUES (?, ?, ?, 'streaming', ?, ?, ?, ?, ?, ?, ?, ?)`,
      [id, session.orgId, items.length ? "processing" : "failed", session.totalFiles, session.rejectedFiles, session.options, session.createdBy, at, at, at, items.length ? null : at],
    );
    for (const i of items) {
      await tx.run(
        `INSERT INTO session_items (session_id, item_index, filename, file_id, status, size_bytes, sha256, media_type, content_type, format, document_type, created_at)
         VALUES (?, ?, ?, ?, 'pending', ?, ?, ?, ?, ?, ?, ?)`,
        [id, i.index, i.filename, i.fileId, i.size, i.sha256, i.mediaType, i.mime, i.format, i.documentType, at],
      );
    }
  });
}

/** A session by id alone (the batch's own work, which has no principal), or null. */
export function sessionById(db: SqlClient, id: string): Promise<SessionRow | null> {
  return db.one<SessionRow>("SELECT * FROM upload_sessions WHERE id = ?", [id]);
}

export async function sessionStatus(db: SqlClient, id: string): Promise<SessionStatus | null> {
  return (await db.one<{ status: SessionStatus }>("SELECT status FROM upload_sessions WHERE id = ?", [id]))?.status ?? null;
}

/** A session's items in order; only the pending ones when asked. */
export function sessionItems(db: SqlClient, sessionId: string, { pendingOnly = false } = {}): Promise<ItemRow[]> {
  return db.all<ItemRow>(`SELECT * FROM session_items WHERE session_id = ? ${pendingOnly ? "AND status = 'pending'" : ""} ORDER BY item_index`, [sessionId]);
}

export interface ItemResult {
  status: "completed" | "failed" | "skipped";
  skippedExistingFileId: string | null;
  error: string | null;
  processingTimeMs: number;
}

/**
 * Records what became of a pending item (and the session's last activity). Only a pending item
 * changes: an item a cancellation has skipped meanwhile stays skipped. Resolves once committed.
 * The session's row is written first: a cancellation locks it before the items, and taking the
 * two in the other order deadlocked the two on PostgreSQL.
 */
export function recordItemResult(db: SqlClient, sessionId: string, itemIndex: number, result: ItemResult, at: string): Promise<boolean> {
  return atomically(db, async (tx) => {
    await tx.run("UPDATE upload_sessions SET updated_at = ? WHERE id = ?", [at, sessionId]);
    const { changes } = await tx.run(
      `UPDATE session_items SET status = ?, skipped_existing_file_id = ?, error = ?, processing_time_ms = ?, finished_at = ?
       WHERE session_id = ? AND item_index = ? AND status = 'pending'`,
      [result.status, result.skippedExistingFileId, result.error, result.processingTimeMs, at, sessionId, itemIndex],
    );
    return changes > 0;
  });
}

/** A session closed by its last item: its final status and its items' tallies. */
export interface ClosedSession {
  row: SessionRow;
  completedFiles: number;
  /** Items that failed plus files refused at upload. */
  failedFiles: number;
  skippedFiles: number;
}

/**
 * Closes a processing session none of whose items is pending: `completed` when any item was
 * stored or skipped as a duplicate, else `failed`. `onClosed` runs inside the closing
 * transaction (what must commit with the session's end: its webhook event). Returns null when the
 * session is not processing (cancelled meanwhile, or already closed) or still has pending items.
 * The row is locked (PostgreSQL) so a cancellation and the closing take turns.
 */
export function closeSession(
  db: SqlClient,
  sessionId: string,
  at: string,
  onClosed: (tx: SqlClient, closed: ClosedSession) => unknown = () => undefined,
): Promise<ClosedSession | null> {
  return db.transaction(async (tx) => {
    const row = await tx.one<SessionRow>(`SELECT * FROM upload_sessions WHERE id = ? ${tx.dialect.forUpdate}`, [sessionId]);
    if (!row || row.status !== "processing") return null;
    const c = await itemCounts(tx, sessionId);
    if (c.pending > 0) return null;
    const status: SessionStatus = c.completed + c.skipped > 0 ? "completed" : "failed";
    const closed = await tx.one<SessionRow>("UPDATE upload_sessions SET status = ?, completed_at = ?, updated_at = ? WHERE id = ? RETURNING *", [status, at, at, sessionId]);
    const result = { row: closed!, completedFiles: c.completed, failedFiles: c.failed + row.rejected_files, skippedFiles: c.skipped };
    await onClosed(tx, result);
    return result;
  });
}

/** Processing sessions that still have pending items (their job is queued again at start). */
export function interruptedSessions(db: SqlClient): Promise<{ id: string; org_id: string }[]> {
  return db.all<{ id: string; org_id: string }>(
    "SELECT s.id, s.org_id FROM upload_sessions s WHERE s.status = 'processing' AND EXISTS (SELECT 1 FROM session_items i WHERE i.session_id = s.id AND i.status = 'pending')",
  );
}

// ---- unified per-file status --------------------------------------------------------------

interface FileStatusRow {
  id: string;
  session_id: string | null;
  processing_status: "queued" | "processing" | "stored" | "completed" | "failed";
  processing_job_id: string | null;
  processing_error: string | null;
  last_error_at: string | null;
  variant_status: string | null;
  description_status: string | null;
  retry_count: number;
  created_at: string;
  updated_at: string;
  processing_started_at: string | null;
  processing_completed_at: string | null;
}

export type UnifiedStatusValue = "uploading" | "confirming" | "queued" | "processing" | "completed" | "failed" | "partially_completed";

const UNIFIED: Record<FileStatusRow["processing_status"], UnifiedStatusValue> = {
  queued: "queued",
  processing: "processing",
  // The bytes are safe but no analysis pipeline ran: not "completed".
  stored: "partially_completed",
  completed: "completed",
  failed: "failed",
};

export const DEFAULT_STUCK_MINUTES = 30;
export const MINUTES_PER_YEAR = 525_600;

/** A file's upload and processing state as one status. */
export interface UnifiedStatus {
  fileId: string;
  sessionId: string | null;
  status: UnifiedStatusValue;
  variantStatus: string | null;
  descriptionStatus: string | null;
  processingStatus: FileStatusRow["processing_status"];
  processingJobIds: string[];
  errorMessage: string | null;
  lastErrorAt: string | null;
  createdAt: string;
  lastUpdatedAt: string;
  completedAt: string | null;
  retryCount: number;
  processingDurationSeconds: number | null;
  isStuck: boolean;
  isTerminal: boolean;
}

export function unifiedStatus(row: FileStatusRow, nowMs: number, stuckMinutes = DEFAULT_STUCK_MINUTES): UnifiedStatus {
  const terminal = row.processing_status === "stored" || row.processing_status === "completed" || row.processing_status === "failed";
  const started = row.processing_started_at ? Date.parse(row.processing_started_at) : null;
  const finished = row.processing_completed_at ? Date.parse(row.processing_completed_at) : null;
  return {
    fileId: row.id,
    sessionId: row.session_id,
    status: UNIFIED[row.processing_status],
    variantStatus: row.variant_status,
    descriptionStatus: row.description_status,
    processingStatus: row.processing_status,
    processingJobIds: row.processing_job_id ? [row.processing_job_id] : [],
    errorMessage: row.processing_error,
    lastErrorAt: row.last_error_at,
    createdAt: row.created_at,
    lastUpdatedAt: row.updated_at,
    completedAt: terminal ? row.processing_completed_at : null,
    retryCount: row.retry_count,
    processingDurationSeconds: started !== null ? ((finished ?? nowMs) - started) / 1000 : null,
    isStuck: !terminal && nowMs - Date.parse(row.updated_at) > stuckMinutes * 60_000,
    isTerminal: terminal,
  };
}

// The variants' state is the image kind's (images/image-facts.ts); a file without its row has none.
const FILE_STATUS_COLUMNS = `id, session_id, processing_status, processing_job_id, processing_error, last_error_at,
  (SELECT variant_status FROM image_facts WHERE file_id = files.id) AS variant_status,
  description_status, retry_count, created_at, updated_at, processing_started_at, processing_completed_at`;

export async function fileUploadStatus(db: SqlClient, clock: Clock, orgId: string, fileId: string): Promise<UnifiedStatus> {
  const row = await db.one<FileStatusRow>(`SELECT ${FILE_STATUS_COLUMNS} FROM files WHERE id = ? AND org_id = ? AND deleted_at IS NULL`, [fileId, orgId]);
  if (!row) throw new ApiError("FILE_NOT_FOUND", `file ${fileId} not found`);
  return unifiedStatus(row, clock.now());
}

export async function stuckFiles(db: SqlClient, clock: Clock, orgId: string, stuckMinutes: number, limit: number): Promise<UnifiedStatus[]> {
  const cutoff = isoAt(clock.now() - stuckMinutes * 60_000);
  const rows = await db.all<FileStatusRow>(
    `SELECT ${FILE_STATUS_COLUMNS} FROM files
     WHERE org_id = ? AND deleted_at IS NULL AND processing_status IN ('queued','processing') AND updated_at < ?
     ORDER BY updated_at, id LIMIT ?`,
    [orgId, cutoff, limit],
  );
  return rows.map((r) => unifiedStatus(r, clock.now(), stuckMinutes));
}

/** Files of a session tallied by unified status (plus "total" and "stuck") and by description status. */
export interface SessionSummary {
  sessionId: string;
  overallStatus: SessionStatus;
  completionPercentage: number;
  counts: Record<"total" | UnifiedStatusValue | "stuck", number>;
  descriptionCounts: Record<"pending" | "processing" | "completed" | "failed" | "skipped", number>;
  errorCount: number;
  errorMessages: string[];
  createdAt: string;
  lastActivityAt: string;
}

export async function sessionSummary(db: SqlClient, clock: Clock, orgId: string, id: string): Promise<SessionSummary> {
  const session = await getSessionRow(db, orgId, id);
  const state = await sessionState(db, session);
  const counts = { total: session.total_files, uploading: 0, confirming: 0, queued: 0, processing: 0, completed: 0, failed: 0, partially_completed: 0, stuck: 0 };
  const descriptions = { pending: 0, processing: 0, completed: 0, failed: 0, skipped: 0 };
  const files = await db.all<FileStatusRow>(`SELECT ${FILE_STATUS_COLUMNS} FROM files WHERE session_id = ?`, [id]);
  for (const f of files) {
    const u = unifiedStatus(f, clock.now());
    counts[u.status] += 1;
    if (u.isStuck) counts.stuck += 1;
    if (f.description_status && f.description_status in descriptions) descriptions[f.description_status as keyof typeof descriptions] += 1;
  }
  counts.uploading += state.pendingFiles;
  counts.completed += state.skippedFiles;
  const errorRows = await db.all<{ error: string }>(
    "SELECT DISTINCT error FROM session_items WHERE session_id = ? AND status = 'failed' AND error IS NOT NULL ORDER BY error LIMIT 20",
    [id],
  );
  counts.failed += state.failedFiles;
  const lastActivity = (await db.one<{ t: string | null }>("SELECT max(updated_at) AS t FROM files WHERE session_id = ?", [id]))?.t;
  return {
    sessionId: id,
    overallStatus: session.status,
    completionPercentage: state.progressPercentage,
    counts,
    descriptionCounts: descriptions,
    errorCount: state.failedFiles,
    errorMessages: errorRows.map((r) => r.error),
    createdAt: session.created_at,
    lastActivityAt: [session.updated_at, lastActivity].filter((t): t is string => !!t).sort().at(-1) ?? session.updated_at,
  };
}
