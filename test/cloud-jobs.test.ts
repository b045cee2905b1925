/**
 * Cloud import and export jobs and hosted spreadsheets, against the Drive-v3-shaped server and
 * the Nextcloud-shaped WebDAV server (webdav-server), with oidc-provider issuing the tokens.
 * Fresh servers per test, stopped after it whatever happens.
 */
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import ExcelJS from "exceljs";
import { connect, startCloudStack, type CloudStack } from "./support/cloud-setup.ts";
import { elf, pdf, png } from "./support/fixtures.ts";
import { pollApi, terminalStatus, waitFor } from "./support/polling.ts";
import { ApiClient, type Tenant } from "./support/server.ts";
import { uploadFile } from "./support/uploads.ts";

let stack: CloudStack;
beforeEach(async () => {
  stack = await startCloudStack();
});
afterEach(async () => {
  await stack.stop();
});

const TERMINAL = ["completed", "partial", "failed", "cancelled"];

async function cloudJob(tenant: Pick<Tenant, "api">, jobId: string, timeoutMs = 60_000) {
  const res = await pollApi(tenant, `/cloud-storage/jobs/${jobId}`, (r) => r.status === 200 && TERMINAL.includes(r.body.job.status), { what: `cloud job ${jobId} to finish`, timeoutMs });
  return res.body.job;
}

