/**
 * Exports through real HTTP: the column registry, CSV / XLSX / DOCX files downloaded from the
 * signed URL and read back (csv-parse, exceljs, mammoth), selection by ids and folders, formula
 * neutralization, and the validation errors.
 */
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { parse } from "csv-parse/sync";
import ExcelJS from "exceljs";
import mammoth from "mammoth";
import { ManualClock } from "../src/clock.ts";
import { jobRow } from "./support/job-rows.ts";

import { waitFor } from "./support/polling.ts";
import { insertFileRow, defaultProjectOf } from "./support/rows.ts";
import { startTestServer, type Tenant, type TestServer } from "./support/server.ts";

let server: TestServer;
let owner: Tenant;
const ids: Record<"a" | "b" | "evil" | "nested" | "gone", string> = {} as never;
let folder = "";
let child = "";

beforeAll(async () => {
  server = await startTestServer();
  owner = await server.tenant();
  const project = await defaultProjectOf(server.ctx.sql, owner.orgId);
  folder = (await owner.api.post("/folders", { name: "Reports" })).body.id;
  child = (await owner.api.post("/folders", { name: "2026", parent_id: folder })).body.id;
  const seed = (fields: Parameters<typeof insertFileRow>[1]) => insertFileRow(server.ctx.sql, fields);
  ids.a = await seed({ orgId: owner.orgId, projectId: project, folderId: folder, filename: "Résumé.pdf", mediaType: "document", title: "CV", tags: ["hr", "2026"], sizeBytes: 1234, createdAt: "2026-01-01T00:00:00.000Z", uploadDescription: "A résumé" });
  ids.b = await seed({ orgId: owner.orgId, projectId: project, filename: "b.jpg", title: "Photo, with comma", tags: ["x"], createdAt: "2026-01-02T00:00:00.000Z", userDescription: "mine", uploadDescription: "ai" });
  ids.evil = await seed({ orgId: owner.orgId, projectId: project, filename: "evil.jpg", title: "=HYPERLINK(\"http://x\")", tags: ["+1", "@me"], createdAt: "2026-01-03T00:00:00.000Z" });
  ids.nested = await seed({ orgId: owner.orgId, projectId: project, folderId: child, filename: "deep.jpg", createdAt: "2026-01-04T00:00:00.000Z" });
  ids.gone = await seed({ orgId: owner.orgId, projectId: project, filename: "gone.jpg", deleted: true, createdAt: "2026-01-05T00:00:00.000Z" });
  const stranger = await server.tenant();
  await insertFileRow(server.ctx.sql, { orgId: stranger.orgId, projectId: await defaultProjectOf(server.ctx.sql, stranger.orgId), filename: "other-org.jpg" });
});
afterAll(() => server.close());

async function download(url: string): Promise<{ bytes: Uint8Array; disposition: string | null }> {
  const res = await fetch(url);
  expect(res.status).toBe(200);
  return { bytes: new Uint8Array(await res.arrayBuffer()), disposition: res.headers.get("content-disposition") };
}

