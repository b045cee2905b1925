/**
 * The rows of upload intents and their confirmed parts, on the data-access port
 * (docs/scale-out.md): the only writer of `upload_intents` and `intent_parts`. intents.ts holds
 * the flow (the blob store, the checks, the file's creation) and calls these.
 *
 * Several processes may serve one intent's requests at once, so every change of state is either
 * one conditional statement (`... WHERE status IN ('PENDING','UPLOADED')`) or a transaction that
 * first locks the intent's row (PostgreSQL `FOR UPDATE`; SQLite's one writer needs none), then
 * checks and writes: two confirmations of the last parts, two completions, an abort and a
 * completion take turns, and the second sees what the first did.
 */
import type { MediaType } from "../files/file.ts";
import { ApiError } from "../errors.ts";
import type { SqlClient } from "../db/sql-client.ts";

export type IntentStatus = "PENDING" | "UPLOADED" | "COMPLETED" | "FAILED";
export type UploadMode = "single_shot" | "multipart";

export interface IntentRow {
  id: string;
  org_id: string;
  upload_mode: UploadMode;
  status: IntentStatus;
  media_type: MediaType;
  object_key: string;
  filename: string;
  content_type: string;
  size_bytes: number;
  claimed_sha256: string;
  part_size_bytes: number | null;
  total_parts: number | null;
  store_upload_id: string | null;
  idempotency_key: string | null;
  options: string;
  file_id: string | null;
  deduplicated: number;
  error_message: string | null;
  created_by: string | null;
  created_at: string;
  expires_at: string;
  expires_at_ms: number;
  confirmed_at: string | null;
  completed_at: string | null;
  updated_at: string;
}

export interface PartRow {
  part_number: number;
  etag: string;
  size_bytes: number;
  confirmed_at: string;
}

export function isActive(row: Pick<IntentRow, "status">): boolean {
  return row.status === "PENDING" || row.status === "UPLOADED";
}

export async function intentRow(db: SqlClient, orgId: string, id: string): Promise<IntentRow> {
  const row = await db.one<IntentRow>("SELECT * FROM upload_intents WHERE id = ? AND org_id = ?", [id, orgId]);
  if (!row) throw new ApiError("UPLOAD_NOT_FOUND", `upload ${id} not found`);
  return row;
}

/** The intent's row locked for the rest of the transaction (PostgreSQL). */
async function lockedIntentRow(tx: SqlClient, orgId: string, id: string): Promise<IntentRow> {
  const row = await tx.one<IntentRow>(`SELECT * FROM upload_intents WHERE id = ? AND org_id = ? ${tx.dialect.forUpdate}`, [id, orgId]);
  if (!row) throw new ApiError("UPLOAD_NOT_FOUND", `upload ${id} not found`);
  return row;
}

export function intentParts(db: SqlClient, id: string): Promise<PartRow[]> {
  return db.all<PartRow>("SELECT part_number, etag, size_bytes, confirmed_at FROM intent_parts WHERE upload_id = ? ORDER BY part_number", [id]);
}

export function intentByIdempotencyKey(db: SqlClient, orgId: string, key: string): Promise<IntentRow | null> {
  return db.one<IntentRow>("SELECT * FROM upload_intents WHERE org_id = ? AND idempotency_key = ?", [orgId, key]);
}

export interface NewIntent {
  id: string;
  orgId: string;
  mode: UploadMode;
  mediaType: MediaType;
  objectKey: string;
  filename: string;
  contentType: string;
  sizeBytes: number;
  claimedSha256: string;
  partSizeBytes: number | null;
  totalParts: number | null;
  storeUploadId: string | null;
  idempotencyKey: string | null;
  options: string;
  createdBy: string | null;
  createdAt: string;
  expiresAt: string;
  expiresAtMs: number;
}

/**
 * Writes a new PENDING intent. When its idempotency key already names one (two requests with one
 * key, in this process or another, race to here), nothing is written and that one is returned:
 * `created` tells which.
 */
export async function insertIntent(db: SqlClient, intent: NewIntent): Promise<{ created: boolean; row: IntentRow }> {
  const inserted = await db.one<IntentRow>(
    `INSERT INTO upload_intents (id, org_id, upload_mode, status, media_type, object_key, filename, content_type, size_bytes,
       claimed_sha256, part_size_bytes, total_parts, store_upload_id, idempotency_key, options, created_by,
       created_at, expires_at, expires_at_ms, updated_at)
     VALUES (?, ?, ?, 'PENDING', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (org_id, idempotency_key) DO NOTHING
     RETURNING *`,
    [
      intent.id, intent.orgId, intent.mode, intent.mediaType, intent.objectKey, intent.filename, intent.contentType, intent.sizeBytes,
      intent.claimedSha256, intent.partSizeBytes, intent.totalParts, intent.storeUploadId, intent.idempotencyKey, intent.options, intent.createdBy,
      intent.createdAt, intent.expiresAt, intent.expiresAtMs, intent.createdAt,
    ],
  );
  if (inserted) return { created: true, row: inserted };
  // Only a key can conflict (the id is new): the winner has committed, its row is there.
  const winner = intent.idempotencyKey ? await intentByIdempotencyKey(db, intent.orgId, intent.idempotencyKey) : null;
  if (!winner) throw new Error(`upload intent ${intent.id} was not written and no intent holds its idempotency key`);
  return { created: false, row: winner };
}

export interface PartRecorded {
  partsConfirmed: number;
  confirmedBytes: number;
  totalParts: number;
  status: IntentStatus;
}

