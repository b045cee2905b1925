/**
 * The appliance served from PostgreSQL (docs/scale-out.md): an `api` server and a `worker`
 * server, each with its own data directory as on two hosts, sharing one PostgreSQL database
 * (rows, jobs, vectors) and one S3 bucket. A file uploaded to the api is processed by the worker
 * and read back through the api; what the api cannot see of the worker's disk is never needed.
 * The cases follow a file through each way in and each pipeline that crosses the two processes.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { RunningServer } from "../src/server.ts";
import { ApiClient } from "./support/server.ts";
import { waitFor } from "./support/polling.ts";
import { postgresOrSkip } from "./support/postgres.ts";
import { startTwoProcesses, type TwoProcesses } from "./support/two-processes.ts";
import { pdf, png } from "./support/fixtures.ts";
import { processed } from "./support/polling.ts";
import { uploadFile } from "./support/uploads.ts";

const binaries = postgresOrSkip();

describe.skipIf(!binaries)("served from PostgreSQL: an api and a worker sharing one database and one bucket", () => {
  let deployment: TwoProcesses;
  let api: RunningServer;
  let key: string;

  beforeAll(async () => {
    deployment = await startTwoProcesses(binaries!, "serving");
    ({ api, key } = deployment);
  }, 180_000);

  afterAll(() => deployment?.stop());

  test("a note uploaded to the api is processed by the worker and found through the api", async () => {
    const client = new ApiClient(api.url, key);
    const form = new FormData();
    form.append("file", new Blob(["# Harbor survey\n\nThe crane by the north quay needs a new valve."], { type: "text/markdown" }), "survey.md");
    const res = await fetch(`${api.url}/api/v2/files/upload`, { method: "POST", headers: { authorization: `Bearer ${key}` }, body: form });
    const body = (await res.json()) as { image_id?: string; id?: string };
    expect(res.status, JSON.stringify(body)).toBe(201);
    const id = body.image_id ?? body.id!;
    const done = await waitFor(
      async () => {
        const file = await client.get(`/files/${id}`);
        return ["completed", "failed"].includes(file.body.processing_status) ? file.body : null;
      },
      { what: "the worker processed the note", timeoutMs: 60_000 },
    );
    expect(done.processing_status, JSON.stringify(done)).toBe("completed");
    const listed = await client.get("/files?search=crane");
    expect(listed.body.items.map((f: { id: string }) => f.id)).toEqual([id]);
  });
  test("an image gets its variants and embedding, a PDF its text and chunks; keyword, vector and hybrid search find the PDF", async () => {
    const client = new ApiClient(api.url, key);
    const image = await uploadFile(client, png(64, 48, 7), "harbor.png");
    const report = await uploadFile(client, pdf("Valve VX-4471 replaced at the north quay pump station"), "report.pdf");
    const [imageDone, reportDone] = [await processed({ api: client }, image), await processed({ api: client }, report)];
    expect(imageDone.processing_status, JSON.stringify(imageDone)).toBe("completed");
    // The variant is served from the bucket whichever process stored it.
    const thumb = await fetch(imageDone.thumbnail_url);
    expect(thumb.status).toBe(200);
    expect((await thumb.arrayBuffer()).byteLength).toBeGreaterThan(0);
    expect(reportDone.processing_status, JSON.stringify(reportDone)).toBe("completed");
    await waitFor(async () => (await client.get(`/files/${report}/processing-status`)).body.embedding_status === "completed", { what: "the PDF's chunks embedded", timeoutMs: 60_000 });
    for (const mode of ["keyword", "vector", "hybrid"]) {
      const found = await client.post("/files/search", { query: "VX-4471 valve", mode, limit: 5 });
      expect(found.status, JSON.stringify(found.body)).toBe(200);
      expect(found.body.results[0]?.document_id, mode).toBe(report);
    }
  });

  test("a batch staged by the api is stored and processed by the worker; an upload intent completes through the bucket", async () => {
    const client = new ApiClient(api.url, key);
    const form = new FormData();
    for (let i = 0; i < 7; i++) form.append("files", new File([`# Note ${i}\n\nBatch note number ${i} about the harbor crane.`], `note-${i}.md`));
    const batch = await client.form("/files/upload/batch", form);
    expect(batch.status, JSON.stringify(batch.body)).toBe(201);
    const summary = await waitFor(
      async () => {
        const res = await client.get(`/files/sessions/${batch.body.session_id}/summary`);
        return res.body.overall_status === "completed" ? res.body : null;
      },
      { what: "the batch stored by the worker", timeoutMs: 60_000 },
    );
    expect(summary.completion_percentage).toBe(100);
    const bytes = png(32, 32, 3);
    const sha = new Bun.CryptoHasher("sha256").update(bytes).digest("hex");
    const created = await client.post("/files/uploads", { filename: "intent.png", content_type: "image/png", size_bytes: bytes.byteLength, claimed_file_hash: sha });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const put = await fetch(created.body.presigned_url, { method: "PUT", body: bytes as Uint8Array<ArrayBuffer>, headers: created.body.headers });
    expect(put.status).toBe(200);
    const done = await client.post(`/files/uploads/${created.body.upload_id}/complete`, {});
    expect(done.status, JSON.stringify(done.body)).toBe(200);
    expect((await processed({ api: client }, done.body.file_id)).processing_status).toBe("completed");
  });

  test("a rule applied by the worker tags a matching note; the limit of a key holds across both processes", async () => {
    const client = new ApiClient(api.url, key);
    const rule = await client.post("/rules", { name: "finance", conditions: [{ field: "text", op: "contains", value: "invoice" }], actions: [{ type: "add_tags", tags: ["finance"] }] });
    expect(rule.status, JSON.stringify(rule.body)).toBe(201);
    const id = await uploadFile(client, "# Invoice 17\n\nThe invoice for the crane repair.", "invoice.md");
    await processed({ api: client }, id);
    const tagged = await waitFor(async () => ((await client.get(`/files/${id}`)).body.tags as string[]).includes("finance") || null, { what: "the rule's tag", timeoutMs: 30_000 });
    expect(tagged).toBe(true);
    // Rate limits are counted in the database: both processes report the same window.
    const a = await fetch(`${api.url}/api/v2/projects`, { headers: { authorization: `Bearer ${key}` } });
    const remaining = Number(a.headers.get("x-ratelimit-remaining"));
    const b = await fetch(`${api.url}/api/v2/projects`, { headers: { authorization: `Bearer ${key}` } });
    expect(Number(b.headers.get("x-ratelimit-remaining"))).toBeLessThan(remaining);
  });
});