describe("exports", () => {
  test("GET /files/export/columns lists the registry in groups", async () => {
    const res = await owner.api.get("/files/export/columns");
    expect(res.status).toBe(200);
    expect(Object.keys(res.body.groups)).toEqual(["basic", "descriptions", "image", "document", "video", "link", "camera"]);
    expect(res.body.groups.basic).toContainEqual({ field_key: "filename", display_name: "File name", group: "basic" });
    expect(res.body.groups.descriptions.map((c: { field_key: string }) => c.field_key)).toContain("description");
  });

  test("CSV: chosen columns and display names, every live file of the org in creation order, tags flattened, formulas neutralized", async () => {
    const res = await owner.api.post("/files/export", {
      format: "csv",
      columns: [{ field_key: "filename", display_name: "Name" }, { field_key: "title" }, { field_key: "tags" }, { field_key: "description" }, { field_key: "size_bytes" }],
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ format: "csv", record_count: 4, spreadsheet_url: null });
    const { bytes, disposition } = await download(res.body.download_url);
    expect(disposition).toContain(".csv");
    const rows = parse(Buffer.from(bytes), { bom: true }) as string[][];
    expect(rows[0]).toEqual(["Name", "Title", "Tags", "Description", "Size (bytes)"]);
    expect(rows.slice(1).map((r) => r[0])).toEqual(["Résumé.pdf", "b.jpg", "evil.jpg", "deep.jpg"]);
    expect(rows[1]).toEqual(["Résumé.pdf", "CV", "hr, 2026", "A résumé", "1234"]);
    expect(rows[2]![1]).toBe("Photo, with comma");
    expect(rows[2]![3]).toBe("mine");
    expect(rows[3]![1]).toBe("'=HYPERLINK(\"http://x\")");
    expect(rows[3]![2]).toBe("'+1, @me");
  });

  test("a document's extracted text is exported from where it is kept; other files' cells are empty", async () => {
    const text = "Work history: ten years of structural welding.";
    await server.ctx.files.textExtracted(ids.a, { text, searchText: text });
    const res = await owner.api.post("/files/export", { format: "csv", columns: [{ field_key: "filename" }, { field_key: "extracted_text" }] });
    expect(res.status).toBe(200);
    const rows = parse(Buffer.from((await download(res.body.download_url)).bytes), { bom: true }) as string[][];
    expect(rows.slice(1, 3)).toEqual([["Résumé.pdf", text], ["b.jpg", ""]]);
  });

  test("flatten_tags false keeps the tag list as JSON; file_ids selects, ignoring deleted and foreign ids", async () => {
    const res = await owner.api.post("/files/export", {
      format: "csv",
      columns: [{ field_key: "id" }, { field_key: "tags" }],
      flatten_tags: false,
      file_ids: [ids.a, ids.gone, crypto.randomUUID()],
    });
    expect(res.body.record_count).toBe(1);
    const rows = parse(Buffer.from((await download(res.body.download_url)).bytes), { bom: true }) as string[][];
    expect(rows[1]).toEqual([ids.a, '["hr","2026"]']);
  });

  test("folder_id exports the folder; include_subfolders adds its subtree", async () => {
    const only = await owner.api.post("/files/export", { format: "csv", columns: [{ field_key: "filename" }], folder_id: folder });
    expect(only.body.record_count).toBe(1);
    const tree = await owner.api.post("/files/export", { format: "csv", columns: [{ field_key: "filename" }], folder_id: folder, include_subfolders: true });
    expect(tree.body.record_count).toBe(2);
    const rows = parse(Buffer.from((await download(tree.body.download_url)).bytes), { bom: true }) as string[][];
    expect(rows.slice(1).flat()).toEqual(["Résumé.pdf", "deep.jpg"]);
    expect((await owner.api.post("/files/export", { format: "csv", columns: [{ field_key: "filename" }], folder_id: crypto.randomUUID() })).status).toBe(404);
  });

  test("XLSX opens with exceljs: named sheet, bold header, the values", async () => {
    const res = await owner.api.post("/files/export", {
      format: "xlsx",
      sheet_name: "Library",
      columns: [{ field_key: "filename" }, { field_key: "size_bytes", display_name: "Bytes" }, { field_key: "title" }],
    });
    expect(res.status).toBe(200);
    const workbook = new ExcelJS.Workbook();
    await workbook.xlsx.load(Buffer.from((await download(res.body.download_url)).bytes) as unknown as ArrayBuffer);
    const sheet = workbook.getWorksheet("Library")!;
    expect(sheet).toBeDefined();
    expect(sheet.getRow(1).values).toEqual([undefined, "File name", "Bytes", "Title"]);
    expect(sheet.getRow(1).font?.bold).toBe(true);
    expect(sheet.getRow(2).values).toEqual([undefined, "Résumé.pdf", 1234, "CV"]);
    expect(sheet.getRow(4).getCell(3).value).toBe("'=HYPERLINK(\"http://x\")");
    expect(sheet.rowCount).toBe(5);
  });

  test("DOCX opens with mammoth and contains the table's text", async () => {
    const res = await owner.api.post("/files/export", { format: "docx", columns: [{ field_key: "filename" }, { field_key: "title", display_name: "Heading" }] });
    expect(res.status).toBe(200);
    const { value } = await mammoth.extractRawText({ buffer: Buffer.from((await download(res.body.download_url)).bytes) });
    for (const text of ["Files", "File name", "Heading", "Résumé.pdf", "CV", "deep.jpg"]) expect(value).toContain(text);
  });

  test("validation: hosted_sheets, unknown columns, no columns, bad sheet names, bad format", async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ format: "hosted_sheets", columns: [{ field_key: "id" }] }, "hosted_sheets"],
      [{ format: "csv", columns: [{ field_key: "password" }] }, "field_key"],
      [{ format: "csv", columns: [] }, "columns"],
      [{ format: "xlsx", columns: [{ field_key: "id" }], sheet_name: "a/b" }, "sheet_name"],
      [{ format: "xlsx", columns: [{ field_key: "id" }], sheet_name: "x".repeat(32) }, "sheet_name"],
      [{ format: "pdf", columns: [{ field_key: "id" }] }, "format"],
      [{ columns: [{ field_key: "id" }] }, "format"],
    ];
    for (const [body, needle] of cases) {
      const res = await owner.api.post("/files/export", body);
      expect({ body, status: res.status }).toEqual({ body, status: 400 });
      expect(res.body.detail).toContain(needle);
    }
    expect((await server.anonymous().post("/files/export", { format: "csv", columns: [{ field_key: "id" }] })).status).toBe(401);
  });
});

