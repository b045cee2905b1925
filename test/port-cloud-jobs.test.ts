/**
 * Cloud import and export jobs on the data-access port (docs/scale-out.md), on SQLite and
 * PostgreSQL: an export of more than five files is queued as its runner job in the same
 * transaction as its rows, then uploads each file with provider 503s retried and counted, a file
 * whose bytes are gone failing alone (partial); an import's open job is given its runner job back
 * once at start, is cancelled (pending placeholders fail, items skipped, the runner job
 * cancelled) and cannot be cancelled twice; an import whose connection was removed fails every
 * item. The flows through real providers are tested over HTTP in cloud-jobs.test.ts and
 * cloud-crash.test.ts (SQLite). The PostgreSQL half skips, saying why, where no server binary is
 * found.
 */
import { describe, expect, test } from "bun:test";
import { ManualClock } from "../src/clock.ts";
import { cancelCloudJob, cloudExportQueue, cloudImportQueue, cloudJobView, createExport, recoverCloudJobs } from "../src/cloud/cloud-jobs.ts";
import type { CloudDeps } from "../src/cloud/deps.ts";
import type { ConnectionRow } from "../src/cloud/connections.ts";
import { ProviderError } from "../src/cloud/provider.ts";
import type { SqlClient } from "../src/db/sql-client.ts";
import { ApiError } from "../src/errors.ts";
import { FileRepository } from "../src/files/file-repository.ts";
import { JobStore } from "../src/jobs/job-store.ts";
import { JobRunner } from "../src/jobs/runner.ts";
import { Logger } from "../src/log.ts";
import { DataDir } from "../src/storage/data-dir.ts";
import { loadLocalCredentials } from "../src/storage/local-credentials.ts";
import { LocalBlobStore } from "../src/storage/local-store.ts";
import type { Principal } from "../src/auth/principal.ts";
import { portEngines, tenantRows as tenant } from "./support/port-engines.ts";
import { tempDir } from "./support/temp-dir.ts";

const { engines } = portEngines("cloudjobs");
const quiet = new Logger("error");


/** What a provider was asked to do, and how it answers: `failOnce` names files whose first upload gets a 503. */
function fakeCloud(orgId: string, options: { failOnce?: Set<string>; removed?: boolean } = {}) {
  const uploads: string[] = [];
  const connection = { id: `conn-${orgId}`, org_id: orgId, provider: "nextcloud" } as ConnectionRow;
  const failed = new Set<string>();
  const provider = {
    async upload(_access: unknown, upload: { name: string }) {
      if (options.failOnce?.has(upload.name) && !failed.has(upload.name)) {
        failed.add(upload.name);
        throw new ProviderError("unavailable", "503 from the provider", 0);
      }
      uploads.push(upload.name);
      return { id: `cloud-${upload.name}` };
    },
  };
  const cloud = {
    async connection() {
      if (options.removed) throw new ApiError("CLOUD_CONNECTION_NOT_FOUND", "gone");
      return connection;
    },
    provider: () => provider,
    withAccess: <T>(_row: ConnectionRow, call: (access: unknown, p: typeof provider) => Promise<T>) => call({}, provider),
  };
  return { cloud, uploads, connection };
}

function context(sql: SqlClient, clock: ManualClock, cloud: unknown): CloudDeps & { jobs: JobRunner } {
  const dataDir = new DataDir(tempDir("mediabox-port-cloudjobs-data-"));
  const blobs = new LocalBlobStore(dataDir.blobs, loadLocalCredentials(dataDir.localS3Secret), clock);
  const jobs = new JobRunner(new JobStore(sql), clock, quiet, { leaseMs: 60_000 });
  return { sql, clock, log: quiet, files: new FileRepository(sql, clock), jobs, blobs, dataDir, cloud } as unknown as CloudDeps & { jobs: JobRunner };
}

const principal = (orgId: string): Principal => ({ keyId: "key-1", orgId, tier: "CUSTOM", permissions: new Set() });

