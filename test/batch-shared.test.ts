/**
 * Batch uploads where several processes share the database (isSharedDeployment: PostgreSQL
 * without --single-process): the accepted files go from the receiving process's staging to the
 * blob store before the session is acknowledged, so the `batch.ingest` job can store the items in
 * a process that cannot see that disk. This runs the functions on a single-process test server
 * with the configuration of a shared deployment, and stores the items as another process would:
 * with the staging directory out of reach. A single process's own behaviour (bytes moved from
 * staging by the job) is batch.test.ts's, which in the shared test mode (npm run test:shared)
 * also runs the real thing; there this file, which stands in for it, has nothing to add and skips.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import type { Principal } from "../src/auth/principal.ts";
import { ManualClock } from "../src/clock.ts";
import { isSharedDeployment } from "../src/config.ts";
import { originalBlobKey } from "../src/files/blob-keys.ts";
import { createBatch, processSession } from "../src/ingest/batch.ts";
import { claimInFlight, IN_FLIGHT_MAX_AGE_MS, recordInFlight, sweepBatchObjectsInFlight } from "../src/ingest/batch-objects.ts";
import type { IngestDeps } from "../src/ingest/deps.ts";
import { formOf } from "../src/ingest/multipart-form.ts";
import { elf, pdf, png } from "./support/fixtures.ts";
import { startTestServer, type TestServer } from "./support/server.ts";
import { sharedDeployment } from "./support/suite-database.ts";

let server: TestServer;
let shared: IngestDeps;
describe.skipIf(sharedDeployment())("batch uploads with the configuration of a shared deployment", () => {
  beforeAll(async () => {
    // A clock that stands still: the server's own runner never reaches the batch job's start, so the
    // test stores the items itself, as a worker process would.
    server = await startTestServer({ clock: new ManualClock(Date.UTC(2031, 0, 1)) });
    shared = { ...server.ctx, config: { ...server.ctx.config, database: { kind: "postgres", url: "postgres://mediabox@127.0.0.1/mediabox" }, singleProcess: false } };
    expect(isSharedDeployment(shared.config)).toBe(true);
    expect(isSharedDeployment(server.ctx.config)).toBe(false);
  });
  afterAll(() => server.close());

  function form(files: [Uint8Array, string][], fields: Record<string, string> = {}) {
    const f = new FormData();
    for (const [k, v] of Object.entries(fields)) f.append(k, v);
    for (const [bytes, name] of files) f.append("files", new Blob([bytes as Uint8Array<ArrayBuffer>]), name);
    return formOf(new Request("http://127.0.0.1/files/upload/batch", { method: "POST", body: f }));
  }

  function principalOf(orgId: string): Principal {
    return { keyId: "key-batch", orgId, tier: "PROFESSIONAL", permissions: new Set() };
  }

  const itemsOf = (sessionId: string) =>
    server.ctx.sql.all<{ item_index: number; file_id: string; status: string }>("SELECT item_index, file_id, status FROM session_items WHERE session_id = ? ORDER BY item_index", [sessionId]);
  const staged = (sessionId: string) => {
    const dir = join(server.ctx.dataDir.staging, sessionId);
    return existsSync(dir) ? readdirSync(dir) : [];
  };

  test("a background batch's accepted files are in the store before the response, and a process without the staging directory stores them", async () => {
    const { orgId } = await server.tenant();
    const same = png(8, 8, 7);
    const files: [Uint8Array, string][] = [[same, "a.png"], [png(8, 8, 2), "b.png"], [pdf("one"), "c.pdf"], [elf(), "d.bin"], [png(8, 8, 3), "e.png"], [same, "f.png"], [pdf("two"), "g.pdf"]];
    const batch = await createBatch(shared, principalOf(orgId), form(files, { skip_duplicates: "true" }));
    expect(batch).toMatchObject({ status: "processing", totalFiles: 7, acceptedFiles: 6, immediateResults: null });
    expect(batch.rejections.map((r) => r.filename)).toEqual(["d.bin"]);

    // Acknowledged: nothing of it is left on this process's disk, not even its directory; every accepted file is in the store.
    expect(existsSync(join(server.ctx.dataDir.staging, batch.sessionId))).toBe(false);
    const items = await itemsOf(batch.sessionId);
    expect(items.map((i) => i.item_index)).toEqual([0, 1, 2, 4, 5, 6]);
    for (const item of items) expect(await server.ctx.blobs.size(originalBlobKey(orgId, item.file_id))).toBeGreaterThan(0);

    // The worker's turn: its own data directory has no staging for this session.
    const outcomes = await processSession(shared, batch.sessionId);
    expect(outcomes.map((o) => [o.filename, o.status])).toEqual([
      ["a.png", "completed"], ["b.png", "completed"], ["c.pdf", "completed"], ["e.png", "completed"], ["f.png", "skipped"], ["g.pdf", "completed"],
    ]);
    const after = await itemsOf(batch.sessionId);
    for (const item of after) {
      const row = await server.ctx.files.byId(item.file_id);
      if (item.status === "completed") {
        expect(row).toMatchObject({ blob_key: originalBlobKey(orgId, item.file_id), session_id: batch.sessionId });
        expect(await server.ctx.blobs.size(row!.blob_key!)).toBeGreaterThan(0);
      } else {
        // The duplicate became no file, and its bytes are not left in the store.
        expect(row).toBeNull();
        expect(await server.ctx.blobs.size(originalBlobKey(orgId, item.file_id))).toBeNull();
      }
    }
    const session = await server.ctx.sql.one<{ status: string }>("SELECT status FROM upload_sessions WHERE id = ?", [batch.sessionId]);
    expect(session).toEqual({ status: "completed" });
    // The session refers to the objects now: the ledger of objects in flight kept none of them.
    expect(await inFlight()).toEqual([]);
  });

  test("a small batch is stored before the response from the store's copy", async () => {
    const { orgId } = await server.tenant();
    const batch = await createBatch(shared, principalOf(orgId), form([[png(4, 4, 11), "x.png"], [pdf("three"), "y.pdf"]]));
    expect(batch.status).toBe("completed");
    expect(batch.immediateResults!.map((r) => r.status)).toEqual(["completed", "completed"]);
    expect(staged(batch.sessionId)).toEqual([]);
    for (const r of batch.immediateResults!) expect(await server.ctx.blobs.size(originalBlobKey(orgId, r.fileId!))).toBeGreaterThan(0);
  });

  test("a cancelled session's bytes leave the store once the worker sees the cancellation", async () => {
    const tenant = await server.tenant();
    const files: [Uint8Array, string][] = Array.from({ length: 6 }, (_, i) => [png(6, 6, 40 + i), `c${i}.png`]);
    const batch = await createBatch(shared, principalOf(tenant.orgId), form(files));
    expect(batch.status).toBe("processing");
    const keys = (await itemsOf(batch.sessionId)).map((i) => originalBlobKey(tenant.orgId, i.file_id));
    for (const key of keys) expect(await server.ctx.blobs.size(key)).toBeGreaterThan(0);
    const cancelled = await tenant.api.post(`/files/sessions/${batch.sessionId}/cancel`, {});
    expect(cancelled.status).toBe(200);

    await processSession(shared, batch.sessionId);
    expect((await itemsOf(batch.sessionId)).map((i) => i.status)).toEqual(Array(6).fill("skipped"));
    for (const key of keys) expect(await server.ctx.blobs.size(key)).toBeNull();
  });

  test("a batch cut off before it is acknowledged takes the files it had stored back out of the store", async () => {
    const { orgId } = await server.tenant();
    // The store fails on the third file, after two are in it.
    const blobs = Object.create(server.ctx.blobs) as typeof server.ctx.blobs;
    let imports = 0;
    let ledgerAtFirstMove: string[] = [];
    blobs.importFile = async (key, path, contentType) => {
      if (++imports === 1) ledgerAtFirstMove = await inFlight();
      if (imports === 3) throw new Error("the store went away");
      return server.ctx.blobs.importFile(key, path, contentType);
    };
    const files: [Uint8Array, string][] = Array.from({ length: 4 }, (_, i) => [png(5, 5, 60 + i), `r${i}.png`]);
    const refusal = await createBatch({ ...shared, blobs }, principalOf(orgId), form(files)).then(() => "accepted", (err: Error) => err.message);
    expect(refusal).toBe("the store went away");
    expect(imports).toBeGreaterThanOrEqual(3);
    expect(await storedObjects(orgId)).toEqual([]);
    expect(await server.ctx.sql.one("SELECT count(*) AS n FROM upload_sessions WHERE org_id = ?", [orgId])).toEqual({ n: 0 });
    // Every key was on the ledger before the first move; the refusal took them off with the objects.
    expect(ledgerAtFirstMove).toHaveLength(4);
    expect(await inFlight()).toEqual([]);
  });

  test("objects a dead process moved before writing its session are deleted by housekeeping once old; young ones and a written session's are kept", async () => {
    const { orgId } = await server.tenant();
    const now = server.ctx.clock.now();
    const written = await createBatch(shared, principalOf(orgId), form([[png(4, 4, 90), "w.png"]]));
    const writtenKey = originalBlobKey(orgId, written.immediateResults![0]!.fileId!);
    const dead = [originalBlobKey(orgId, crypto.randomUUID()), originalBlobKey(orgId, crypto.randomUUID())];
    const young = originalBlobKey(orgId, crypto.randomUUID());
    for (const key of [...dead, young]) await server.ctx.blobs.put(key, png(3, 3, 1), "image/png");
    // As the ledger is left by a process killed between its moves and its session's transaction.
    const row = (key: string, session: string, at: number) => server.ctx.sql.run("INSERT INTO batch_objects_in_flight (blob_key, session_id, created_at) VALUES (?, ?, ?)", [key, session, at]);
    const deadSession = crypto.randomUUID();
    for (const key of dead) await row(key, deadSession, now - IN_FLIGHT_MAX_AGE_MS - 1);
    await row(young, crypto.randomUUID(), now - IN_FLIGHT_MAX_AGE_MS + 60_000);
    await row(writtenKey, written.sessionId, now - IN_FLIGHT_MAX_AGE_MS - 1);

    expect(await sweepBatchObjectsInFlight(server.ctx)).toBe(2);
    for (const key of dead) expect(await server.ctx.blobs.size(key)).toBeNull();
    expect(await server.ctx.blobs.size(young)).toBeGreaterThan(0);
    expect(await server.ctx.blobs.size(writtenKey)).toBeGreaterThan(0);
    expect(await inFlight()).toEqual([young]);
    expect(await sweepBatchObjectsInFlight(server.ctx)).toBe(0);
    await server.ctx.sql.run("DELETE FROM batch_objects_in_flight");
  });

  test("a session whose keys a sweep took off the ledger is not written", async () => {
    const session = crypto.randomUUID();
    await recordInFlight(server.ctx.sql, server.ctx.clock, session, ["orgs/x/a", "orgs/x/b"]);
    await server.ctx.sql.run("DELETE FROM batch_objects_in_flight WHERE blob_key = 'orgs/x/a'");
    expect(await server.ctx.sql.transaction((tx) => claimInFlight(tx, session, 2))).toBe(false);
    await recordInFlight(server.ctx.sql, server.ctx.clock, session, ["orgs/x/c", "orgs/x/d"]);
    expect(await server.ctx.sql.transaction((tx) => claimInFlight(tx, session, 2))).toBe(true);
    expect(await inFlight()).toEqual([]);
  });
});

/** The keys on the ledger of batch objects in flight. */
async function inFlight(): Promise<string[]> {
  return (await server.ctx.sql.all<{ blob_key: string }>("SELECT blob_key FROM batch_objects_in_flight ORDER BY blob_key")).map((r) => r.blob_key);
}

/** The organization's originals in the local store. */
async function storedObjects(orgId: string): Promise<string[]> {
  const dir = join(server.ctx.dataDir.blobs.objects, "orgs", orgId);
  return existsSync(dir) ? readdirSync(dir, { recursive: true, withFileTypes: true }).filter((e) => e.isFile()).map((e) => e.name).sort() : [];
}