describe("import", () => {
  test("google_drive: placeholders at once, then each file through the ingest path; unsafe and missing files fail (partial)", async () => {
    const tenant = await stack.server.tenant();
    const { connection } = await connect(stack, tenant, "google_drive");
    const image = stack.drive.add({ name: "photo.png", mimeType: "image/png", bytes: png(8, 8, 11) });
    const report = stack.drive.add({ name: "report.pdf", mimeType: "application/pdf", bytes: pdf("Quarterly report") });
    const doc = stack.drive.add({ name: "Minutes", mimeType: "application/vnd.google-apps.document", bytes: pdf("Meeting minutes") });
    // The declared type lies: detection finds the executable and refuses it.
    const exe = stack.drive.add({ name: "cat.png", mimeType: "image/png", bytes: elf() });
    const res = await tenant.api.post("/cloud-storage/import", {
      connection_id: connection.id,
      files: [
        { id: image, name: "photo.png", mime_type: "image/png", size_bytes: 100 },
        { id: report, name: "report.pdf", mime_type: "application/pdf" },
        { id: doc, name: "Minutes", mime_type: "application/vnd.google-apps.document" },
        { id: exe, name: "cat.png", mime_type: "image/png" },
        { id: "gone", name: "gone.jpg" },
      ],
      auto_describe: false,
      tags: ["cloud", "q3"],
      provider_metadata: { project_id: "my-gcp-project", tool: "picker" },
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: "pending", total_files: 5, is_async: true });
    expect(res.body.job_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(res.body.image_ids).toHaveLength(5);
    // The placeholders exist right away.
    const placeholder = await tenant.api.get(`/files/${res.body.image_ids[0]}`);
    expect(placeholder.status).toBe(200);
    expect(placeholder.body).toMatchObject({ id: res.body.image_ids[0], filename: "photo.png", media_type: "image", tags: ["cloud", "q3"] });

    const job = await cloudJob(tenant, res.body.job_id);
    expect(job).toMatchObject({ type: "import", status: "partial", connection_id: connection.id, provider: "google_drive", total_files: 5, completed_files: 3, failed_files: 2 });
    expect(job.completed_at).not.toBeNull();
    expect(job.files.map((f: any) => [f.name, f.status])).toEqual([["photo.png", "completed"], ["report.pdf", "completed"], ["Minutes", "completed"], ["cat.png", "failed"], ["gone.jpg", "failed"]]);
    expect(job.files[3].error).toContain("unsafe");
    expect(job.files[4].error).toContain("404");

    const [photo, pdfFile, minutes, unsafe, gone] = res.body.image_ids as string[];
    expect(await terminalStatus(tenant, photo!)).toMatchObject({ unified_status: "completed" });
    const detail = (await tenant.api.get(`/files/${photo}`)).body;
    expect(detail).toMatchObject({ media_type: "image", filename: "photo.png", dimensions: { width: 8, height: 8 }, tags: expect.arrayContaining(["cloud", "q3"]) });
    const stored = (await stack.server.ctx.sql.one<{ sha256: string; size_bytes: number }>("SELECT sha256, size_bytes FROM files WHERE id = ?", [photo!]))!;
    expect(stored.sha256).toBe(new Bun.CryptoHasher("sha256").update(stack.drive.files.get(image)!.bytes!).digest("hex"));
    expect((await tenant.api.get(`/files/${pdfFile}`)).body).toMatchObject({ media_type: "document", document_type: "pdf" });
    // A native Google document arrives as its PDF export.
    expect((await tenant.api.get(`/files/${minutes}`)).body).toMatchObject({ media_type: "document", filename: "Minutes.pdf" });
    for (const id of [unsafe, gone]) {
      const status = await tenant.api.get(`/files/uploads-status/${id}`);
      expect(status.body).toMatchObject({ unified_status: "failed", is_terminal: true });
    }
    expect(stack.drive.requests.some((r) => r.includes(`/files/${doc}/export?mimeType=application%2Fpdf`))).toBe(true);
  });

  test("retries provider 429/5xx with backoff (Retry-After honoured); a file that keeps failing fails alone", async () => {
    const tenant = await stack.server.tenant();
    const { connection } = await connect(stack, tenant, "google_drive");
    const flaky = stack.drive.add({ name: "flaky.png", mimeType: "image/png", bytes: png(4, 4, 21) });
    const broken = stack.drive.add({ name: "broken.png", mimeType: "image/png", bytes: png(4, 4, 22) });
    stack.drive.faults.push({ pattern: new RegExp(`GET /drive/v3/files/${flaky}\\?alt=media`), status: 429, times: 1, retryAfter: 1 });
    stack.drive.faults.push({ pattern: new RegExp(`GET /drive/v3/files/${flaky}\\?alt=media`), status: 503, times: 1 });
    stack.drive.faults.push({ pattern: new RegExp(`GET /drive/v3/files/${broken}\\?alt=media`), status: 500, times: 100 });
    const started = Date.now();
    const res = await tenant.api.post("/cloud-storage/import", { connection_id: connection.id, files: [{ id: flaky, name: "flaky.png" }, { id: broken, name: "broken.png" }] });
    const job = await cloudJob(tenant, res.body.job_id);
    expect(job.status).toBe("partial");
    expect(job.files[0]).toMatchObject({ status: "completed", attempts: 3 });
    expect(job.files[1]).toMatchObject({ status: "failed", attempts: 4 });
    expect(job.files[1].error).toContain("500");
    expect(job.error).toContain("1 of 2 file(s) failed");
    // Retry-After 1 s, then backoff 1 s for flaky; 0.5 + 1 + 2 s for broken.
    expect(Date.now() - started).toBeGreaterThanOrEqual(4_000);
    expect(stack.drive.requests.filter((r) => r.includes(`${broken}?alt=media`)).length).toBe(4);
  });

  test("nextcloud: WebDAV import with skip_duplicates; a revoked grant fails the rest clearly", async () => {
    const tenant = await stack.server.tenant();
    mkdirSync(join(stack.nextcloud.root, "Scans"));
    writeFileSync(join(stack.nextcloud.root, "Scans", "a.png"), png(6, 6, 31));
    writeFileSync(join(stack.nextcloud.root, "Scans", "copy of a.png"), png(6, 6, 31));
    writeFileSync(join(stack.nextcloud.root, "notes.md"), "# Notes\n\nfrom the drive\n");
    const { connection } = await connect(stack, tenant, "nextcloud");
    const res = await tenant.api.post("/cloud-storage/import", {
      connection_id: connection.id,
      files: [{ id: "/Scans/a.png", name: "a.png" }, { id: "/Scans/copy of a.png", name: "copy of a.png" }, { id: "/notes.md", name: "notes.md", mime_type: "text/markdown" }],
      skip_duplicates: true,
    });
    const job = await cloudJob(tenant, res.body.job_id);
    expect(job).toMatchObject({ status: "completed", completed_files: 2, failed_files: 0, skipped_files: 1 });
    expect(job.files[1]).toMatchObject({ status: "skipped", image_id: res.body.image_ids[0] });
    expect((await tenant.api.get(`/files/${res.body.image_ids[1]}`)).status).toBe(404);
    expect((await tenant.api.get(`/files/${res.body.image_ids[2]}`)).body).toMatchObject({ media_type: "document", document_type: "md" });

    await stack.as.revokeGrantOf(stack.server.ctx.cloud.vault.decrypt((await stack.server.ctx.cloud.connection(tenant.orgId, connection.id)).access_token));
    const again = await tenant.api.post("/cloud-storage/import", { connection_id: connection.id, files: [{ id: "/Scans/a.png", name: "a.png" }, { id: "/notes.md", name: "notes.md" }] });
    const failed = await cloudJob(tenant, again.body.job_id);
    expect(failed).toMatchObject({ status: "failed", failed_files: 2 });
    expect(failed.files[1].error).toContain("connect the drive again");
  });

  test("cancel: files not yet downloaded are skipped and their placeholders fail", async () => {
    const tenant = await stack.server.tenant();
    const { connection } = await connect(stack, tenant, "google_drive");
    const slow = stack.drive.add({ name: "slow.png", mimeType: "image/png", bytes: png(4, 4, 41) });
    const later = stack.drive.add({ name: "later.png", mimeType: "image/png", bytes: png(4, 4, 42) });
    stack.drive.faults.push({ pattern: new RegExp(`${slow}\\?alt=media`), status: 503, times: 1, retryAfter: 30 });
    const res = await tenant.api.post("/cloud-storage/import", { connection_id: connection.id, files: [{ id: slow, name: "slow.png" }, { id: later, name: "later.png" }] });
    await waitFor(() => stack.drive.requests.some((r) => r.includes(`${slow}?alt=media`)), { what: "the first download attempt" });
    const cancel = await tenant.api.post(`/cloud-storage/jobs/${res.body.job_id}/cancel`);
    expect(cancel.status).toBe(200);
    expect(cancel.body.job).toMatchObject({ status: "cancelled", skipped_files: 2 });
    const runner = (id: string) => stack.server.ctx.sql.one<{ status: string }>("SELECT j.status FROM jobs j JOIN cloud_jobs c ON c.runner_job_id = j.id WHERE c.id = ?", [id]);
    await waitFor(async () => (await runner(res.body.job_id))?.status === "cancelled", { what: "the runner job to stop" });
    for (const id of res.body.image_ids) expect((await tenant.api.get(`/files/uploads-status/${id}`)).body.unified_status).toBe("failed");
    // Placeholders are files like others in listings.
    const listing = await tenant.api.get("/files");
    expect(listing.status).toBe(200);
    expect(listing.body.items.map((f: { id: string }) => f.id).sort()).toEqual([...res.body.image_ids].sort());
    expect((await tenant.api.post(`/cloud-storage/jobs/${res.body.job_id}/cancel`)).status).toBe(409);
    expect(stack.drive.requests.some((r) => r.includes(`${later}?alt=media`))).toBe(false);
    // Cancelling the runner job through the generic job route cancels the cloud job too.
    stack.drive.faults.push({ pattern: new RegExp(`${later}\\?alt=media`), status: 503, times: 1, retryAfter: 30 });
    const other = await tenant.api.post("/cloud-storage/import", { connection_id: connection.id, files: [{ id: later, name: "later.png" }] });
    await waitFor(() => stack.drive.requests.some((r) => r.includes(`${later}?alt=media`)), { what: "the other import's first attempt" });
    const runnerId = (await stack.server.ctx.sql.one<{ runner_job_id: string }>("SELECT runner_job_id FROM cloud_jobs WHERE id = ?", [other.body.job_id]))!.runner_job_id;
    expect((await tenant.api.post(`/job/${runnerId}/cancel`)).status).toBe(200);
    expect(await cloudJob(tenant, other.body.job_id)).toMatchObject({ status: "cancelled", skipped_files: 1 });
  });

  test("an import interrupted by a shutdown resumes on the next start and finishes each file once", async () => {
    const tenant = await stack.server.tenant();
    const { connection } = await connect(stack, tenant, "google_drive");
    const first = stack.drive.add({ name: "one.png", mimeType: "image/png", bytes: png(4, 4, 51) });
    const second = stack.drive.add({ name: "two.png", mimeType: "image/png", bytes: png(4, 4, 52) });
    stack.drive.faults.push({ pattern: new RegExp(`${second}\\?alt=media`), status: 503, times: 1, retryAfter: 60 });
    const res = await tenant.api.post("/cloud-storage/import", { connection_id: connection.id, files: [{ id: first, name: "one.png" }, { id: second, name: "two.png" }] });
    await waitFor(() => stack.drive.requests.some((r) => r.includes(`${second}?alt=media`)), { what: "the second file's first attempt" });
    const server = await stack.restart();
    const api = new ApiClient(server.url, tenant.key);
    const job = await cloudJob({ api }, res.body.job_id);
    expect(job).toMatchObject({ status: "completed", completed_files: 2 });
    expect(job.files[1].attempts).toBe(2);
    expect(stack.drive.requests.filter((r) => r.includes(`${first}?alt=media`)).length).toBe(1);
    expect((await api.get(`/files/${res.body.image_ids[1]}`)).body.filename).toBe("two.png");
  });

  test("validation: empty file list, unknown connection, other organization's folder", async () => {
    const tenant = await stack.server.tenant();
    const { connection } = await connect(stack, tenant, "google_drive");
    expect((await tenant.api.post("/cloud-storage/import", { connection_id: connection.id, files: [] })).status).toBe(400);
    const unknown = await tenant.api.post("/cloud-storage/import", { connection_id: crypto.randomUUID(), files: [{ id: "x", name: "x.png" }] });
    expect(unknown.body.code).toBe("CLOUD_CONNECTION_NOT_FOUND");
    const folder = await tenant.api.post("/cloud-storage/import", { connection_id: connection.id, files: [{ id: "x", name: "x.png" }], folder_id: crypto.randomUUID() });
    expect(folder.status).toBe(404);
    expect((await tenant.api.get(`/cloud-storage/jobs/${crypto.randomUUID()}`)).body.code).toBe("CLOUD_JOB_NOT_FOUND");
  });
});

describe("export", () => {
  const upload = (tenant: Tenant, bytes: Uint8Array, name: string) => uploadFile(tenant.api, bytes, name, { auto_describe: "false" });

  test("nextcloud: a few files into a new folder before the response; names never overwrite", async () => {
    const tenant = await stack.server.tenant();
    const a = await upload(tenant, png(4, 4, 61), "a.png");
    const b = await upload(tenant, pdf("exported"), "b.pdf");
    const { connection } = await connect(stack, tenant, "nextcloud");
    mkdirSync(join(stack.nextcloud.root, "Exports"));
    writeFileSync(join(stack.nextcloud.root, "Exports", "a.png"), "already here");
    const res = await tenant.api.post("/cloud-storage/export", { connection_id: connection.id, image_ids: [a, b], folder_name: "Exports" });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ job_status: "completed", is_async: false });
    // "Exports" existed, so the new folder is "Exports (2)".
    expect(res.body.cloud_file_ids).toEqual(["/Exports (2)/a.png", "/Exports (2)/b.pdf"]);
    expect(Buffer.from(readFileSync(join(stack.nextcloud.root, "Exports (2)", "a.png"))).equals(Buffer.from(png(4, 4, 61)))).toBe(true);
    expect(readFileSync(join(stack.nextcloud.root, "Exports", "a.png"), "utf8")).toBe("already here");

    const into = await tenant.api.post("/cloud-storage/export", { connection_id: connection.id, image_ids: [a], folder_id: "/Exports" });
    expect(into.body.cloud_file_ids).toEqual(["/Exports/a (2).png"]);
    const job = (await tenant.api.get(`/cloud-storage/jobs/${into.body.job_id}`)).body.job;
    expect(job).toMatchObject({ type: "export", status: "completed", completed_files: 1, cloud_file_ids: ["/Exports/a (2).png"] });

    const missing = await tenant.api.post("/cloud-storage/export", { connection_id: connection.id, image_ids: [crypto.randomUUID()] });
    expect(missing.status).toBe(404);
    expect(missing.body.code).toBe("FILE_NOT_FOUND");
  });

  test("a provider that is down during a small export hands it to the background job", async () => {
    const tenant = await stack.server.tenant();
    const a = await upload(tenant, png(4, 4, 65), "late.png");
    const { connection } = await connect(stack, tenant, "nextcloud");
    stack.nextcloud.faults.push({ pattern: /^MKCOL /, status: 503, times: 1 });
    const res = await tenant.api.post("/cloud-storage/export", { connection_id: connection.id, image_ids: [a], folder_name: "Later" });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ is_async: true, cloud_file_ids: [] });
    const job = await cloudJob(tenant, res.body.job_id);
    expect(job).toMatchObject({ status: "completed", cloud_file_ids: ["/Later/late.png"] });
    expect(existsSync(join(stack.nextcloud.root, "Later", "late.png"))).toBe(true);
  });

  test("google_drive: more than five files run as a job into a new folder; cloud ids on the job", async () => {
    const tenant = await stack.server.tenant();
    const ids: string[] = [];
    for (let i = 0; i < 6; i++) ids.push(await upload(tenant, png(4, 4, 70 + i) as Uint8Array, `img-${i}.png`));
    const { connection } = await connect(stack, tenant, "google_drive");
    stack.drive.faults.push({ pattern: /POST \/upload\/drive\/v3\/files/, status: 503, times: 1 });
    const res = await tenant.api.post("/cloud-storage/export", { connection_id: connection.id, image_ids: ids, folder_name: "From Mediabox" });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ cloud_file_ids: [], is_async: true, job_status: "pending" });
    const job = await cloudJob(tenant, res.body.job_id);
    expect(job).toMatchObject({ status: "completed", completed_files: 6 });
    const folder = [...stack.drive.files.values()].find((f) => f.name === "From Mediabox")!;
    expect(folder.mimeType).toBe("application/vnd.google-apps.folder");
    for (const [i, cloudId] of (job.cloud_file_ids as string[]).entries()) {
      const file = stack.drive.files.get(cloudId)!;
      expect(file).toMatchObject({ name: `img-${i}.png`, mimeType: "image/png", parents: [folder.id] });
      expect(file.bytes).toEqual(png(4, 4, 70 + i));
    }
    expect(job.files[0].attempts).toBe(2);
  });
});

