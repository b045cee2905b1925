/**
 * The library's remaining reads on the data-access port (docs/scale-out.md), on SQLite and
 * PostgreSQL: the files an export covers (by ids, a folder, a folder with its subfolders, the
 * whole library; live files of the organization only, oldest first) and a CSV export written to
 * the store with its expiry job; a file's faces, largest first with their people; and what a
 * purge reads of a file's derived data (its variants' blobs, its chunks' vectors). The HTTP tests
 * (exports, trash, people, duplicates) stay on SQLite. The PostgreSQL half skips, saying why,
 * where no server binary is found.
 */
import { describe, expect, test } from "bun:test";
import { ManualClock } from "../src/clock.ts";
import type { SqlClient } from "../src/db/sql-client.ts";
import { FileRepository, type NewFileRecord } from "../src/files/file-repository.ts";
import { JobStore } from "../src/jobs/job-store.ts";
import { JobRunner } from "../src/jobs/runner.ts";
import type { LibraryDeps } from "../src/library/deps.ts";
import { exportFiles, exportRows } from "../src/library/exports.ts";
import { Logger } from "../src/log.ts";
import { facesOfFile } from "../src/people/people.ts";
import { purgeDerivedData } from "../src/processing/derived-data.ts";
import { DataDir } from "../src/storage/data-dir.ts";
import { loadLocalCredentials } from "../src/storage/local-credentials.ts";
import { LocalBlobStore } from "../src/storage/local-store.ts";
import { readObject } from "../src/storage/blob-store.ts";
import { portEngines, tenantRows as tenant } from "./support/port-engines.ts";
import { tempDir } from "./support/temp-dir.ts";

const { engines } = portEngines("library");
const quiet = new Logger("error");


async function folder(sql: SqlClient, orgId: string, projectId: string, name: string, parentId: string | null): Promise<string> {
  const id = crypto.randomUUID();
  await sql.run("INSERT INTO folders (id, org_id, project_id, parent_id, name, name_key, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, 'x', 'x')", [id, orgId, projectId, parentId, name, name.toLowerCase()]);
  return id;
}

function record(orgId: string, projectId: string, filename: string, folderId: string | null = null): NewFileRecord {
  const id = crypto.randomUUID();
  return {
    id, orgId, projectId, folderId, filename, size: 10, sha256: `sha-${id}`,
    type: { mediaType: "image", mime: "image/jpeg", format: "jpeg", documentType: null },
    blobKey: `orgs/${orgId}/files/${id}/original`, uploadMethod: "streaming", sessionId: null, uploadedBy: null, processingJobId: `job-${id}`,
    title: null, tags: ["=cmd", "harbor"], storageTarget: "default", autoDescribe: false, contentCategory: "general", customSchemaId: null, description: null,
  };
}

function context(sql: SqlClient, clock: ManualClock) {
  const dataDir = new DataDir(tempDir("mediabox-port-library-data-"));
  const blobs = new LocalBlobStore(dataDir.blobs, loadLocalCredentials(dataDir.localS3Secret), clock);
  const jobs = new JobRunner(new JobStore(sql), clock, quiet, { leaseMs: 60_000 });
  const kinds = { all: () => [], for: () => undefined };
  return { sql, clock, log: quiet, files: new FileRepository(sql, clock), jobs, blobs, kinds } as unknown as LibraryDeps;
}

