/**
 * What the upload-session and upload-status endpoints show: the spec's snake_case bodies, mapped
 * from the camelCase results of sessions.ts (and sent as the `subscribed` WebSocket message).
 */
import { API_PREFIX } from "../http/api-prefix.ts";
import { websocketChannel, type SessionProgress, type SessionResults, type SessionState, type SessionSummary, type UnifiedStatus } from "./sessions.ts";

/** Picks `keys` of `o`, in the order of `keys` (the order the bodies show them in). */
function pick<T extends object, K extends keyof T>(o: T, keys: readonly K[]): Pick<T, K> {
  return Object.fromEntries(keys.map((k) => [k, o[k]])) as Pick<T, K>;
}

function progressView(p: SessionProgress) {
  return {
    session_id: p.id,
    status: p.status,
    upload_method: p.uploadMethod,
    total_files: p.totalFiles,
    completed_files: p.completedFiles,
    failed_files: p.failedFiles,
    skipped_files: p.skippedFiles,
    pending_files: p.pendingFiles,
    progress_percentage: p.progressPercentage,
  };
}

export function sessionView(s: SessionState) {
  return {
    ...progressView(s),
    created_at: s.createdAt,
    started_at: s.startedAt,
    completed_at: s.completedAt,
    estimated_completion_time: s.estimatedCompletionTime,
    recent_completions: s.recentCompletions.map((c) => ({
      filename: c.filename,
      image_id: c.fileId,
      status: c.status,
      // Descriptions come from the analysis pipelines, after the session has stored the file.
      description: null,
      processing_time_ms: c.processingTimeMs,
    })),
    recent_errors: s.recentErrors.map((e) => ({ filename: e.filename, error: e.error, failed_at: e.failedAt })),
    results_url: `${API_PREFIX}/files/sessions/${s.id}/results`,
    websocket_channel: websocketChannel(s.id),
  };
}

const LIST_ITEM_KEYS = ["session_id", "status", "upload_method", "total_files", "completed_files", "failed_files", "skipped_files", "progress_percentage", "created_at", "completed_at"] as const;

/** A session in GET /files/sessions: the counts without the recent items. */
export function sessionListItem(s: SessionState) {
  return pick(sessionView(s), LIST_ITEM_KEYS);
}

const PROGRESS_EVENT_KEYS = ["session_id", "total_files", "completed_files", "failed_files", "skipped_files", "pending_files", "progress_percentage"] as const;

/** The `progress` message of the batch.<id> channel. */
export function progressEvent(p: SessionProgress) {
  return pick(progressView(p), PROGRESS_EVENT_KEYS);
}

export function sessionResultsView(r: SessionResults) {
  return {
    session_id: r.sessionId,
    results: r.results.map((i) => ({
      image_id: i.fileId,
      filename: i.filename,
      status: i.status,
      description: i.description,
      visible_text: i.visibleText,
      tags: i.tags,
      processing_time_ms: i.processingTimeMs,
      error_message: i.errorMessage,
      thumbnail_url: null,
      created_at: i.createdAt,
    })),
    total_count: r.totalCount,
    offset: r.offset,
    limit: r.limit,
    has_more: r.offset + r.results.length < r.totalCount,
    summary: { total_files: r.summary.totalFiles, completed: r.summary.completed, failed: r.summary.failed, skipped: r.summary.skipped },
  };
}

export function unifiedStatusView(u: UnifiedStatus) {
  return {
    image_id: u.fileId,
    batch_id: u.sessionId,
    unified_status: u.status,
    component_statuses: {
      variant_status: u.variantStatus,
      description_status: u.descriptionStatus,
      // Only stored files have a status here: their bytes have all arrived.
      upload_status: "completed",
      processing_status: u.processingStatus,
    },
    processing_ids: u.processingJobIds,
    error_message: u.errorMessage,
    last_error_at: u.lastErrorAt,
    created_at: u.createdAt,
    last_updated_at: u.lastUpdatedAt,
    completed_at: u.completedAt,
    retry_count: u.retryCount,
    processing_duration_seconds: u.processingDurationSeconds,
    is_stuck: u.isStuck,
    is_terminal: u.isTerminal,
  };
}

export function stuckFilesView(stuck: UnifiedStatus[]) {
  return { stuck_count: stuck.length, images: stuck.map(unifiedStatusView) };
}

export function sessionSummaryView(s: SessionSummary) {
  return {
    batch_id: s.sessionId,
    overall_status: s.overallStatus,
    completion_percentage: s.completionPercentage,
    counts: s.counts,
    description_counts: s.descriptionCounts,
    error_summary: { count: s.errorCount, messages: s.errorMessages },
    created_at: s.createdAt,
    last_activity_at: s.lastActivityAt,
  };
}
