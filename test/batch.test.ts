import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { elf, mp4, pdf, png, text } from "./support/fixtures.ts";
import { jobRow } from "./support/job-rows.ts";
import { clockPassed, waitFor } from "./support/polling.ts";
import { startTestServer, type TestServer } from "./support/server.ts";
import { sharedDeployment } from "./support/suite-database.ts";

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

function batchForm(files: [Uint8Array, string][], fields: Record<string, string> = {}) {
  const f = new FormData();
  for (const [k, v] of Object.entries(fields)) f.append(k, v);
  for (const [bytes, name] of files) f.append("files", new Blob([bytes as Uint8Array<ArrayBuffer>]), name);
  return f;
}

/** A real WebSocket client subscribed to one channel, collecting every message. */
async function subscribe(key: string, channel: string) {
  const url = `${server.url.replace("http", "ws")}/api/v2/ws?access_token=${encodeURIComponent(key)}`;
  const ws = new WebSocket(url);
  const messages: any[] = [];
  ws.onmessage = (e) => messages.push(JSON.parse(String(e.data)));
  await new Promise<void>((resolve, reject) => {
    ws.onopen = () => resolve();
    ws.onerror = () => reject(new Error("websocket failed"));
  });
  ws.send(JSON.stringify({ action: "subscribe", channel }));
  const until = (predicate: (m: any[]) => boolean, what: string) =>
    waitFor(() => predicate(messages), { what: () => `${what} on ${channel}; got ${JSON.stringify(messages.map((m) => m.type))}` });
  return { ws, messages, until };
}

