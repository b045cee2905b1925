/**
 * Durability of uploads against a real kill -9 of the server process: a batch acknowledged with
 * 201 is stored in full after a restart, and a streaming upload cut off mid-body leaves nothing
 * behind. Afterwards every object in the store belongs to a file record and matches its hash,
 * and no temporary or staging file survives.
 */
import { afterAll, expect, test } from "bun:test";
import { existsSync, readdirSync, rmSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import type { SqlClient } from "../src/db/sql-client.ts";
import { withEngineDatabase } from "./support/engine-database.ts";
import { png } from "./support/fixtures.ts";
import { pollApi, waitFor } from "./support/polling.ts";
import { run, spawnServer, type ServerProcess } from "./support/process.ts";
import { ApiClient, tempDir } from "./support/server.ts";
import { engineEnvironment, sharedDeployment } from "./support/suite-database.ts";

const MAIN = join(import.meta.dir, "..", "src", "main.ts");
const dataDir = tempDir("mediabox-upload-crash-");
// A short lease so the restarted server takes the interrupted batch job over within seconds.
// The CLI and both processes use this run's engine: the data directory's SQLite file, or a PostgreSQL database.
const engineEnv = await engineEnvironment(dataDir);
const env = { ...engineEnv, MEDIABOX_DATA_DIR: dataDir, MEDIABOX_LOG_LEVEL: "info", MEDIABOX_JOB_LEASE_SECONDS: "2" };
const servers: ServerProcess[] = [];
const FILES = 80;

afterAll(async () => {
  await Promise.all(servers.map((s) => s.stop("SIGKILL")));
  rmSync(dataDir, { recursive: true, force: true });
});

const sha256Hex = (bytes: Uint8Array) => new Bun.CryptoHasher("sha256").update(bytes).digest("hex");

/** A PNG padded to `size` bytes (valid header, so it is detected as an image). */
function image(seed: number, size: number): Uint8Array {
  const head = png(8, 8, seed);
  const out = new Uint8Array(size);
  out.set(head);
  crypto.getRandomValues(out.subarray(head.byteLength, head.byteLength + 65536));
  for (let i = head.byteLength + 65536; i < size; i += 65536) out.copyWithin(i, head.byteLength, head.byteLength + Math.min(65536, size - i));
  out[size - 1] = seed;
  return out;
}

async function countFiles(sql: SqlClient): Promise<number> {
  return Number((await sql.one<{ n: number | string }>("SELECT count(*) AS n FROM files"))!.n);
}

function walk(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, withFileTypes: false })
    .map((name) => join(dir, String(name)))
    .filter((path) => statSync(path).isFile());
}

