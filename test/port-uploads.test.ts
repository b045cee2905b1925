/**
 * Upload bookkeeping on the data-access port (docs/scale-out.md) behaves the same on SQLite and
 * on PostgreSQL: batch sessions and their items (created, each item's outcome, closed, listed,
 * counted, summarised, cancelled, recovered after a restart), the unified per-file status and
 * stuck files, and upload intents (created once per idempotency key, parts confirmed and
 * retried, completed, failed, expired). The races several processes make are run on both: two
 * creations with one idempotency key, two confirmations of one part and of the last two parts,
 * two completions of one intent, an abort racing a completion, and a cancellation racing the
 * session's closing or its last item. The HTTP sides are tested in batch.test.ts,
 * intents.test.ts, upload.test.ts and upload-crash.test.ts. The PostgreSQL half skips, saying
 * why, where no server binary is found.
 */
import { describe, expect, test } from "bun:test";
import { ManualClock, isoAt } from "../src/clock.ts";
import type { SqlClient } from "../src/db/sql-client.ts";
import { createOrganization } from "../src/tenancy/organizations.ts";
import { defaultProjectId } from "../src/tenancy/projects.ts";
import {
  cancelSession,
  closeSession,
  createSession,
  fileUploadStatus,
  getSessionRow,
  interruptedSessions,
  listSessions,
  recordItemResult,
  sessionById,
  sessionItems,
  sessionProgress,
  sessionResults,
  sessionState,
  sessionStatus,
  sessionSummary,
  stuckFiles,
  type ClosedSession,
  type NewItem,
} from "../src/ingest/sessions.ts";
import {
  activeStoreUploadIds,
  completeIntentRow,
  dropPart,
  expiredIntents,
  insertIntent,
  intentParts,
  intentRow,
  isActive,
  markFailed,
  markUploaded,
  recordPart,
  type IntentRow,
  type NewIntent,
} from "../src/ingest/intent-store.ts";
import { portEngines } from "./support/port-engines.ts";

const { engines } = portEngines("uploads", { connections: 4 });

const unique = (prefix: string) => `${prefix}-${crypto.randomUUID().slice(0, 8)}`;
const START = Date.UTC(2031, 6, 1);
const ROUNDS = 8;

function items(n: number): NewItem[] {
  return Array.from({ length: n }, (_, index) => ({
    index, filename: `f${index}.png`, fileId: crypto.randomUUID(), size: 100 + index, sha256: `sha-${index}`,
    mediaType: "image", mime: "image/png", format: "png", documentType: null,
  }));
}

async function newSession(db: SqlClient, orgId: string, clock: ManualClock, n: number, rejected = 0): Promise<{ id: string; items: NewItem[] }> {
  const id = crypto.randomUUID();
  const list = items(n);
  await createSession(db, { id, orgId, totalFiles: n + rejected, rejectedFiles: rejected, options: "{}", createdBy: "key-1", at: isoAt(clock.now()) }, list);
  return { id, items: list };
}

const done = (status: "completed" | "failed" | "skipped", extra: { existing?: string; error?: string } = {}) => ({
  status, skippedExistingFileId: extra.existing ?? null, error: extra.error ?? null, processingTimeMs: 12.5,
});

async function insertFile(db: SqlClient, orgId: string, fields: { id?: string; sessionId?: string | null; status?: string; updatedAt?: string; tags?: string; description?: string; variant?: string } = {}) {
  const id = fields.id ?? crypto.randomUUID();
  const at = fields.updatedAt ?? isoAt(START);
  await db.run(
    `INSERT INTO files (id, org_id, project_id, media_type, filename, created_at, updated_at, session_id, processing_status, tags, upload_description, description_status, processing_started_at)
     VALUES (?, ?, ?, 'image', 'a.png', ?, ?, ?, ?, ?, ?, ?, ?)`,
    [id, orgId, await defaultProjectId(db, orgId), at, at, fields.sessionId ?? null, fields.status ?? "queued", fields.tags ?? "[]", fields.description ?? null, fields.description ? "completed" : "pending", at],
  );
  if (fields.variant) await db.run("INSERT INTO image_facts (file_id, variant_status) VALUES (?, ?)", [id, fields.variant]);
  return id;
}