describe("hosted_sheets export", () => {
  test("writes a Google Sheet (CSV converted) or an .xlsx in Nextcloud and answers spreadsheet_url", async () => {
    const tenant = await stack.server.tenant();
    const form = new FormData();
    form.append("file", new Blob([png(4, 4, 81) as Uint8Array<ArrayBuffer>]), "=cmd.png");
    form.append("auto_describe", "false");
    expect((await tenant.api.form("/files/upload", form)).status).toBe(201);
    const drive = await connect(stack, tenant, "google_drive");
    const body = { format: "hosted_sheets", columns: [{ field_key: "filename" }, { field_key: "media_type", display_name: "Kind" }], connection_id: drive.connection.id, title: "Library Q3" };
    const res = await tenant.api.post("/files/export", body);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ download_url: null, record_count: 1, format: "hosted_sheets" });
    const sheet = [...stack.drive.files.values()].find((f) => f.name === "Library Q3")!;
    expect(sheet.mimeType).toBe("application/vnd.google-apps.spreadsheet");
    expect(res.body.spreadsheet_url).toBe(`${stack.drive.url}/view/${sheet.id}`);
    const csv = new TextDecoder().decode(sheet.bytes!);
    expect(csv).toContain("File name,Kind");
    expect(csv).toContain("'=cmd.png,image");

    const nc = await connect(stack, tenant, "nextcloud");
    const hosted = await tenant.api.post("/files/export", { ...body, connection_id: nc.connection.id });
    expect(hosted.status).toBe(200);
    expect(hosted.body.spreadsheet_url).toStartWith(`${stack.nextcloud.url}/index.php/apps/files/`);
    const path = join(stack.nextcloud.root, "Library Q3.xlsx");
    expect(existsSync(path)).toBe(true);
    const workbook = new ExcelJS.Workbook();
    await workbook.xlsx.load(readFileSync(path) as unknown as ArrayBuffer);
    expect(workbook.worksheets[0]!.getRow(1).values).toEqual([undefined, "File name", "Kind"]);

    const none = await tenant.api.post("/files/export", { format: "hosted_sheets", columns: [{ field_key: "id" }] });
    expect(none.status).toBe(400);
    const other = await stack.server.tenant();
    const foreign = await other.api.post("/files/export", { ...body });
    expect(foreign.status).toBe(404);
    expect(foreign.body.code).toBe("CLOUD_CONNECTION_NOT_FOUND");
  });
});
