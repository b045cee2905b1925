import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { docx, elf, jar, mp4, pdf, peExe, png, text, zip } from "./support/fixtures.ts";
import { terminalStatus, waitFor } from "./support/polling.ts";
import { startTestServer, type TestServer } from "./support/server.ts";
import { sharedDeployment } from "./support/suite-database.ts";

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

function form(file: Uint8Array, filename: string, type = "application/octet-stream", fields: Record<string, string> = {}) {
  const f = new FormData();
  for (const [k, v] of Object.entries(fields)) f.append(k, v);
  f.append("file", new Blob([file as Uint8Array<ArrayBuffer>], { type }), filename);
  return f;
}

const sha256 = (bytes: Uint8Array) => new Bun.CryptoHasher("sha256").update(bytes).digest("hex");

function blobFiles(): string[] {
  const root = join(server.dataDir, "blobs", "objects");
  const out: string[] = [];
  const walk = (dir: string) => {
    if (!existsSync(dir)) return;
    // Originals only: variants of images uploaded by earlier tests may still be arriving.
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      if (e.isDirectory()) walk(join(dir, e.name));
      else if (!join(dir, e.name).includes("/variants/")) out.push(join(dir, e.name));
    }
  };
  walk(root);
  return out;
}

// blobs/tmp is the local blob store's; with a bucket only the api's own staging directory is on disk.
const leftovers = () => [...readdirSync(join(server.dataDir, "staging")), ...(sharedDeployment() ? [] : readdirSync(join(server.dataDir, "blobs", "tmp")))];
/**
 * A refused upload leaves nothing behind. Earlier tests' images are still being processed in the
 * background, and their variant writes pass through blobs/tmp, so the directories are awaited
 * empty: a real leak stays and fails the wait.
 */
const expectNoLeftovers = () => waitFor(() => leftovers().length === 0, { what: () => `no leftovers, still: ${leftovers().join(", ")}`, timeoutMs: 20_000 });

