/**
 * Upload sessions: the session with live counts, the paged results, the summary, cancellation
 * (the spec's transition table), stuck files, and the unified per-file upload status, as
 * camelCase results that session-views.ts maps to the spec's bodies.
 */
import type { Database } from "bun:sqlite";
import { isoAt, type Clock } from "../clock.ts";
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

export function getSessionRow(db: Database, orgId: string, id: string): SessionRow {
  const row = db.query<SessionRow, [string, string]>("SELECT * FROM upload_sessions WHERE id = ? AND org_id = ?").get(id, orgId);
  if (!row) throw sessionNotFound(id);
  return row;
}

interface Counts {
  completed: number;
  failed: number;
  skipped: number;
  pending: number;
}

function itemCounts(db: Database, sessionId: string): Counts {
  const counts: Counts = { completed: 0, failed: 0, skipped: 0, pending: 0 };
  for (const r of db.query<{ status: keyof Counts; n: number }, [string]>("SELECT status, count(*) AS n FROM session_items WHERE session_id = ? GROUP BY status").all(sessionId)) {
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

export function sessionProgress(db: Database, row: SessionRow): SessionProgress {
  return progressOf(row, itemCounts(db, row.id));
}

export function sessionState(db: Database, row: SessionRow): SessionState {
  const c = itemCounts(db, row.id);
  let eta: string | null = null;
  if (row.status === "processing" && row.started_at && c.pending > 0) {
    const processed = c.completed + c.failed + c.skipped;
    if (processed > 0) {
      const started = Date.parse(row.started_at);
      const perItem = (Date.parse(row.updated_at) - started) / processed;
      eta = new Date(Date.parse(row.updated_at) + perItem * c.pending).toISOString();
    }
  }
  const recent = db
    .query<ItemRow, [string]>("SELECT * FROM session_items WHERE session_id = ? AND status IN ('completed','skipped') ORDER BY finished_at DESC, item_index DESC LIMIT 10")
    .all(row.id);
  const errors = db
    .query<ItemRow, [string]>("SELECT * FROM session_items WHERE session_id = ? AND status = 'failed' ORDER BY finished_at DESC, item_index DESC LIMIT 10")
    .all(row.id);
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

export function listSessions(
  db: Database,
  orgId: string,
  filter: { status?: string | undefined; uploadMethod?: string | undefined },
  limit: number,
  offset: number,
): { items: SessionState[]; total: number } {
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
  const total = db.query<{ n: number }, (string | number)[]>(`SELECT count(*) AS n FROM upload_sessions WHERE ${clause}`).get(...args)?.n ?? 0;
  const rows = db
    .query<SessionRow, (string | number)[]>(`SELECT * FROM upload_sessions WHERE ${clause} ORDER BY created_at DESC, id LIMIT ? OFFSET ?`)
    .all(...args, limit, offset);
  return { items: rows.map((row) => sessionState(db, row)), total };
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

export function sessionResults(db: Database, orgId: string, id: string, includeFailed: boolean, limit: number, offset: number): SessionResults {
  const session = getSessionRow(db, orgId, id);
  const filter = includeFailed ? "" : "AND i.status != 'failed'";
  const total = db.query<{ n: number }, [string]>(`SELECT count(*) AS n FROM session_items i WHERE i.session_id = ? ${filter}`).get(id)?.n ?? 0;
  const rows = db
    .query<ItemRow & { tags: string | null; visible_text: string | null; description: string | null; processing_error: string | null }, [string, number, number]>(
      `SELECT i.*, f.tags, f.visible_text, coalesce(f.user_description, f.upload_description) AS description, f.processing_error
       FROM session_items i LEFT JOIN files f ON f.id = coalesce(i.skipped_existing_file_id, i.file_id)
       WHERE i.session_id = ? ${filter} ORDER BY i.item_index LIMIT ? OFFSET ?`,
    )
    .all(id, limit, offset);
  const c = itemCounts(db, id);
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

export function cancelSession(db: Database, clock: Clock, orgId: string, id: string): SessionRow {
  return db.transaction(() => {
    const row = getSessionRow(db, orgId, id);
    if (FINISHED_SESSION_STATUSES.has(row.status)) {
      throw new ApiError("SESSION_FINISHED", `session ${id} is already ${row.status} and cannot be cancelled`);
    }
    const now = isoAt(clock.now());
    db.query("UPDATE upload_sessions SET status = 'cancelled', completed_at = ?, updated_at = ? WHERE id = ?").run(now, now, id);
    db.query("UPDATE session_items SET status = 'skipped', error = 'session cancelled', finished_at = ? WHERE session_id = ? AND status = 'pending'").run(now, id);
    return getSessionRow(db, orgId, id);
  }).immediate();
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

export function fileUploadStatus(db: Database, clock: Clock, orgId: string, fileId: string): UnifiedStatus {
  const row = db
    .query<FileStatusRow, [string, string]>(`SELECT ${FILE_STATUS_COLUMNS} FROM files WHERE id = ? AND org_id = ? AND deleted_at IS NULL`)
    .get(fileId, orgId);
  if (!row) throw new ApiError("FILE_NOT_FOUND", `file ${fileId} not found`);
  return unifiedStatus(row, clock.now());
}

export function stuckFiles(db: Database, clock: Clock, orgId: string, stuckMinutes: number, limit: number): UnifiedStatus[] {
  const cutoff = isoAt(clock.now() - stuckMinutes * 60_000);
  const rows = db
    .query<FileStatusRow, [string, string, number]>(
      `SELECT ${FILE_STATUS_COLUMNS} FROM files
       WHERE org_id = ? AND deleted_at IS NULL AND processing_status IN ('queued','processing') AND updated_at < ?
       ORDER BY updated_at LIMIT ?`,
    )
    .all(orgId, cutoff, limit);
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

export function sessionSummary(db: Database, clock: Clock, orgId: string, id: string): SessionSummary {
  const session = getSessionRow(db, orgId, id);
  const state = sessionState(db, session);
  const counts = { total: session.total_files, uploading: 0, confirming: 0, queued: 0, processing: 0, completed: 0, failed: 0, partially_completed: 0, stuck: 0 };
  const descriptions = { pending: 0, processing: 0, completed: 0, failed: 0, skipped: 0 };
  const files = db.query<FileStatusRow, [string]>(`SELECT ${FILE_STATUS_COLUMNS} FROM files WHERE session_id = ?`).all(id);
  for (const f of files) {
    const u = unifiedStatus(f, clock.now());
    counts[u.status] += 1;
    if (u.isStuck) counts.stuck += 1;
    if (f.description_status && f.description_status in descriptions) descriptions[f.description_status as keyof typeof descriptions] += 1;
  }
  const pending = db.query<{ n: number }, [string]>("SELECT count(*) AS n FROM session_items WHERE session_id = ? AND status = 'pending'").get(id)?.n ?? 0;
  counts.uploading += pending;
  const skipped = db.query<{ n: number }, [string]>("SELECT count(*) AS n FROM session_items WHERE session_id = ? AND status = 'skipped'").get(id)?.n ?? 0;
  counts.completed += skipped;
  const errorRows = db.query<{ error: string }, [string]>("SELECT DISTINCT error FROM session_items WHERE session_id = ? AND status = 'failed' AND error IS NOT NULL LIMIT 20").all(id);
  counts.failed += state.failedFiles;
  const lastActivity = db.query<{ t: string | null }, [string]>("SELECT max(updated_at) AS t FROM files WHERE session_id = ?").get(id)?.t;
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