/** A runner job's handle as the queue's handler sees it. */
const runnerJob = (cloudJobId: string) => ({ payload: { cloudJobId }, signal: new AbortController().signal, attempt: 1, maxAttempts: 10 }) as never;

describe.each(engines)("cloud jobs on the port, on $name", ({ name, client }) => {
  test("an export of six files: queued with its rows, each uploaded once (a 503 retried and counted), a file without its bytes fails alone", async () => {
    const sql = client();
    const orgId = `org-export-${name}`;
    const projectId = await tenant(sql, orgId);
    const clock = new ManualClock(Date.UTC(2031, 6, 1));
    const { cloud, uploads } = fakeCloud(orgId, { failOnce: new Set(["f2.txt"]) });
    const ctx = context(sql, clock, cloud);
    const ids: string[] = [];
    for (let i = 0; i < 6; i++) {
      const id = crypto.randomUUID();
      const blobKey = `orgs/${orgId}/files/${id}/original`;
      ids.push(id);
      await ctx.files.create({
        id, orgId, projectId, folderId: null, filename: `f${i}.txt`, size: 5, sha256: `sha-${id}`,
        type: { mediaType: "document", mime: "text/plain", format: "txt", documentType: "txt" },
        blobKey, uploadMethod: "streaming", sessionId: null, uploadedBy: null, processingJobId: `job-${id}`,
        title: null, tags: [], storageTarget: "default", autoDescribe: false, contentCategory: "general", customSchemaId: null, description: null,
      });
      // The last file's bytes are gone from the store.
      if (i < 5) await ctx.blobs.put(blobKey, new TextEncoder().encode(`file ${i}`), "text/plain");
    }

    const answer = await createExport(ctx, principal(orgId), { connection_id: `conn-${orgId}`, image_ids: ids });
    expect(answer).toMatchObject({ is_async: true, job_status: "pending", cloud_file_ids: [] });
    const runner = await sql.one<{ id: string; queue: string; dedupe_key: string }>("SELECT j.id, j.queue, j.dedupe_key FROM jobs j JOIN cloud_jobs c ON c.runner_job_id = j.id WHERE c.id = ?", [answer.job_id]);
    expect(runner).toMatchObject({ queue: "cloud.export", dedupe_key: `cloud:${answer.job_id}` });

    await cloudExportQueue(ctx).handler(runnerJob(answer.job_id));
    expect(uploads).toEqual(["f0.txt", "f1.txt", "f2.txt", "f3.txt", "f4.txt"]);
    const view = await cloudJobView(ctx, orgId, answer.job_id);
    expect(view).toMatchObject({ type: "export", status: "partial", total_files: 6, completed_files: 5, failed_files: 1, progress_percentage: 100 });
    expect(view.cloud_file_ids).toEqual(["cloud-f0.txt", "cloud-f1.txt", "cloud-f2.txt", "cloud-f3.txt", "cloud-f4.txt", null]);
    expect(view.files.map((f) => f.attempts)).toEqual([1, 1, 2, 1, 1, 0]);
    expect(view.files[5]).toMatchObject({ status: "failed", error: expect.stringContaining("deleted before it was exported") });
    expect(view.error).toMatch(/^1 of 6 file\(s\) failed/);
    expect(view.completed_at).not.toBeNull();
    // Another organization does not see it.
    expect(await cloudJobView(ctx, `${orgId}-other`, answer.job_id).then(() => "found", (err: ApiError) => err.code)).toBe("CLOUD_JOB_NOT_FOUND");
  });

  /** An import as createImport leaves it: the job, its items and their placeholders (placement is still read on the SQLite handle). */
  async function openImport(ctx: CloudDeps, orgId: string, projectId: string, count: number): Promise<{ jobId: string; fileIds: string[] }> {
    const jobId = crypto.randomUUID();
    const fileIds = Array.from({ length: count }, () => crypto.randomUUID());
    const options = { options: { tags: [], skipDuplicates: false }, placement: { projectId, folderId: null }, providerMetadata: null };
    await ctx.sql.run(
      `INSERT INTO cloud_jobs (id, org_id, connection_id, provider, type, status, total_files, options, created_by, created_at, updated_at)
       VALUES (?, ?, ?, 'nextcloud', 'import', 'in_progress', ?, ?, 'key-1', 'x', 'x')`,
      [jobId, orgId, `conn-${orgId}`, count, JSON.stringify(options)],
    );
    for (const [index, fileId] of fileIds.entries()) {
      await ctx.sql.run("INSERT INTO cloud_job_items (job_id, item_index, cloud_file_id, name, file_id, status) VALUES (?, ?, ?, ?, ?, 'pending')", [jobId, index, `c-${index}`, `p${index}.jpg`, fileId]);
      await ctx.files.createPlaceholder({
        id: fileId, orgId, projectId, folderId: null, filename: `p${index}.jpg`, mediaType: "image", contentType: "image/jpeg",
        size: 0, tags: [], uploadedBy: null, sourceUrl: null,
      });
    }
    return { jobId, fileIds };
  }

  test("an open import gets its runner job back once at start, is cancelled with its pending placeholders failed, and not twice", async () => {
    const sql = client();
    const orgId = `org-import-${name}`;
    const projectId = await tenant(sql, orgId);
    const clock = new ManualClock(Date.UTC(2031, 6, 2));
    const ctx = context(sql, clock, fakeCloud(orgId).cloud);
    const { jobId, fileIds } = await openImport(ctx, orgId, projectId, 3);
    await sql.run("UPDATE cloud_job_items SET status = 'completed', finished_at = 'x' WHERE job_id = ? AND item_index = 0", [jobId]);

    expect(await recoverCloudJobs(ctx)).toBe(1);
    const runnerId = (await sql.one<{ runner_job_id: string }>("SELECT runner_job_id FROM cloud_jobs WHERE id = ?", [jobId]))!.runner_job_id;
    expect(runnerId).toBeString();
    // A second start (or another process starting) finds the same runner job by its dedupe key.
    expect(await recoverCloudJobs(ctx)).toBe(0);
    expect((await sql.one<{ n: number }>("SELECT count(*) AS n FROM jobs WHERE dedupe_key = ?", [`cloud:${jobId}`]))!.n).toBe(1);

    const view = await cancelCloudJob(ctx, orgId, jobId.toUpperCase());
    expect(view).toMatchObject({ status: "cancelled", error: "cancelled by request", completed_files: 1, skipped_files: 2 });
    expect(view.files.map((f) => f.status)).toEqual(["completed", "skipped", "skipped"]);
    const placeholders = await sql.all<{ id: string; processing_status: string }>(`SELECT id, processing_status FROM files WHERE id IN (?, ?)`, [fileIds[1]!, fileIds[2]!]);
    expect(placeholders.map((p) => p.processing_status)).toEqual(["failed", "failed"]);
    expect((await sql.one<{ status: string }>("SELECT status FROM jobs WHERE id = ?", [runnerId]))!.status).toBe("cancelled");
    expect(await cancelCloudJob(ctx, orgId, jobId).then(() => "cancelled again", (err: ApiError) => err.code)).toBe("JOB_FINISHED");
    // Nothing open is left to recover.
    expect(await recoverCloudJobs(ctx)).toBe(0);
  });

  test("an import whose connection was removed fails every pending item and its placeholder", async () => {
    const sql = client();
    const orgId = `org-removed-${name}`;
    const projectId = await tenant(sql, orgId);
    const ctx = context(sql, new ManualClock(Date.UTC(2031, 6, 3)), fakeCloud(orgId, { removed: true }).cloud);
    const { jobId, fileIds } = await openImport(ctx, orgId, projectId, 2);
    await cloudImportQueue(ctx).handler(runnerJob(jobId));
    const view = await cloudJobView(ctx, orgId, jobId);
    expect(view).toMatchObject({ status: "failed", failed_files: 2, error: expect.stringContaining("the cloud connection was removed") });
    for (const id of fileIds) expect((await ctx.files.byId(id))!.processing_status).toBe("failed");
  });
});
