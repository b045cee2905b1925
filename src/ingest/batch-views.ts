/**
 * What batch uploads show: the spec's snake_case body of POST /files/upload/batch and the
 * messages of the `batch.<id>` WebSocket channel, mapped from the camelCase outcomes of batch.ts.
 */
import type { BatchOutcome, ItemOutcome } from "./batch.ts";
import { statusUrl, websocketChannel, type SessionRow } from "./sessions.ts";

/** One file's result: in `immediate_results` and in `file_completed` / `file_failed` messages. */
export function itemResultView(item: ItemOutcome) {
  return {
    image_id: item.fileId,
    filename: item.filename,
    status: item.status,
    processing_time_ms: item.processingTimeMs,
    skipped: item.status === "skipped",
    skipped_existing_image_id: item.skippedExistingId,
    error: item.error,
    storage_target: item.storageTarget,
    media_type: item.mediaType,
    document_type: item.documentType,
    // A stored document's text is extracted by its processing job, which has only been queued.
    text_extraction_status: item.mediaType === "document" && item.status === "completed" ? ("pending" as const) : null,
  };
}

export function batchResponse(batch: BatchOutcome) {
  return {
    session_id: batch.sessionId,
    total_files: batch.totalFiles,
    accepted_files: batch.acceptedFiles,
    rejected_files: batch.rejections.length,
    status: batch.status,
    immediate_results: batch.immediateResults?.map(itemResultView) ?? null,
    status_url: statusUrl(batch.sessionId),
    websocket_channel: websocketChannel(batch.sessionId),
    rejections: batch.rejections.length ? batch.rejections.map((r) => ({ file_index: r.fileIndex, filename: r.filename, code: r.code, reason: r.reason })) : null,
  };
}

export function fileEvent(sessionId: string, fileIndex: number, item: ItemOutcome) {
  return { session_id: sessionId, file_index: fileIndex, result: itemResultView(item) };
}

export function sessionCompletedEvent(row: Pick<SessionRow, "id" | "status" | "completed_at">) {
  return { session_id: row.id, status: row.status, completed_at: row.completed_at };
}