describe("POST /files/upload", () => {
  test("each kind is routed by its content even with a wrong Content-Type and name", async () => {
    const tenant = await server.tenant();
    const cases: [string, Uint8Array, string, string, string | null][] = [
      ["png", png(), "photo.pdf", "image", null],
      ["pdf", pdf(), "scan.jpg", "document", "pdf"],
      ["docx", docx(), "report.bin", "document", "docx"],
      ["markdown", text("# Title\n\nSome *text* and a [link](http://x).\n\n- item\n"), "notes.txt", "document", "md"],
      ["plain text", text("just a line of plain words\nand another\n"), "data.png", "document", "txt"],
      ["mp4", mp4(), "clip.pdf", "video", null],
    ];
    for (const [label, bytes, name, mediaType, documentType] of cases) {
      const res = await tenant.api.form("/files/upload", form(bytes, name, "image/gif"));
      expect(res.status, label).toBe(201);
      expect(res.body, label).toMatchObject({
        upload_method: "STREAMING",
        status: "processing",
        upload_completed: true,
        skipped: false,
        skipped_existing_image_id: null,
        storage_target: "default",
        media_type: mediaType,
        document_type: documentType,
        text_extraction_status: mediaType === "document" ? "pending" : null,
      });
      const row = (await server.ctx.sql.one<{ media_type: string; sha256: string; size_bytes: number; blob_key: string; org_id: string }>(
        "SELECT media_type, sha256, size_bytes, blob_key, org_id FROM files WHERE id = ?",
        [res.body.image_id],
      ))!;
      expect(row).toMatchObject({ media_type: mediaType, sha256: sha256(bytes), size_bytes: bytes.length, org_id: tenant.orgId });
      const stored = await server.ctx.blobs.read(row.blob_key);
      expect(sha256(new Uint8Array(await new Response(stored).arrayBuffer()))).toBe(sha256(bytes));
    }
  });

  test("fields are applied: title, tags, folder placement, category, auto_describe", async () => {
    const tenant = await server.tenant();
    const folder = (await tenant.api.post("/folders", { name: "Inbox" })).body;
    const res = await tenant.api.form(
      "/files/upload",
      form(png(8, 8, 1), "a.png", "image/png", { title: "Front", tags: "house, sunny ,house", folder_id: folder.id, content_category: "real_estate", auto_describe: "false" }),
    );
    expect(res.status).toBe(201);
    const row = await server.ctx.sql.one<Record<string, unknown>>("SELECT * FROM files WHERE id = ?", [res.body.image_id]);
    expect(row).toMatchObject({ title: "Front", tags: '["house","sunny"]', folder_id: folder.id, project_id: folder.project_id, content_category: "real_estate", auto_describe: 0, description_status: "skipped" });
  });

  test("executables, scripts, archives and active markup are 415 and leave nothing on disk", async () => {
    const tenant = await server.tenant();
    const before = blobFiles().length;
    const cases: [string, Uint8Array, string][] = [
      ["ELF", elf(), "tool"],
      ["PE", peExe(), "setup.pdf"],
      ["jar", jar(), "lib.docx"],
      ["zip", zip({ "a.txt": "hello" }), "archive.pdf"],
      ["shebang", text("#!/bin/sh\necho pwned\n"), "readme.txt"],
      ["batch", text("@echo off\r\ndel /q *\r\n"), "notes.txt"],
      ["powershell", text("Invoke-Expression (New-Object Net.WebClient).DownloadString('x')"), "notes.txt"],
      ["script name", text("console.log(1)"), "app.js"],
      ["html with script", text("<!doctype html><html><script>alert(1)</script></html>"), "page.txt"],
      ["svg with script", text('<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>'), "logo.svg"],
      ["svg with handler", text('<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"></svg>'), "logo.svg"],
      ["binary garbage", crypto.getRandomValues(new Uint8Array(4096)), "blob.bin"],
      ["empty", new Uint8Array(), "empty.txt"],
    ];
    for (const [label, bytes, name] of cases) {
      const res = await tenant.api.form("/files/upload", form(bytes, name, "image/png"));
      expect(res.status, label).toBe(415);
      expect(res.body.code, label).toBe("UNSUPPORTED_FILE_TYPE");
      expect(res.body.detail.length, label).toBeGreaterThan(10);
    }
    // The local store's objects directory; a bucket's objects are not on this disk.
    if (!sharedDeployment()) expect(blobFiles().length).toBe(before);
    await expectNoLeftovers();
    const count = (await server.ctx.sql.one<{ n: number }>("SELECT count(*) AS n FROM files WHERE org_id = ?", [tenant.orgId]))!.n;
    expect(count).toBe(0);
  });

  test("a clean SVG is accepted as an image", async () => {
    const res = await (await server.tenant()).api.form("/files/upload", form(text('<svg xmlns="http://www.w3.org/2000/svg" width="4" height="4"><rect width="4" height="4"/></svg>'), "x.svg"));
    expect(res.status).toBe(201);
    expect(res.body.media_type).toBe("image");
  });

  test("skip_duplicates returns the existing file; without it a second copy is stored", async () => {
    const { api } = await server.tenant();
    const bytes = png(5, 5, 7);
    const first = await api.form("/files/upload", form(bytes, "one.png"));
    const dup = await api.form("/files/upload", form(bytes, "two.png", "image/png", { skip_duplicates: "true" }));
    expect(dup.status).toBe(201);
    expect(dup.body).toMatchObject({ status: "skipped", skipped: true, skipped_existing_image_id: first.body.image_id, image_id: first.body.image_id });
    const copy = await api.form("/files/upload", form(bytes, "three.png"));
    expect(copy.body.status).toBe("processing");
    expect(copy.body.image_id).not.toBe(first.body.image_id);
    // Another organization's identical file is not a duplicate.
    const other = await (await server.tenant()).api.form("/files/upload", form(bytes, "one.png", "image/png", { skip_duplicates: "true" }));
    expect(other.body.skipped).toBe(false);
  });

  test("413 above 100 MB (streamed, not buffered) and for documents above 50 MB", async () => {
    const { api } = await server.tenant();
    const big = new Uint8Array(100 * 1024 * 1024 + 1);
    big.set(png(), 0);
    const res = await api.form("/files/upload", form(big, "huge.png"));
    expect(res.status).toBe(413);
    expect(res.body.detail).toContain("/files/uploads");
    const doc = new Uint8Array(50 * 1024 * 1024 + 10).fill(0x61);
    const docRes = await api.form("/files/upload", form(doc, "long.txt"));
    expect(docRes.status).toBe(413);
    expect(docRes.body.code).toBe("FILE_TOO_LARGE");
    await expectNoLeftovers();
  });

  test("validation: missing file, bad fields, unknown folder", async () => {
    const { api } = await server.tenant();
    const noFile = new FormData();
    noFile.append("title", "x");
    expect((await api.form("/files/upload", noFile)).status).toBe(400);
    for (const [fields, field] of [
      [{ auto_describe: "maybe" }, "auto_describe"],
      [{ content_category: "spaceship" }, "content_category"],
      [{ title: "t".repeat(256) }, "title"],
      [{ folder_id: "nope" }, "folder_id"],
      [{ compliance_type: "mls" }, "compliance_standard"],
      [{ tags: Array.from({ length: 41 }, (_, i) => `t${i}`).join(",") }, "tags"],
    ] as [Record<string, string>, string][]) {
      const res = await api.form("/files/upload", form(png(), "a.png", "image/png", fields));
      expect(res.status, field).toBe(400);
      expect(res.body.detail, field).toContain(field);
    }
    const missing = await api.form("/files/upload", form(png(), "a.png", "image/png", { folder_id: crypto.randomUUID() }));
    expect(missing.status).toBe(404);
    await expectNoLeftovers();
  });

  test("permissions and authentication", async () => {
    const tenant = await server.tenant();
    expect((await (await tenant.keyWith(["view"])).form("/files/upload", form(png(), "a.png"))).status).toBe(403);
    expect((await server.anonymous().form("/files/upload", form(png(), "a.png"))).status).toBe(401);
  });
});