/**
 * Records a confirmed part (again: its latest ETag and size) and moves the intent to UPLOADED
 * once every part is confirmed, in one transaction on the intent's locked row: of two
 * confirmations of the last two parts at once, the second counts the first's part. `check`
 * refuses an intent that is no longer active (throws), seen under the lock.
 */
export function recordPart(
  db: SqlClient,
  orgId: string,
  id: string,
  part: { partNumber: number; etag: string; sizeBytes: number },
  at: string,
  check: (row: IntentRow) => void,
): Promise<PartRecorded> {
  return db.transaction(async (tx) => {
    const row = await lockedIntentRow(tx, orgId, id);
    check(row);
    await tx.run(
      `INSERT INTO intent_parts (upload_id, part_number, etag, size_bytes, confirmed_at) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (upload_id, part_number) DO UPDATE SET etag = excluded.etag, size_bytes = excluded.size_bytes, confirmed_at = excluded.confirmed_at`,
      [id, part.partNumber, part.etag, part.sizeBytes, at],
    );
    const { count, bytes } = (await tx.one<{ count: number; bytes: number }>(
      "SELECT count(*) AS count, coalesce(sum(size_bytes), 0) AS bytes FROM intent_parts WHERE upload_id = ?",
      [id],
    ))!;
    const status: IntentStatus = count === row.total_parts ? "UPLOADED" : "PENDING";
    await tx.run("UPDATE upload_intents SET status = ?, confirmed_at = ?, updated_at = ? WHERE id = ?", [status, at, at, id]);
    return { partsConfirmed: count, confirmedBytes: bytes, totalParts: row.total_parts!, status };
  });
}

/**
 * Drops a part's confirmation (its retry gets a fresh URL); an UPLOADED intent is PENDING again
 * until the part is confirmed anew. On the intent's locked row, after `check`, as recordPart.
 */
export function dropPart(db: SqlClient, orgId: string, id: string, partNumber: number, at: string, check: (row: IntentRow) => void): Promise<boolean> {
  return db.transaction(async (tx) => {
    check(await lockedIntentRow(tx, orgId, id));
    const { changes } = await tx.run("DELETE FROM intent_parts WHERE upload_id = ? AND part_number = ?", [id, partNumber]);
    if (changes) await tx.run("UPDATE upload_intents SET status = 'PENDING', updated_at = ? WHERE id = ? AND status = 'UPLOADED'", [at, id]);
    return changes > 0;
  });
}

/** A PENDING intent whose bytes have arrived becomes UPLOADED; returns the row as it now is. */
export async function markUploaded(db: SqlClient, row: IntentRow, at: string): Promise<IntentRow> {
  const changed = await db.one<IntentRow>("UPDATE upload_intents SET status = 'UPLOADED', confirmed_at = ?, updated_at = ? WHERE id = ? AND status = 'PENDING' RETURNING *", [
    at,
    at,
    row.id,
  ]);
  return changed ?? (await intentRow(db, row.org_id, row.id));
}

/** Fails an active intent; false when it had already finished (completed, failed, aborted). */
export async function markFailed(db: SqlClient, id: string, message: string, at: string): Promise<boolean> {
  const { changes } = await db.run("UPDATE upload_intents SET status = 'FAILED', error_message = ?, updated_at = ? WHERE id = ? AND status IN ('PENDING','UPLOADED')", [
    message,
    at,
    id,
  ]);
  return changes > 0;
}

/**
 * Completes an active intent with a file: the organization's existing one (`deduplicated`), or a
 * new one that `createFile` writes in the same transaction. The intent's row is locked first, so
 * of two completions at once one creates the file and the other finds the intent COMPLETED:
 * `completed` is false then and `row` is the winner's result. An intent that failed meanwhile
 * (aborted, expired) is refused.
 */
export function completeIntentRow(
  db: SqlClient,
  orgId: string,
  id: string,
  file: { fileId: string; mediaType: MediaType; deduplicated: boolean },
  at: string,
  createFile: (tx: SqlClient) => unknown = () => undefined,
): Promise<{ completed: boolean; row: IntentRow }> {
  return db.transaction(async (tx) => {
    const current = await lockedIntentRow(tx, orgId, id);
    if (current.status === "COMPLETED") return { completed: false, row: current };
    if (!isActive(current)) throw new ApiError("UPLOAD_STATE_CONFLICT", `upload ${id} is ${current.status}`);
    if (!file.deduplicated) await createFile(tx);
    const row = await tx.one<IntentRow>(
      `UPDATE upload_intents SET status = 'COMPLETED', media_type = ?, file_id = ?, deduplicated = ?, completed_at = ?, updated_at = ? WHERE id = ? RETURNING *`,
      [file.mediaType, file.fileId, file.deduplicated ? 1 : 0, at, at, id],
    );
    return { completed: true, row: row! };
  });
}

/** Active intents past their expiry, at most 1,000 a sweep. */
export function expiredIntents(db: SqlClient, nowMs: number): Promise<IntentRow[]> {
  return db.all<IntentRow>("SELECT * FROM upload_intents WHERE status IN ('PENDING','UPLOADED') AND expires_at_ms <= ? ORDER BY expires_at_ms LIMIT 1000", [nowMs]);
}

/** The store's multipart upload ids that active intents still refer to. */
export async function activeStoreUploadIds(db: SqlClient): Promise<Set<string>> {
  const rows = await db.all<{ store_upload_id: string }>("SELECT store_upload_id FROM upload_intents WHERE status IN ('PENDING','UPLOADED') AND store_upload_id IS NOT NULL");
  return new Set(rows.map((r) => r.store_upload_id));
}