describe("export retention", () => {
  const servers: TestServer[] = [];
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((s) => s.close()));
  });

  test("the exported file is deleted once its download URL has expired (plus a 10-minute margin)", async () => {
    const clock = new ManualClock();
    // A queue of no-op jobs: one that ran shows the runner has claimed every job due before it.
    const other = await startTestServer({ clock, queues: [{ name: "test.sentinel", concurrency: 1, handler: async () => [] }] });
    servers.push(other);
    const runnerCaughtUp = async () => {
      other.ctx.jobs.wake();
      const { id } = await other.ctx.jobs.submit({ queue: "test.sentinel" });
      await waitFor(async () => (await jobRow(other.ctx.sql, id))?.status === "completed", { what: "the job runner to run the jobs due now" });
    };
    const tenant = await other.tenant();
    await insertFileRow(other.ctx.sql, { orgId: tenant.orgId, projectId: await defaultProjectOf(other.ctx.sql, tenant.orgId), filename: "kept.jpg" });
    const res = await tenant.api.post("/files/export", { format: "csv", columns: [{ field_key: "filename" }] });
    expect(res.status).toBe(200);
    // The path is the bucket's, then the key: /s3/mediabox/orgs/... locally, /<bucket>/orgs/... on S3.
    const path = decodeURIComponent(new URL(res.body.download_url).pathname);
    const key = path.slice(path.indexOf("/orgs/") + 1);
    expect(key).toMatch(new RegExp(`^orgs/${tenant.orgId}/exports/[0-9a-f-]{36}\\.csv$`));
    expect(await other.ctx.blobs.size(key)).toBeGreaterThan(0);
    const expiry = (await other.ctx.sql.one<{ id: string }>("SELECT id FROM jobs WHERE queue = ?", ["export.expire"]))!;

    clock.advance(3600 * 1000);
    await runnerCaughtUp();
    expect((await jobRow(other.ctx.sql, expiry.id))!.status).toBe("pending"); // not due inside the margin
    expect(await other.ctx.blobs.size(key)).toBeGreaterThan(0); // still inside the margin

    clock.advance(601 * 1000);
    other.ctx.jobs.wake();
    const done = await waitFor(
      async () => {
        const row = (await jobRow(other.ctx.sql, expiry.id))!;
        return ["completed", "failed", "cancelled"].includes(row.status) ? row : null;
      },
      { what: "the export's expiry job to run" },
    );
    expect(done.status).toBe("completed");
    expect(await other.ctx.blobs.size(key)).toBeNull();
  });
});
