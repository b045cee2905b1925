/**
 * Upload sessions as the API shows them: the session resource with live counts, the paged
 * results, the summary, cancellation (the spec's transition table), stuck files, and the
 * unified per-file upload status.
 */
import type { Database } from "bun:sqlite";
import { isoAt, type Clock } from "../clock.ts";
import { ApiError } from "../errors.ts";
import { API_PREFIX } from "../http/guard.ts";

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

export function sessionView(db: Database, row: SessionRow) {
  const c = itemCounts(db, row.id);
  const failed = c.failed + row.rejected_files;
  const done = row.total_files - c.pending;
  const progress = row.total_files === 0 ? 100 : Math.round((done / row.total_files) * 1000) / 10;
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
    session_id: row.id,
    status: row.status,
    upload_method: row.upload_method,
    total_files: row.total_files,
    completed_files: c.completed,
    failed_files: failed,
    skipped_files: c.skipped,
    pending_files: c.pending,
    progress_percentage: progress,
    created_at: row.created_at,
    started_at: row.started_at,
    completed_at: row.completed_at,
    estimated_completion_time: eta,
    recent_completions: recent.map((i) => ({
      filename: i.filename,
      image_id: i.status === "skipped" ? i.skipped_existing_file_id : i.file_id,
      status: i.status,
      description: null,
      processing_time_ms: i.processing_time_ms,
    })),
    recent_errors: errors.map((i) => ({ filename: i.filename, error: i.error ?? "failed", failed_at: i.finished_at })),
    results_url: `${API_PREFIX}/files/sessions/${row.id}/results`,
    websocket_channel: websocketChannel(row.id),
  };
}

export function listSessions(db: Database, orgId: string, filter: { status?: string | undefined; uploadMethod?: string | undefined }, limit: number, offset: number) {
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
  const items = rows.map((row) => {
    const v = sessionView(db, row);
    return {
      session_id: v.session_id,
      status: v.status,
      upload_method: v.upload_method,
      total_files: v.total_files,
      completed_files: v.completed_files,
      failed_files: v.failed_files,
      skipped_files: v.skipped_files,
      progress_percentage: v.progress_percentage,
      created_at: v.created_at,
      completed_at: v.completed_at,
    };
  });
  return { items, total };
}