describe("POST /files/upload/batch", () => {
  test("3 files: stored before the response, with immediate results and a rejection", async () => {
    const tenant = await server.tenant();
    const res = await tenant.api.form(
      "/files/upload/batch",
      batchForm([[png(4, 4, 1), "a.png"], [pdf(), "b.pdf"], [elf(), "c.bin"], [text("# Notes\n\n- one\n"), "d.md"]], { tags: "batch" }),
    );
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ total_files: 4, accepted_files: 3, rejected_files: 1, status: "partial", websocket_channel: `batch.${res.body.session_id}` });
    expect(res.body.status_url).toBe(`/api/v2/files/sessions/${res.body.session_id}/status`);
    expect(res.body.rejections).toEqual([{ file_index: 2, filename: "c.bin", code: "UNSUPPORTED_FILE_TYPE", reason: expect.stringContaining("executable") }]);
    expect(res.body.immediate_results.map((r: any) => [r.filename, r.status, r.media_type, r.document_type])).toEqual([
      ["a.png", "completed", "image", null],
      ["b.pdf", "completed", "document", "pdf"],
      ["d.md", "completed", "document", "md"],
    ]);
    for (const r of res.body.immediate_results) {
      const row = await server.ctx.sql.one<{ session_id: string; tags: string }>("SELECT session_id, tags FROM files WHERE id = ?", [r.image_id]);
      expect(row).toEqual({ session_id: res.body.session_id, tags: '["batch"]' });
    }
    const status = await tenant.api.get(res.body.status_url.replace("/api/v2", ""));
    expect(status.body).toMatchObject({ status: "completed", total_files: 4, completed_files: 3, failed_files: 1, pending_files: 0, progress_percentage: 100 });
  });

  test("12 files: processed in the background with progress on the WebSocket channel", async () => {
    const tenant = await server.tenant();
    const files: [Uint8Array, string][] = Array.from({ length: 12 }, (_, i) => [png(4, 4, 100 + i), `img-${i}.png`]);
    const res = await tenant.api.form("/files/upload/batch", batchForm(files));
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ total_files: 12, accepted_files: 12, rejected_files: 0, status: "processing", immediate_results: null, rejections: null });
    const channel = res.body.websocket_channel;
    // The relay between processes keeps every channel listened to: only a lone process can tell that nobody listens.
    const perProcess = !sharedDeployment();
    if (perProcess) expect(server.ctx.events.listened(channel)).toBe(false);
    const client = await subscribe(tenant.key, channel);
    await client.until((m) => m.some((x) => x.type === "subscribed"), "subscribed");
    expect(server.ctx.events.listened(channel)).toBe(true);
    await client.until((m) => m.some((x) => x.type === "session_completed"), "session_completed");
    client.ws.close();
    // Nobody listens once the client is gone: items' events are no longer composed.
    if (perProcess) {
      const deadline = Date.now() + 10_000;
      while (server.ctx.events.listened(channel) && Date.now() < deadline) await Bun.sleep(10);
      expect(server.ctx.events.listened(channel)).toBe(false);
    }
    const types = client.messages.map((m) => m.type);
    expect(types[0]).toBe("welcome");
    expect(types[1]).toBe("subscribed");
    expect(types.filter((t) => t === "file_completed").length).toBe(12);
    expect(types.filter((t) => t === "progress").length).toBe(12);
    const last = client.messages.filter((m) => m.type === "progress").at(-1);
    expect(last).toMatchObject({ channel, completed_files: 12, pending_files: 0, progress_percentage: 100 });
    expect(client.messages.at(-1)).toMatchObject({ type: "session_completed", status: "completed" });

    const results = await tenant.api.get(`/files/sessions/${res.body.session_id}/results?limit=5&offset=10`);
    expect(results.body).toMatchObject({ total_count: 12, limit: 5, offset: 10, has_more: false, summary: { total_files: 12, completed: 12, failed: 0, skipped: 0 } });
    expect(results.body.results.map((r: any) => r.filename)).toEqual(["img-10.png", "img-11.png"]);
    const summary = await tenant.api.get(`/files/sessions/${res.body.session_id}/summary`);
    expect(summary.body).toMatchObject({ batch_id: res.body.session_id, overall_status: "completed", completion_percentage: 100 });
    expect(summary.body.counts.total).toBe(12);
    expect(existsSync(join(server.dataDir, "staging", res.body.session_id))).toBe(false);
  });

  test("another organization cannot subscribe to the channel or read the session", async () => {
    const owner = await server.tenant();
    const res = await owner.api.form("/files/upload/batch", batchForm([[png(3, 3, 55), "x.png"]]));
    const intruder = await server.tenant();
    const client = await subscribe(intruder.key, res.body.websocket_channel);
    await client.until((m) => m.some((x) => x.type === "error"), "an error message");
    client.ws.close();
    expect(client.messages.some((m) => m.type === "subscribed")).toBe(false);
    expect((await intruder.api.get(`/files/sessions/${res.body.session_id}/status`)).status).toBe(404);
    const anonymous = new WebSocket(`${server.url.replace("http", "ws")}/api/v2/ws`);
    const closed = await new Promise<string>((resolve) => {
      anonymous.onopen = () => resolve("open");
      anonymous.onerror = () => resolve("error");
      anonymous.onclose = () => resolve("closed");
    });
    expect(closed).not.toBe("open");
  });

  test("tier batch size limit, skip_duplicates across a batch, and nothing left over from refused requests", async () => {
    const free = await server.tenant({ tier: "STARTER" });
    const tooMany = Array.from({ length: 51 }, (_, i) => [png(2, 2, i), `f${i}.png`] as [Uint8Array, string]);
    const res = await free.api.form("/files/upload/batch", batchForm(tooMany));
    expect(res.status).toBe(400);
    expect(res.body.code).toBe("BATCH_TOO_LARGE");
    expect(res.body.detail).toContain("50");
    expect(readdirSync(join(server.dataDir, "staging"))).toEqual([]);

    const { api } = await server.tenant();
    const first = await api.form("/files/upload", (() => { const f = new FormData(); f.append("file", new Blob([png(7, 7, 77) as Uint8Array<ArrayBuffer>]), "orig.png"); return f; })());
    const dup = await api.form("/files/upload/batch", batchForm([[png(7, 7, 77), "copy.png"], [png(7, 7, 78), "new.png"]], { skip_duplicates: "true" }));
    expect(dup.body.immediate_results.map((r: any) => [r.status, r.skipped_existing_image_id])).toEqual([
      ["skipped", first.body.image_id],
      ["completed", null],
    ]);
    // Copies inside one batch (stored side by side): the first is stored, the later ones point at it.
    const copies = await api.form(
      "/files/upload/batch",
      batchForm([[png(9, 9, 1), "a.png"], [png(9, 9, 2), "b.png"], [png(9, 9, 1), "a2.png"], [png(9, 9, 3), "c.png"], [png(9, 9, 1), "a3.png"]], { skip_duplicates: "true" }),
    );
    const outcomes = copies.body.immediate_results.map((r: any) => [r.status, r.skipped_existing_image_id]);
    const original = copies.body.immediate_results[0].image_id;
    expect(outcomes).toEqual([["completed", null], ["completed", null], ["skipped", original], ["completed", null], ["skipped", original]]);
    expect((await api.form("/files/upload/batch", new FormData())).status).toBe(400);
  });
});