function newIntent(orgId: string, clock: ManualClock, fields: Partial<NewIntent> = {}): NewIntent {
  const id = crypto.randomUUID();
  return {
    id, orgId, mode: "multipart", mediaType: "video", objectKey: `orgs/${orgId}/uploads/${id}/original`, filename: "clip.mp4", contentType: "video/mp4",
    sizeBytes: 25, claimedSha256: "ab".repeat(32), partSizeBytes: 10, totalParts: 3, storeUploadId: `store-${id}`, idempotencyKey: null, options: "{}",
    createdBy: "key-1", createdAt: isoAt(clock.now()), expiresAt: isoAt(clock.now() + 3_600_000), expiresAtMs: clock.now() + 3_600_000, ...fields,
  };
}

const activeOnly = (row: IntentRow) => {
  if (!isActive(row)) throw Object.assign(new Error(`upload ${row.id} is ${row.status}`), { code: "UPLOAD_STATE_CONFLICT" });
};

describe.each(engines)("upload bookkeeping on the port, on $name", ({ client }) => {
  test("a batch's session: items recorded once each, live counts, closed completed with its tallies, the closing hook in its transaction", async () => {
    const db = client();
    const clock = new ManualClock(START);
    const org = await createOrganization(db, clock, unique("Batch"), "PROFESSIONAL");
    const { id, items: list } = await newSession(db, org.id, clock, 4, 1);
    const row = await getSessionRow(db, org.id, id);
    expect(row).toMatchObject({ status: "processing", upload_method: "streaming", total_files: 5, rejected_files: 1, completed_at: null, created_by: "key-1" });
    expect(await sessionById(db, id)).toEqual(row);
    const other = await createOrganization(db, clock, unique("Other"), "FREE");
    await expect(getSessionRow(db, other.id, id)).rejects.toMatchObject({ code: "SESSION_NOT_FOUND" });
    expect((await sessionItems(db, id, { pendingOnly: true })).map((i) => [i.item_index, i.file_id, i.status])).toEqual(list.map((i) => [i.index, i.fileId, "pending"]));
    expect((await interruptedSessions(db)).filter((s) => s.id === id)).toEqual([{ id, org_id: org.id }]);

    clock.advance(1_000);
    expect(await recordItemResult(db, id, 0, done("completed"), isoAt(clock.now()))).toBe(true);
    expect(await recordItemResult(db, id, 0, done("failed", { error: "late" }), isoAt(clock.now()))).toBe(false);
    clock.advance(1_000);
    await recordItemResult(db, id, 1, done("skipped", { existing: list[0]!.fileId }), isoAt(clock.now()));
    await recordItemResult(db, id, 2, done("failed", { error: "unreadable" }), isoAt(clock.now()));
    expect(await closeSession(db, id, isoAt(clock.now()))).toBeNull();
    const state = await sessionState(db, await getSessionRow(db, org.id, id));
    expect(state).toMatchObject({ status: "processing", totalFiles: 5, completedFiles: 1, failedFiles: 2, skippedFiles: 1, pendingFiles: 1, progressPercentage: 80 });
    // Three items in two seconds, one left: two thirds of a second after the last activity.
    expect(state.estimatedCompletionTime).toBe(isoAt(START + 2_000 + 666));
    expect(state.recentCompletions.map((c) => [c.filename, c.status, c.fileId, c.processingTimeMs])).toEqual([
      ["f1.png", "skipped", list[0]!.fileId, 12.5],
      ["f0.png", "completed", list[0]!.fileId, 12.5],
    ]);
    expect(state.recentErrors).toEqual([{ filename: "f2.png", error: "unreadable", failedAt: isoAt(START + 2_000) }]);

    await recordItemResult(db, id, 3, done("completed"), isoAt(clock.now()));
    const seen: ClosedSession[] = [];
    const closed = await closeSession(db, id, isoAt(clock.now()), async (tx, c) => {
      seen.push(c);
      expect((await tx.one<{ status: string }>("SELECT status FROM upload_sessions WHERE id = ?", [id]))?.status).toBe("completed");
    });
    expect(closed).toMatchObject({ row: { status: "completed", completed_at: isoAt(START + 2_000) }, completedFiles: 2, failedFiles: 2, skippedFiles: 1 });
    expect(seen).toHaveLength(1);
    expect(await closeSession(db, id, isoAt(clock.now()))).toBeNull();
    expect(await sessionProgress(db, closed!.row)).toMatchObject({ pendingFiles: 0, progressPercentage: 100 });
    expect((await interruptedSessions(db)).some((s) => s.id === id)).toBe(false);

    // Every item failed: the session failed; no item at all: failed when written.
    const bad = await newSession(db, org.id, clock, 1);
    await recordItemResult(db, bad.id, 0, done("failed", { error: "x" }), isoAt(clock.now()));
    expect((await closeSession(db, bad.id, isoAt(clock.now())))?.row.status).toBe("failed");
    const empty = await newSession(db, org.id, clock, 0, 2);
    expect(await sessionStatus(db, empty.id)).toBe("failed");
    expect(await sessionStatus(db, crypto.randomUUID())).toBeNull();
  });

  test("a session's written items roll back with the caller's transaction", async () => {
    const db = client();
    const clock = new ManualClock(START);
    const org = await createOrganization(db, clock, unique("Rollback"), "PROFESSIONAL");
    const id = crypto.randomUUID();
    await expect(
      db.transaction(async (tx) => {
        await createSession(tx, { id, orgId: org.id, totalFiles: 2, rejectedFiles: 0, options: "{}", createdBy: null, at: isoAt(START) }, items(2));
        throw new Error("the job could not be queued");
      }),
    ).rejects.toThrow(/could not be queued/);
    expect(await sessionById(db, id)).toBeNull();
    expect(await sessionItems(db, id)).toEqual([]);
  });

  test("listing newest first with filters and pages; results joined with their files; the summary", async () => {
    const db = client();
    const clock = new ManualClock(START);
    const org = await createOrganization(db, clock, unique("List"), "PROFESSIONAL");
    const a = await newSession(db, org.id, clock, 2);
    clock.advance(1_000);
    const b = await newSession(db, org.id, clock, 0, 1);
    const all = await listSessions(db, org.id, {}, 10, 0);
    expect([all.total, all.items.map((s) => s.id)]).toEqual([2, [b.id, a.id]]);
    expect((await listSessions(db, org.id, { status: "processing" }, 10, 0)).items.map((s) => s.id)).toEqual([a.id]);
    expect((await listSessions(db, org.id, { uploadMethod: "presigned" }, 10, 0)).total).toBe(0);
    expect((await listSessions(db, org.id, {}, 1, 1)).items.map((s) => s.id)).toEqual([a.id]);

    const stored = await insertFile(db, org.id, { id: a.items[0]!.fileId, sessionId: a.id, status: "completed", tags: '["x","y"]', description: "a cat", variant: "completed" });
    await recordItemResult(db, a.id, 0, done("completed"), isoAt(clock.now()));
    await recordItemResult(db, a.id, 1, done("failed", { error: "unreadable" }), isoAt(clock.now()));
    const results = await sessionResults(db, org.id, a.id, true, 10, 0);
    expect(results.results.map((r) => [r.filename, r.status, r.fileId, r.description, r.tags, r.errorMessage])).toEqual([
      ["f0.png", "completed", stored, "a cat", ["x", "y"], null],
      ["f1.png", "failed", null, null, [], "unreadable"],
    ]);
    expect(results.summary).toEqual({ totalFiles: 2, completed: 1, failed: 1, skipped: 0 });
    expect((await sessionResults(db, org.id, a.id, false, 10, 0)).totalCount).toBe(1);

    clock.advance(60_000);
    const summary = await sessionSummary(db, clock, org.id, a.id);
    expect(summary).toMatchObject({ sessionId: a.id, overallStatus: "processing", completionPercentage: 100, errorCount: 1, errorMessages: ["unreadable"] });
    expect(summary.counts).toMatchObject({ total: 2, completed: 1, failed: 1, uploading: 0 });
    expect(summary.descriptionCounts.completed).toBe(1);
    await expect(sessionSummary(db, clock, (await createOrganization(db, clock, unique("Other"), "FREE")).id, a.id)).rejects.toMatchObject({ code: "SESSION_NOT_FOUND" });
  });

  test("unified status of a file and the stuck files", async () => {
    const db = client();
    const clock = new ManualClock(START);
    const org = await createOrganization(db, clock, unique("Status"), "PROFESSIONAL");
    const old = await insertFile(db, org.id, { status: "queued", updatedAt: isoAt(START - 45 * 60_000) });
    const fresh = await insertFile(db, org.id, { status: "processing", updatedAt: isoAt(START - 60_000), variant: "pending" });
    await insertFile(db, org.id, { status: "completed", updatedAt: isoAt(START - 90 * 60_000) });
    const status = await fileUploadStatus(db, clock, org.id, fresh);
    expect(status).toMatchObject({ fileId: fresh, status: "processing", variantStatus: "pending", isStuck: false, isTerminal: false, retryCount: 0 });
    expect((await fileUploadStatus(db, clock, org.id, old)).isStuck).toBe(true);
    await expect(fileUploadStatus(db, clock, (await createOrganization(db, clock, unique("Other"), "FREE")).id, old)).rejects.toMatchObject({ code: "FILE_NOT_FOUND" });
    expect((await stuckFiles(db, clock, org.id, 30, 10)).map((s) => s.fileId)).toEqual([old]);
    expect((await stuckFiles(db, clock, org.id, 1, 10)).map((s) => s.fileId)).toEqual([old]);
    clock.advance(60_000);
    expect((await stuckFiles(db, clock, org.id, 1, 10)).map((s) => s.fileId)).toEqual([old, fresh]);
  });

  test("cancellation: pending items skipped, finished sessions refused", async () => {
    const db = client();
    const clock = new ManualClock(START);
    const org = await createOrganization(db, clock, unique("Cancel"), "PROFESSIONAL");
    const s = await newSession(db, org.id, clock, 3);
    await recordItemResult(db, s.id, 0, done("completed"), isoAt(clock.now()));
    clock.advance(1_000);
    const row = await cancelSession(db, clock, org.id, s.id);
    expect(row).toMatchObject({ status: "cancelled", completed_at: isoAt(START + 1_000) });
    expect((await sessionItems(db, s.id)).map((i) => [i.status, i.error])).toEqual([["completed", null], ["skipped", "session cancelled"], ["skipped", "session cancelled"]]);
    expect(await sessionProgress(db, row)).toMatchObject({ completedFiles: 1, skippedFiles: 2, pendingFiles: 0 });
    await expect(cancelSession(db, clock, org.id, s.id)).rejects.toMatchObject({ code: "SESSION_FINISHED" });
    await expect(cancelSession(db, clock, org.id, crypto.randomUUID())).rejects.toMatchObject({ code: "SESSION_NOT_FOUND" });
    expect(await closeSession(db, s.id, isoAt(clock.now()))).toBeNull();
  });

  test("race: a cancellation and the closing after the last item, at once: one finishes the session, the other sees it finished", async () => {
    const db = client();
    const clock = new ManualClock(START);
    const org = await createOrganization(db, clock, unique("RaceClose"), "PROFESSIONAL");
    const winners = new Set<string>();
    for (let round = 0; round < ROUNDS; round++) {
      const s = await newSession(db, org.id, clock, 1);
      await recordItemResult(db, s.id, 0, done("completed"), isoAt(clock.now()));
      let hooked = 0;
      const [cancelled, closed] = await Promise.allSettled([
        cancelSession(db, clock, org.id, s.id),
        closeSession(db, s.id, isoAt(clock.now()), () => void (hooked += 1)),
      ]);
      const final = await sessionStatus(db, s.id);
      if (cancelled.status === "fulfilled") {
        expect([final, closed]).toEqual(["cancelled", { status: "fulfilled", value: null }]);
        expect(hooked).toBe(0);
        winners.add("cancel");
      } else {
        expect((cancelled.reason as { code: string }).code).toBe("SESSION_FINISHED");
        expect(final).toBe("completed");
        expect(closed.status === "fulfilled" && closed.value?.row.status).toBe("completed");
        expect(hooked).toBe(1);
        winners.add("close");
      }
    }
    expect(winners.size).toBeGreaterThan(0);
  });

  test("race: a cancellation and the last item's outcome, at once: the item is either skipped or recorded, never both", async () => {
    const db = client();
    const clock = new ManualClock(START);
    const org = await createOrganization(db, clock, unique("RaceItem"), "PROFESSIONAL");
    for (let round = 0; round < ROUNDS; round++) {
      const s = await newSession(db, org.id, clock, 2);
      await recordItemResult(db, s.id, 0, done("completed"), isoAt(clock.now()));
      const [cancelled, recorded] = await Promise.all([cancelSession(db, clock, org.id, s.id), recordItemResult(db, s.id, 1, done("completed"), isoAt(clock.now()))]);
      expect(cancelled.status).toBe("cancelled");
      const last = (await sessionItems(db, s.id))[1]!;
      expect(last.status).toBe(recorded ? "completed" : "skipped");
      expect(await sessionProgress(db, cancelled)).toMatchObject({ pendingFiles: 0, completedFiles: recorded ? 2 : 1 });
      expect(await closeSession(db, s.id, isoAt(clock.now()))).toBeNull();
    }
  });

  test("intents: one per idempotency key even when two creations race; read per organization", async () => {
    const db = client();
    const clock = new ManualClock(START);
    const org = await createOrganization(db, clock, unique("Intents"), "PROFESSIONAL");
    const plain = await insertIntent(db, newIntent(org.id, clock));
    expect(plain.created).toBe(true);
    expect(plain.row).toMatchObject({ status: "PENDING", upload_mode: "multipart", total_parts: 3, deduplicated: 0, expires_at_ms: START + 3_600_000 });
    // Keys are per organization, and intents without one never collide.
    expect((await insertIntent(db, newIntent(org.id, clock))).created).toBe(true);
    const other = await createOrganization(db, clock, unique("Other"), "FREE");
    await expect(intentRow(db, other.id, plain.row.id)).rejects.toMatchObject({ code: "UPLOAD_NOT_FOUND" });
    for (let round = 0; round < ROUNDS; round++) {
      const key = unique("key");
      const [a, b] = await Promise.all([insertIntent(db, newIntent(org.id, clock, { idempotencyKey: key })), insertIntent(db, newIntent(org.id, clock, { idempotencyKey: key }))]);
      expect([a.created, b.created].sort()).toEqual([false, true]);
      expect(a.row.id).toBe(b.row.id);
      expect((await insertIntent(db, newIntent(other.id, clock, { idempotencyKey: key }))).created).toBe(true);
    }
  });

  test("intents: parts confirmed (again), retried, UPLOADED once all are in; single-shot bytes arriving", async () => {
    const db = client();
    const clock = new ManualClock(START);
    const org = await createOrganization(db, clock, unique("Parts"), "PROFESSIONAL");
    const { row } = await insertIntent(db, newIntent(org.id, clock));
    const at = isoAt(clock.now());
    expect(await recordPart(db, org.id, row.id, { partNumber: 1, etag: '"a"', sizeBytes: 10 }, at, activeOnly)).toEqual({ partsConfirmed: 1, confirmedBytes: 10, totalParts: 3, status: "PENDING" });
    expect(await recordPart(db, org.id, row.id, { partNumber: 1, etag: '"a2"', sizeBytes: 10 }, at, activeOnly)).toMatchObject({ partsConfirmed: 1 });
    await recordPart(db, org.id, row.id, { partNumber: 2, etag: '"b"', sizeBytes: 10 }, at, activeOnly);
    expect(await recordPart(db, org.id, row.id, { partNumber: 3, etag: '"c"', sizeBytes: 5 }, at, activeOnly)).toEqual({ partsConfirmed: 3, confirmedBytes: 25, totalParts: 3, status: "UPLOADED" });
    expect((await intentParts(db, row.id)).map((p) => [p.part_number, p.etag])).toEqual([[1, '"a2"'], [2, '"b"'], [3, '"c"']]);
    expect((await intentRow(db, org.id, row.id)).confirmed_at).toBe(at);
    expect(await dropPart(db, org.id, row.id, 2, at, activeOnly)).toBe(true);
    expect((await intentRow(db, org.id, row.id)).status).toBe("PENDING");
    expect(await dropPart(db, org.id, row.id, 2, at, activeOnly)).toBe(false);

    const single = (await insertIntent(db, newIntent(org.id, clock, { mode: "single_shot", partSizeBytes: null, totalParts: null, storeUploadId: null }))).row;
    clock.advance(1_000);
    expect(await markUploaded(db, single, isoAt(clock.now()))).toMatchObject({ status: "UPLOADED", confirmed_at: isoAt(clock.now()) });
    expect((await markUploaded(db, single, isoAt(clock.now() + 5))).confirmed_at).toBe(isoAt(clock.now()));
    expect(await markFailed(db, single.id, "aborted", isoAt(clock.now()))).toBe(true);
    expect(await markFailed(db, single.id, "aborted again", isoAt(clock.now()))).toBe(false);
    await expect(recordPart(db, org.id, single.id, { partNumber: 1, etag: '"x"', sizeBytes: 1 }, at, activeOnly)).rejects.toMatchObject({ code: "UPLOAD_STATE_CONFLICT" });
    expect(await intentRow(db, org.id, single.id)).toMatchObject({ status: "FAILED", error_message: "aborted" });
  });

  test("race: two confirmations of the last two parts at once leave the intent UPLOADED; two of one part leave one row", async () => {
    const db = client();
    const clock = new ManualClock(START);
    const org = await createOrganization(db, clock, unique("RaceParts"), "PROFESSIONAL");
    const at = isoAt(clock.now());
    for (let round = 0; round < ROUNDS; round++) {
      const { row } = await insertIntent(db, newIntent(org.id, clock));
      await recordPart(db, org.id, row.id, { partNumber: 1, etag: '"a"', sizeBytes: 10 }, at, activeOnly);
      const [two, same] = await Promise.all([
        recordPart(db, org.id, row.id, { partNumber: 2, etag: '"b"', sizeBytes: 10 }, at, activeOnly),
        recordPart(db, org.id, row.id, { partNumber: 3, etag: '"c"', sizeBytes: 5 }, at, activeOnly),
        recordPart(db, org.id, row.id, { partNumber: 3, etag: '"c"', sizeBytes: 5 }, at, activeOnly),
      ]).then((r) => [r[0], r[2]] as const);
      expect((await intentRow(db, org.id, row.id)).status).toBe("UPLOADED");
      expect((await intentParts(db, row.id)).map((p) => p.part_number)).toEqual([1, 2, 3]);
      expect(Math.max(two.partsConfirmed, same.partsConfirmed)).toBe(3);
    }
  });

  test("completion: the file created in the completion's transaction, a duplicate recorded without one; completing again answers the same", async () => {
    const db = client();
    const clock = new ManualClock(START);
    const org = await createOrganization(db, clock, unique("Complete"), "PROFESSIONAL");
    const { row } = await insertIntent(db, newIntent(org.id, clock));
    const fileId = crypto.randomUUID();
    clock.advance(1_000);
    const at = isoAt(clock.now());
    const first = await completeIntentRow(db, org.id, row.id, { fileId, mediaType: "video", deduplicated: false }, at, (tx) => insertFile(tx, org.id, { id: fileId }));
    expect(first).toMatchObject({ completed: true, row: { status: "COMPLETED", file_id: fileId, deduplicated: 0, completed_at: at } });
    const again = await completeIntentRow(db, org.id, row.id, { fileId: crypto.randomUUID(), mediaType: "video", deduplicated: false }, at, () => {
      throw new Error("a second file");
    });
    expect(again).toEqual({ completed: false, row: first.row });
    // A file written by a completion that then fails is rolled back with it.
    const { row: broken } = await insertIntent(db, newIntent(org.id, clock));
    const orphan = crypto.randomUUID();
    await expect(
      completeIntentRow(db, org.id, broken.id, { fileId: orphan, mediaType: "video", deduplicated: false }, at, async (tx) => {
        await insertFile(tx, org.id, { id: orphan });
        throw new Error("placement refused");
      }),
    ).rejects.toThrow(/placement refused/);
    expect([await db.one("SELECT id FROM files WHERE id = ?", [orphan]), (await intentRow(db, org.id, broken.id)).status]).toEqual([null, "PENDING"]);
    const dup = await completeIntentRow(db, org.id, broken.id, { fileId, mediaType: "video", deduplicated: true }, at);
    expect(dup).toMatchObject({ completed: true, row: { file_id: fileId, deduplicated: 1 } });
    const { row: aborted } = await insertIntent(db, newIntent(org.id, clock));
    await markFailed(db, aborted.id, "aborted", at);
    await expect(completeIntentRow(db, org.id, aborted.id, { fileId, mediaType: "video", deduplicated: true }, at)).rejects.toMatchObject({ code: "UPLOAD_STATE_CONFLICT" });
  });

  test("race: two completions of one intent create one file and answer the same; an abort racing a completion, one of them wins", async () => {
    const db = client();
    const clock = new ManualClock(START);
    const org = await createOrganization(db, clock, unique("RaceComplete"), "PROFESSIONAL");
    const at = isoAt(clock.now());
    const outcomes = new Set<string>();
    for (let round = 0; round < ROUNDS; round++) {
      const { row } = await insertIntent(db, newIntent(org.id, clock));
      const complete = () => {
        const fileId = crypto.randomUUID();
        return completeIntentRow(db, org.id, row.id, { fileId, mediaType: "video", deduplicated: false }, at, (tx) => insertFile(tx, org.id, { id: fileId }));
      };
      const [a, b] = await Promise.all([complete(), complete()]);
      expect([a.completed, b.completed].sort()).toEqual([false, true]);
      expect(a.row.file_id).toBe(b.row.file_id!);
      const files = await db.all<{ id: string }>("SELECT id FROM files WHERE org_id = ? AND id IN (?, ?)", [org.id, a.row.file_id!, crypto.randomUUID()]);
      expect(files).toHaveLength(1);

      const { row: contested } = await insertIntent(db, newIntent(org.id, clock));
      const [failed, completed] = await Promise.allSettled([markFailed(db, contested.id, "aborted", at), completeIntentRow(db, org.id, contested.id, { fileId: crypto.randomUUID(), mediaType: "video", deduplicated: true }, at)]);
      const final = (await intentRow(db, org.id, contested.id)).status;
      if (final === "FAILED") {
        expect([failed, completed.status]).toEqual([{ status: "fulfilled", value: true }, "rejected"]);
      } else {
        expect(final).toBe("COMPLETED");
        expect([failed, completed.status]).toEqual([{ status: "fulfilled", value: false }, "fulfilled"]);
      }
      outcomes.add(final);
    }
    expect(outcomes.size).toBeGreaterThan(0);
  });

  test("expiry: active intents past their time, and the store's uploads active intents still use", async () => {
    const db = client();
    const clock = new ManualClock(START);
    const org = await createOrganization(db, clock, unique("Expiry"), "PROFESSIONAL");
    const soon = (await insertIntent(db, newIntent(org.id, clock, { expiresAtMs: START + 1_000 }))).row;
    const later = (await insertIntent(db, newIntent(org.id, clock))).row;
    const failed = (await insertIntent(db, newIntent(org.id, clock, { expiresAtMs: START + 1_000 }))).row;
    await markFailed(db, failed.id, "aborted", isoAt(START));
    const ours = (rows: IntentRow[]) => rows.map((r) => r.id).filter((id) => [soon.id, later.id, failed.id].includes(id));
    expect(ours(await expiredIntents(db, START + 999))).toEqual([]);
    expect(ours(await expiredIntents(db, START + 1_000))).toEqual([soon.id]);
    const active = await activeStoreUploadIds(db);
    expect([active.has(soon.store_upload_id!), active.has(later.store_upload_id!), active.has(failed.store_upload_id!)]).toEqual([true, true, false]);
  });
});