describe.each(engines)("the library's reads on the port, on $name", ({ name, client }) => {
  test("an export covers the ids, the folder, the folder and its subfolders, or the library: live files of the organization, oldest first", async () => {
    const sql = client();
    const orgId = `org-export-${name}`;
    const projectId = await tenant(sql, orgId);
    const other = await tenant(sql, `${orgId}-other`);
    const clock = new ManualClock(Date.UTC(2031, 2, 1));
    const files = new FileRepository(sql, clock);
    const top = await folder(sql, orgId, projectId, "Trips", null);
    const sub = await folder(sql, orgId, projectId, "Lisbon", top);
    const subSub = await folder(sql, orgId, projectId, "Day 1", sub);
    const elsewhere = await folder(sql, orgId, projectId, "Work", null);
    const made: Record<string, string> = {};
    for (const [filename, folderId] of [["a.jpg", null], ["b.jpg", top], ["c.jpg", sub], ["d.jpg", subSub], ["e.jpg", elsewhere], ["gone.jpg", top]] as const) {
      const file = record(orgId, projectId, filename, folderId);
      await files.create(file);
      made[filename] = file.id;
      clock.advance(1_000);
    }
    await files.softDelete(made["gone.jpg"]!);
    const foreign = record(`${orgId}-other`, other, "x.jpg");
    await files.create(foreign);

    const names = async (request: Parameters<typeof exportRows>[2], folderId: string | null = null) => (await exportRows(sql, orgId, request, folderId)).map((r) => r.filename);
    expect(await names({})).toEqual(["a.jpg", "b.jpg", "c.jpg", "d.jpg", "e.jpg"]);
    expect(await names({}, top)).toEqual(["b.jpg"]);
    expect(await names({ include_subfolders: true }, top)).toEqual(["b.jpg", "c.jpg", "d.jpg"]);
    expect(await names({ include_subfolders: true }, sub)).toEqual(["c.jpg", "d.jpg"]);
    // Ids in any case and order, repeated; a deleted file's and another organization's are left out.
    const ids = [made["e.jpg"]!.toUpperCase(), made["a.jpg"]!, made["e.jpg"]!, made["gone.jpg"]!, foreign.id];
    expect(await names({ file_ids: ids })).toEqual(["a.jpg", "e.jpg"]);
  });

  test("a CSV export is written to the store, with its expiry job, formulas neutralized", async () => {
    const sql = client();
    const orgId = `org-csv-${name}`;
    const projectId = await tenant(sql, orgId);
    const clock = new ManualClock(Date.UTC(2031, 2, 2));
    const ctx = context(sql, clock);
    const file = record(orgId, projectId, "harbor.jpg");
    await ctx.files.create(file);
    const answer = await exportFiles(ctx, orgId, { format: "csv", columns: [{ field_key: "filename" }, { field_key: "tags", display_name: "Labels" }], flatten_tags: true }, "http://127.0.0.1:8080");
    expect(answer).toMatchObject({ record_count: 1, format: "csv", spreadsheet_url: null });
    const job = await sql.one<{ payload: string; run_at: number }>("SELECT payload, run_at FROM jobs WHERE queue = 'export.expire' AND org_id = ?", [orgId]);
    expect(job!.run_at).toBe(clock.now() + 4_200_000);
    const key = (JSON.parse(job!.payload) as { key: string }).key;
    expect(key).toStartWith(`orgs/${orgId}/exports/`);
    const csv = new TextDecoder("utf-8", { ignoreBOM: true }).decode((await readObject(ctx.blobs, key))!);
    expect(csv).toBe("\ufeffFile name,Labels\nharbor.jpg,\"'=cmd, harbor\"\n");
  });

  test("a file's faces, largest first with their people; a purge reads its variants and its chunks' vectors", async () => {
    const sql = client();
    const orgId = `org-faces-${name}`;
    const projectId = await tenant(sql, orgId);
    const clock = new ManualClock(Date.UTC(2031, 2, 3));
    const ctx = context(sql, clock);
    const file = record(orgId, projectId, "group.jpg");
    await ctx.files.create(file);
    const person = crypto.randomUUID();
    await sql.run("INSERT INTO people (id, org_id, name, hidden, created_at, updated_at) VALUES (?, ?, 'Ada', 0, 'x', 'x')", [person, orgId]);
    for (const [id, box, who] of [["face-small", [0, 0, 0.1, 0.1], null], ["face-large", [0.2, 0.2, 0.8, 0.9], person]] as const) {
      await sql.run("INSERT INTO faces (id, file_id, org_id, person_id, x_min, y_min, x_max, y_max, score, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 0.9, 'x')", [`${id}-${name}`, file.id, orgId, who, ...box]);
    }
    expect((await facesOfFile(sql, file.id)).map((f) => [f.id, f.personName, f.box.x_max])).toEqual([[`face-large-${name}`, "Ada", 0.8], [`face-small-${name}`, null, 0.1]]);
    expect(await facesOfFile(sql, crypto.randomUUID())).toEqual([]);

    const variant = `orgs/${orgId}/files/${file.id}/variants/small_256.webp`;
    await ctx.blobs.put(variant, new Uint8Array([1, 2, 3]), "image/webp");
    await sql.run("INSERT INTO image_variants (file_id, variant_type, blob_key, width, height, size_bytes, content_type, created_at) VALUES (?, 'small_256', ?, 256, 200, 3, 'image/webp', 'x')", [file.id, variant]);
    await sql.run(
      `INSERT INTO document_chunks (seq, id, file_id, org_id, chunk_index, content, page_numbers, heading_hierarchy, token_count, chunk_type, embedding_status)
       VALUES (4242, ?, ?, ?, 0, 'caption', '[]', '[]', 1, 'text', 'completed')`,
      [`chunk-${file.id}`, file.id, orgId],
    );
    const removed: [string, string[]][] = [];
    const spaces = { all: async (purpose: string) => [{ remove: async (ids: string[]) => void removed.push([purpose, ids]) }] };
    await purgeDerivedData({ ...ctx, spaces } as never, file.id);
    expect(await ctx.blobs.size(variant)).toBeNull();
    expect(removed).toEqual([["image", [file.id]], ["text", [`chunk-${file.id}`]]]);
  });
});
