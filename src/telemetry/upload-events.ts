/**
 * Client-side upload telemetry (`POST /files/log-upload-event`): stored for operators to read
 * when a user reports a failed upload, and pruned after the retention period.
 */
import type { SqlClient } from "../db/sql-client.ts";
import { isoAt, type Clock } from "../clock.ts";
import { badRequest } from "../errors.ts";

export const MAX_EVENT_DATA_BYTES = 10 * 1024;
export const UPLOAD_EVENT_RETENTION_DAYS = 30;

export interface UploadEventInput {
  event_type: string;
  message: string;
  data?: Record<string, unknown> | undefined;
  timestamp?: string | number | undefined;
  batch_id?: string | undefined;
  file_index?: number | undefined;
  file_name?: string | undefined;
}

export async function logUploadEvent(
  db: SqlClient,
  clock: Clock,
  event: UploadEventInput,
  source: { orgId: string | null; ip: string },
): Promise<{ status: "logged"; timestamp: string }> {
  const data = event.data === undefined ? null : JSON.stringify(event.data);
  if (data !== null) {
    const size = Buffer.byteLength(data);
    if (size > MAX_EVENT_DATA_BYTES) {
      throw badRequest(`data: serialized size must be at most ${MAX_EVENT_DATA_BYTES} bytes (got ${size})`);
    }
  }
  const receivedAt = isoAt(clock.now());
  await db.run(
    `INSERT INTO upload_events (org_id, event_type, message, data, client_timestamp, batch_id, file_index, file_name,
       source_ip, received_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    [source.orgId,
    event.event_type,
    event.message,
    data,
    event.timestamp === undefined ? null : String(event.timestamp),
    event.batch_id ?? null,
    event.file_index ?? null,
    event.file_name ?? null,
    source.ip,
    receivedAt],
  );
  return { status: "logged", timestamp: receivedAt };
}

export async function pruneUploadEvents(db: SqlClient, clock: Clock): Promise<number> {
  const cutoff = isoAt(clock.now() - UPLOAD_EVENT_RETENTION_DAYS * 86_400_000);
  return (await db.run("DELETE FROM upload_events WHERE received_at < ?", [cutoff])).changes;
}
