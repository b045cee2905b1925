/**
 * The ledger of blobs a batch upload on a shared deployment moves into the store before its
 * session row exists (batch.ts). Without it a process killed between the move and the session's
 * creation would leave objects nothing refers to and nothing would ever delete: the start's sweep
 * of staging sees only its own disk. The keys are recorded before the move; the session's
 * transaction takes them back (`claimInFlight`), so either the session refers to the objects or
 * the ledger does. Housekeeping deletes what the ledger has held for longer than any request can
 * take (`sweepBatchObjectsInFlight`).
 */
import type { Clock } from "../clock.ts";
import type { SqlClient } from "../db/sql-client.ts";
import type { BlobStore } from "../storage/blob-store.ts";

/** Older than this, a ledger row's request is over: its process died before writing the session. */
export const IN_FLIGHT_MAX_AGE_MS = 6 * 60 * 60 * 1000;

/** Records the keys about to be moved into the store for `sessionId` (before the first move). */
export async function recordInFlight(db: SqlClient, clock: Clock, sessionId: string, keys: readonly string[]): Promise<void> {
  if (keys.length === 0) return;
  await db.run(
    `INSERT INTO batch_objects_in_flight (blob_key, session_id, created_at) SELECT value, ?, ? FROM (${db.dialect.jsonValues}) AS keys`,
    [sessionId, clock.now(), JSON.stringify(keys)],
  );
}

/**
 * Inside the transaction that writes the session: takes the session's keys off the ledger. False
 * when some are gone, i.e. a sweep judged the request dead and deleted its objects: the session
 * must not be written then.
 */
export async function claimInFlight(tx: SqlClient, sessionId: string, expected: number): Promise<boolean> {
  const taken = await tx.all<{ blob_key: string }>("DELETE FROM batch_objects_in_flight WHERE session_id = ? RETURNING blob_key", [sessionId]);
  return taken.length === expected;
}

/** After a batch gave up before its session was written, with its moved objects deleted. */
export async function forgetInFlight(db: SqlClient, sessionId: string): Promise<void> {
  await db.run("DELETE FROM batch_objects_in_flight WHERE session_id = ?", [sessionId]);
}

/**
 * Deletes the objects of ledger rows older than IN_FLIGHT_MAX_AGE_MS whose session was never
 * written, then the rows (a row whose session exists only loses its row). Idempotent; returns
 * the objects deleted.
 */
export async function sweepBatchObjectsInFlight(deps: { sql: SqlClient; clock: Clock; blobs: Pick<BlobStore, "delete"> }): Promise<number> {
  const stale = await deps.sql.all<{ blob_key: string; session_id: string; has_session: number | string }>(
    `SELECT f.blob_key, f.session_id, CASE WHEN EXISTS (SELECT 1 FROM upload_sessions s WHERE s.id = f.session_id) THEN 1 ELSE 0 END AS has_session
       FROM batch_objects_in_flight f WHERE f.created_at < ? ORDER BY f.created_at LIMIT 1000`,
    [deps.clock.now() - IN_FLIGHT_MAX_AGE_MS],
  );
  let deleted = 0;
  for (const row of stale) {
    // The row first: a session written meanwhile then finds its key gone and is refused, rather
    // than referring to an object deleted under it.
    const removed = await deps.sql.all("DELETE FROM batch_objects_in_flight WHERE blob_key = ? RETURNING blob_key", [row.blob_key]);
    if (removed.length === 0 || Number(row.has_session) === 1) continue;
    await deps.blobs.delete(row.blob_key);
    deleted++;
  }
  return deleted;
}