describe("sessions", () => {
  async function insertSession(orgId: string, status: string, items: ("pending" | "completed")[] = []): Promise<string> {
    const id = crypto.randomUUID();
    const now = new Date().toISOString();
    await server.ctx.sql.run(
      `INSERT INTO upload_sessions (id, org_id, status, upload_method, total_files, options, created_at, updated_at)
       VALUES (?, ?, ?, 'streaming', ?, '{}', ?, ?)`,
      [id, orgId, status, items.length, now, now],
    );
    for (const [i, s] of items.entries()) {
      await server.ctx.sql.run(
        `INSERT INTO session_items (session_id, item_index, filename, file_id, status, size_bytes, sha256, media_type, content_type, created_at)
         VALUES (?, ?, ?, ?, ?, 1, 'x', 'image', 'image/png', ?)`,
        [id, i, `f${i}.png`, crypto.randomUUID(), s, now],
      );
    }
    return id;
  }

  test("cancel follows the spec's table: active sessions become cancelled, finished ones answer 400", async () => {
    const tenant = await server.tenant();
    for (const status of ["pending", "uploading", "processing"]) {
      const id = await insertSession(tenant.orgId, status, ["completed", "pending", "pending"]);
      const res = await tenant.api.post(`/files/sessions/${id}/cancel`);
      expect(res.status, status).toBe(200);
      expect(res.body).toMatchObject({ session_id: id, status: "cancelled", completed_files: 1, skipped_files: 2, pending_files: 0 });
      expect(res.body.completed_at).not.toBeNull();
    }
    for (const status of ["completed", "cancelled", "expired"]) {
      const id = await insertSession(tenant.orgId, status);
      const res = await tenant.api.post(`/files/sessions/${id}/cancel`);
      expect(res.status, status).toBe(400);
      expect(res.body.code).toBe("SESSION_FINISHED");
      expect((await tenant.api.get(`/files/sessions/${id}/status`)).body.status).toBe(status);
    }
    expect((await tenant.api.post(`/files/sessions/${crypto.randomUUID()}/cancel`)).status).toBe(404);
    const stranger = await server.tenant();
    const active = await insertSession(tenant.orgId, "processing");
    expect((await stranger.api.post(`/files/sessions/${active}/cancel`)).status).toBe(404);
  });

  test("listing filters by status and method, newest first, with pagination checks", async () => {
    const tenant = await server.tenant();
    const a = await insertSession(tenant.orgId, "completed");
    // b is newer: wait until the clock has moved past a's created_at.
    await clockPassed((await server.ctx.sql.one<{ created_at: string }>("SELECT created_at FROM upload_sessions WHERE id = ?", [a]))!.created_at);
    const b = await insertSession(tenant.orgId, "processing");
    const all = await tenant.api.get("/files/sessions");
    expect(all.body.items.map((s: any) => s.session_id)).toEqual([b, a]);
    expect(all.body).toMatchObject({ total_count: 2, limit: 20, offset: 0, has_more: false });
    expect((await tenant.api.get("/files/sessions?status=completed")).body.items.map((s: any) => s.session_id)).toEqual([a]);
    expect((await tenant.api.get("/files/sessions?upload_method=presigned")).body.total_count).toBe(0);
    expect((await tenant.api.get("/files/sessions?status=bogus")).status).toBe(400);
    expect((await tenant.api.get("/files/sessions?limit=101")).status).toBe(400);
  });

  test("stuck files: queued longer than stuck_minutes", async () => {
    const tenant = await server.tenant();
    // A file whose processing job never ran: its job is cancelled before it is taken (on a busy
    // machine the queue may hold earlier files for minutes, so nothing waits on it), then the
    // file is made to look queued for 45 minutes.
    const up = await tenant.api.form("/files/upload", (() => { const f = new FormData(); f.append("file", new Blob([mp4() as Uint8Array<ArrayBuffer>]), "s.mp4"); return f; })());
    const jobId = (await server.ctx.files.byId(up.body.image_id))!.processing_job_id!;
    await server.ctx.jobs.cancel(tenant.orgId, jobId);
    await waitFor(async () => ["cancelled", "completed", "failed"].includes((await jobRow(server.ctx.sql, jobId))!.status), {
      what: "the processing job to end",
    });
    const old = new Date(Date.now() - 45 * 60_000).toISOString();
    await server.ctx.sql.run("UPDATE files SET processing_status = 'queued', updated_at = ? WHERE id = ?", [old, up.body.image_id]);
    const stuck = await tenant.api.get("/files/sessions/stuck?stuck_minutes=30");
    expect(stuck.body.stuck_count).toBe(1);
    expect(stuck.body.images[0]).toMatchObject({ image_id: up.body.image_id, is_stuck: true, is_terminal: false, unified_status: "queued" });
    expect((await tenant.api.get("/files/sessions/stuck?stuck_minutes=60")).body.stuck_count).toBe(0);
    expect((await tenant.api.get("/files/sessions/stuck?stuck_minutes=0")).status).toBe(400);
  });
});