describe("GET /files/uploads-status/{image_id}", () => {
  test("a stored file whose processing fails ends as failed, never completed, with the reason", async () => {
    const tenant = await server.tenant();
    const { api } = tenant;
    // An MP4 header and nothing playable: stored, then refused by the video probe for good.
    const up = await api.form("/files/upload", form(mp4(), "clip.mp4"));
    const status = await terminalStatus(tenant, up.body.image_id);
    expect(status).toMatchObject({
      image_id: up.body.image_id,
      unified_status: "failed",
      is_terminal: true,
      is_stuck: false,
      component_statuses: { upload_status: "completed", processing_status: "failed" },
    });
    expect(status.error_message ?? status.processing_error ?? JSON.stringify(status)).toMatch(/corrupt|not a video/);
    expect(status.processing_ids.length).toBe(1);
    const other = await (await server.tenant()).api.get(`/files/uploads-status/${up.body.image_id}`);
    expect(other.status).toBe(404);
  });
});

describe("quota-check and check-duplicates", () => {
  test("quota follows the tier's monthly AI descriptions and counts uploads that asked for one", async () => {
    const tenant = await server.tenant({ tier: "STARTER" });
    let res = await tenant.api.get("/files/quota-check?file_count=10");
    expect(res.body).toMatchObject({ can_proceed: true, requested: 10, available: 500, monthly_limit: 500, current_usage: 0, max_batch_size: 50, max_concurrent_uploads: 20 });
    await tenant.api.form("/files/upload", form(png(3, 3, 9), "a.png"));
    await tenant.api.form("/files/upload", form(png(3, 3, 10), "b.png", "image/png", { auto_describe: "false" }));
    res = await tenant.api.get("/files/quota-check?file_count=500");
    expect(res.body).toMatchObject({ can_proceed: false, available: 499, current_usage: 1 });
    expect(res.body.message).toContain("short by 1");
    const custom = await (await server.tenant({ tier: "CUSTOM" })).api.get("/files/quota-check?file_count=100000");
    expect(custom.body).toMatchObject({ can_proceed: true, monthly_limit: -1, available: -1, max_batch_size: -1 });
    expect((await tenant.api.get("/files/quota-check")).status).toBe(400);
    expect((await tenant.api.get("/files/quota-check?file_count=-1")).status).toBe(400);
  });

  test("check-duplicates splits hashes into duplicates and unique within the org", async () => {
    const tenant = await server.tenant();
    const bytes = png(6, 6, 3);
    const up = await tenant.api.form("/files/upload", form(bytes, "x.png"));
    const fresh = sha256(new Uint8Array([1, 2, 3]));
    const res = await tenant.api.post("/files/check-duplicates", { hashes: [sha256(bytes).toUpperCase(), fresh] });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ duplicates: [sha256(bytes)], unique: [fresh], matches: [{ hash: sha256(bytes), file_id: up.body.image_id, filename: "x.png" }] });
    const other = await (await server.tenant()).api.post("/files/check-duplicates", { hashes: [sha256(bytes)] });
    expect(other.body.duplicates).toEqual([]);
    for (const body of [{ hashes: [] }, { hashes: ["abc"] }, { hashes: Array(251).fill(fresh) }, {}]) {
      expect((await tenant.api.post("/files/check-duplicates", body)).status).toBe(400);
    }
  });
});