export function sessionResults(db: Database, orgId: string, id: string, includeFailed: boolean, limit: number, offset: number) {
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
    session_id: id,
    results: rows.map((r) => ({
      image_id: r.status === "skipped" ? r.skipped_existing_file_id : r.status === "completed" ? r.file_id : null,
      filename: r.filename,
      status: r.status,
      description: r.description ?? null,
      visible_text: r.visible_text ?? null,
      tags: r.tags ? (JSON.parse(r.tags) as string[]) : [],
      processing_time_ms: r.processing_time_ms,
      error_message: r.error ?? null,
      thumbnail_url: null,
      created_at: r.created_at,
    })),
    total_count: total,
    offset,
    limit,
    has_more: offset + rows.length < total,
    summary: { total_files: session.total_files, completed: c.completed, failed: c.failed + session.rejected_files, skipped: c.skipped },
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

export function unifiedStatus(row: FileStatusRow, nowMs: number, stuckMinutes = DEFAULT_STUCK_MINUTES) {
  const terminal = row.processing_status === "stored" || row.processing_status === "completed" || row.processing_status === "failed";
  const started = row.processing_started_at ? Date.parse(row.processing_started_at) : null;
  const finished = row.processing_completed_at ? Date.parse(row.processing_completed_at) : null;
  return {
    image_id: row.id,
    batch_id: row.session_id,
    unified_status: UNIFIED[row.processing_status],
    component_statuses: {
      variant_status: row.variant_status,
      description_status: row.description_status,
      upload_status: "completed",
      processing_status: row.processing_status,
    },
    processing_ids: row.processing_job_id ? [row.processing_job_id] : [],
    error_message: row.processing_error,
    last_error_at: row.last_error_at,
    created_at: row.created_at,
    last_updated_at: row.updated_at,
    completed_at: terminal ? row.processing_completed_at : null,
    retry_count: row.retry_count,
    processing_duration_seconds: started !== null ? ((finished ?? nowMs) - started) / 1000 : null,
    is_stuck: !terminal && nowMs - Date.parse(row.updated_at) > stuckMinutes * 60_000,
    is_terminal: terminal,
  };
}

const FILE_STATUS_COLUMNS = `id, session_id, processing_status, processing_job_id, processing_error, last_error_at, variant_status,
  description_status, retry_count, created_at, updated_at, processing_started_at, processing_completed_at`;

export function fileUploadStatus(db: Database, clock: Clock, orgId: string, fileId: string) {
  const row = db
    .query<FileStatusRow, [string, string]>(`SELECT ${FILE_STATUS_COLUMNS} FROM files WHERE id = ? AND org_id = ? AND deleted_at IS NULL`)
    .get(fileId, orgId);
  if (!row) throw new ApiError("FILE_NOT_FOUND", `file ${fileId} not found`);
  return unifiedStatus(row, clock.now());
}

export function stuckFiles(db: Database, clock: Clock, orgId: string, stuckMinutes: number, limit: number) {
  const cutoff = isoAt(clock.now() - stuckMinutes * 60_000);
  const rows = db
    .query<FileStatusRow, [string, string, number]>(
      `SELECT ${FILE_STATUS_COLUMNS} FROM files
       WHERE org_id = ? AND deleted_at IS NULL AND processing_status IN ('queued','processing') AND updated_at < ?
       ORDER BY updated_at LIMIT ?`,
    )
    .all(orgId, cutoff, limit);
  return { stuck_count: rows.length, images: rows.map((r) => unifiedStatus(r, clock.now(), stuckMinutes)) };
}

export function sessionSummary(db: Database, clock: Clock, orgId: string, id: string) {
  const session = getSessionRow(db, orgId, id);
  const view = sessionView(db, session);
  const counts = { total: session.total_files, uploading: 0, confirming: 0, queued: 0, processing: 0, completed: 0, failed: 0, partially_completed: 0, stuck: 0 };
  const descriptions = { pending: 0, processing: 0, completed: 0, failed: 0, skipped: 0 };
  const files = db.query<FileStatusRow, [string]>(`SELECT ${FILE_STATUS_COLUMNS} FROM files WHERE session_id = ?`).all(id);
  for (const f of files) {
    const u = unifiedStatus(f, clock.now());
    counts[u.unified_status as keyof typeof counts] += 1;
    if (u.is_stuck) counts.stuck += 1;
    if (f.description_status && f.description_status in descriptions) descriptions[f.description_status as keyof typeof descriptions] += 1;
  }
  const pending = db.query<{ n: number }, [string]>("SELECT count(*) AS n FROM session_items WHERE session_id = ? AND status = 'pending'").get(id)?.n ?? 0;
  counts.uploading += pending;
  const skipped = db.query<{ n: number }, [string]>("SELECT count(*) AS n FROM session_items WHERE session_id = ? AND status = 'skipped'").get(id)?.n ?? 0;
  counts.completed += skipped;
  const errorRows = db.query<{ error: string }, [string]>("SELECT DISTINCT error FROM session_items WHERE session_id = ? AND status = 'failed' AND error IS NOT NULL LIMIT 20").all(id);
  counts.failed += view.failed_files;
  const lastActivity = db.query<{ t: string | null }, [string]>("SELECT max(updated_at) AS t FROM files WHERE session_id = ?").get(id)?.t;
  return {
    batch_id: id,
    overall_status: session.status,
    completion_percentage: view.progress_percentage,
    counts,
    description_counts: descriptions,
    error_summary: { count: view.failed_files, messages: errorRows.map((r) => r.error) },
    created_at: session.created_at,
    last_activity_at: [session.updated_at, lastActivity].filter((t): t is string => !!t).sort().at(-1) ?? session.updated_at,
  };
}