test("kill -9 during a batch loses no acknowledged file; a cut-off streaming upload leaves no half-written blob", async () => {
  const org = await run([process.execPath, MAIN, "orgs", "create", "crashco", "--tier", "ENTERPRISE", "--data-dir", dataDir], { env: engineEnv });
  expect(org.exitCode).toBe(0);
  const created = await run([process.execPath, MAIN, "keys", "create", "--org", "crashco", "--data-dir", dataDir], { env: engineEnv });
  expect(created.exitCode).toBe(0);
  const key = created.stdout.trim();
  const auth = { authorization: `Bearer ${key}` };

  const first = await spawnServer([process.execPath, MAIN, "serve"], { env });
  servers.push(first);
  // One connection for the whole test: the kill probe below polls every 2 ms.
  await withEngineDatabase(dataDir, async (sql) => {
    // 80 files: more than the inline limit, so a background job stores them after the 201.
    const files = Array.from({ length: FILES }, (_, i) => image(i + 1, 256 * 1024));
    const form = new FormData();
    files.forEach((bytes, i) => form.append("files", new File([bytes as Uint8Array<ArrayBuffer>], `photo-${i}.png`, { type: "image/png" })));
    const batch = await fetch(`${first.url}/api/v2/files/upload/batch`, { method: "POST", body: form, headers: auth });
    expect(batch.status).toBe(201);
    const { session_id: sessionId, accepted_files: accepted } = (await batch.json()) as { session_id: string; accepted_files: number };
    expect(accepted).toBe(FILES);

    // A streaming upload whose body never finishes: the server is killed while it is arriving.
    const stalled = new ReadableStream<Uint8Array>({
      start(controller) {
        const boundary = "----crash";
        controller.enqueue(new TextEncoder().encode(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="half.png"\r\nContent-Type: image/png\r\n\r\n`));
        controller.enqueue(image(99, 2 * 1024 * 1024));
        // Never closed.
      },
    });
    const cutOff = fetch(`${first.url}/api/v2/files/upload`, {
      method: "POST",
      body: stalled,
      headers: { ...auth, "content-type": "multipart/form-data; boundary=----crash" },
      duplex: "half",
    } as RequestInit).catch((err: unknown) => err);

    // Kill as soon as the background job has stored its first file (it starts 0.5 s after the response):
    // probed every 2 ms, so the kill lands mid-batch.
    await waitFor(async () => (await countFiles(sql)) > 0, { what: "the batch job to store its first file", intervalMs: 2, maxIntervalMs: 2 });
    expect(await first.stop("SIGKILL")).not.toBe(0);
    expect(await cutOff).toBeInstanceOf(Error);
    const storedBeforeKill = await countFiles(sql);
    console.log(`files stored before kill -9: ${storedBeforeKill} of ${FILES}`);
    // The kill must land mid-batch, or this test proves less than it claims.
    expect(storedBeforeKill).toBeGreaterThan(0);
    expect(storedBeforeKill).toBeLessThan(FILES);

    const second = await spawnServer([process.execPath, MAIN, "serve"], { env });
    servers.push(second);
    const finished = await pollApi<{ status: string }>(
      { api: new ApiClient(second.url, key) },
      `/files/sessions/${sessionId}/status`,
      (res) => !["processing", "pending", "uploading"].includes(res.body.status),
      { what: "the interrupted batch to finish after the restart" },
    );
    expect(finished.body.status).toBe("completed");
    const results = (await (await fetch(`${second.url}/api/v2/files/sessions/${sessionId}/results`, { headers: auth })).json()) as {
      results: Array<{ image_id: string; filename: string; status: string }>;
    };
    expect(results.results.map((r) => r.status)).toEqual(Array(FILES).fill("completed"));
    expect(await second.stop("SIGTERM")).toBe(0);

    // Every acknowledged file is stored once, with the exact bytes that were sent.
    const rows = await sql.all<{ id: string; filename: string; sha256: string; blob_key: string }>("SELECT id, filename, sha256, blob_key FROM files ORDER BY filename");
    expect(rows.map((r) => r.filename).sort()).toEqual(files.map((_, i) => `photo-${i}.png`).sort());
    for (const row of rows) {
      const index = Number(/photo-(\d+)\.png/.exec(row.filename)![1]);
      expect(row.sha256).toBe(sha256Hex(files[index]!));
    }
    // The objects read from the local blob store's directory; with a bucket they are not on this disk.
    if (!sharedDeployment()) {
      const objectsRoot = join(dataDir, "blobs", "objects");
      for (const row of rows) expect(sha256Hex(await Bun.file(join(objectsRoot, row.blob_key)).bytes())).toBe(row.sha256);
      // No object without a record (nothing of the cut-off upload), no temporary leftovers.
      const keys = walk(objectsRoot).map((path) => relative(objectsRoot, path)).sort();
      // Variants the image pipeline rendered so far are recorded objects too.
      const variantKeys = (await sql.all<{ blob_key: string }>("SELECT blob_key FROM image_variants")).map((r) => r.blob_key);
      expect(keys).toEqual([...rows.map((r) => r.blob_key), ...variantKeys].sort());
      expect(walk(join(dataDir, "blobs", "tmp"))).toEqual([]);
    }
    expect(walk(join(dataDir, "staging"))).toEqual([]);
  });
}, 180_000); // two server starts and two waits, each with a 60 s deadline of its own
