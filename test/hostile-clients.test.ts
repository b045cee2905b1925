/**
 * Hostile clients never take the appliance down: bodies cut off before their closing boundary,
 * connections dropped mid-upload, damaged files. Each case goes through real HTTP (raw sockets
 * where fetch cannot misbehave), and afterwards the server must still serve, its staging areas
 * must be empty, and nothing may have escaped to the process-level safety net.
 */
import { waitFor } from "./support/polling.ts";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { Document, Packer, Paragraph } from "docx";
import { rawRequest, multipartFileHead } from "./support/raw-http.ts";
import { startTestServer, type Tenant, type TestServer } from "./support/server.ts";
import { run, spawnServer, type ServerProcess } from "./support/process.ts";
import { tempDir } from "./support/server.ts";
import { readFileSync, rmSync } from "node:fs";
import { MAX_HEAD_BYTES, RUNTIME_HEAD_BYTES, RUNTIME_HEAD_FLAG } from "../src/http/head-limit.ts";
import { sharedDeployment } from "./support/suite-database.ts";

const MULTIPART_ENDPOINTS: { path: string; field: string }[] = [
  { path: "/api/v2/files/upload", field: "file" },
  { path: "/api/v2/files/upload/batch", field: "files" },
  { path: "/api/v2/files/analyze", field: "file" },
  { path: "/api/v2/files/analyze/async", field: "file" },
  { path: "/api/v2/images/analyze", field: "file" },
  { path: "/api/v2/images/analyze/async", field: "file" },
];
const BOUNDARY = "hostile-boundary-7e3";

function multipartHeaders(key: string): Record<string, string> {
  return { authorization: `Bearer ${key}`, "content-type": `multipart/form-data; boundary=${BOUNDARY}` };
}

/** Entries left in a directory (missing counts as empty). */
function entries(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

/** Waits for a condition with the suite's deadline (see support/polling.ts). */
const until = (condition: () => boolean | Promise<boolean>, what: string) => waitFor(condition, { what, intervalMs: 25 });

describe("in one server process", () => {
  let server: TestServer;
  let tenant: Tenant;
  const staging = () => entries(join(server.dataDir, "staging")).flatMap((d) => entries(join(server.dataDir, "staging", d)).map((f) => `${d}/${f}`));
  const stagingDirs = () => entries(join(server.dataDir, "staging"));

  beforeAll(async () => {
    server = await startTestServer();
    tenant = await server.tenant();
  });
  afterAll(async () => {
    await server.close();
  });

  test("a multipart body without its closing boundary is 400 MALFORMED_MULTIPART on every upload endpoint", async () => {
    for (const { path, field } of MULTIPART_ENDPOINTS) {
      for (const chunked of [false, true]) {
        for (const size of [5, 300_000]) {
          const res = await rawRequest(server.url, {
            path,
            headers: multipartHeaders(tenant.key),
            body: [`--${BOUNDARY}\r\nContent-Disposition: form-data; name="title"\r\n\r\nhalf\r\n`, multipartFileHead(BOUNDARY, field, "cut.txt", "text/plain"), "cut short ".repeat(Math.ceil(size / 10))],
            ending: "complete",
            chunked,
          });
          const label = `${path} chunked=${chunked} size=${size}`;
          expect(res.status, label).toBe(400);
          expect(JSON.parse(res.body), label).toEqual({ code: "MALFORMED_MULTIPART", detail: expect.stringContaining("closing boundary") });
        }
      }
    }
    expect(stagingDirs()).toEqual([]);
    expect((await tenant.api.get("/files")).body.total_count).toBe(0);
    expect(server.safetyNet.escapes).toBe(0);
  });

  test("a client that disconnects mid-upload leaves no staging file and no open handle behind", async () => {
    for (const { path, field } of MULTIPART_ENDPOINTS.slice(0, 3)) {
      for (const chunked of [false, true]) {
        const res = await rawRequest(server.url, {
          path,
          headers: { ...multipartHeaders(tenant.key), ...(chunked ? {} : { "content-length": String(10 * 1024 * 1024) }) },
          body: [multipartFileHead(BOUNDARY, field, "gone.txt", "text/plain"), "x".repeat(200_000)],
          ending: "drop",
          chunked,
        });
        expect(res.status).toBeNull();
      }
    }
    await until(() => stagingDirs().length === 0, `staging to empty (left: ${staging().join(", ")})`);
    // Unclosed file handles are fatal when collected: collect now rather than 13 s later.
    Bun.gc(true);
    await until(async () => (await fetch(`${server.url}/healthz`)).status === 200, "the server to answer");
    Bun.gc(true);
    expect(server.safetyNet.escapes).toBe(0);
    expect((await tenant.api.get("/files")).body.total_count).toBe(0);
    // And the same client can upload properly right after.
    const form = new FormData();
    form.append("file", new Blob(["after the storm"], { type: "text/plain" }), "after.txt");
    expect((await tenant.api.form("/files/upload", form)).status).toBe(201);
  });

  // The PUT goes to the appliance's own S3 endpoint and the check reads its blobs/tmp: with a bucket, presigned URLs are the bucket's.
  test.skipIf(sharedDeployment())("a client that disconnects mid-PUT to a presigned URL leaves the store as it was", async () => {
    const bytes = new TextEncoder().encode("presigned text body ".repeat(10_000));
    const sha = new Bun.CryptoHasher("sha256").update(bytes).digest("hex");
    const created = await tenant.api.post("/files/uploads", { filename: "notes.txt", content_type: "text/plain", size_bytes: bytes.byteLength, claimed_file_hash: sha });
    expect(created.status).toBe(201);
    const url = new URL(created.body.presigned_url);
    const res = await rawRequest(server.url, {
      method: "PUT",
      path: url.pathname + url.search,
      headers: { ...created.body.headers, "content-length": String(bytes.byteLength) },
      body: ["presigned text body ".repeat(1000)],
      ending: "drop",
    });
    expect(res.status).toBeNull();
    await until(() => entries(join(server.dataDir, "blobs", "tmp")).length === 0, "the store's temporary files to go");
    Bun.gc(true);
    const status = await tenant.api.get(`/files/uploads/${created.body.upload_id}`);
    expect(status.body.status).toBe("PENDING");
    // The intent still works with the whole body.
    const put = await fetch(created.body.presigned_url, { method: "PUT", body: bytes, headers: created.body.headers });
    expect(put.status).toBe(200);
    expect((await tenant.api.post(`/files/uploads/${created.body.upload_id}/complete`, {})).status).toBe(200);
    expect(server.safetyNet.escapes).toBe(0);
  });

  test("damaged DOCX files are refused or stored, never a 500", async () => {
    const doc = new Document({ sections: [{ children: Array.from({ length: 40 }, (_, i) => new Paragraph(`Paragraph ${i}: the quarterly figures in words.`)) }] });
    const original = new Uint8Array(await Packer.toBuffer(doc));
    let seed = 7;
    const random = () => (seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32;
    const statuses = new Map<number, number>();
    for (let i = 0; i < 60; i++) {
      let bytes = original.slice();
      if (i % 3 === 0) for (let k = 0; k < 8; k++) bytes[Math.floor(random() * bytes.length)]! ^= 1 << Math.floor(random() * 8);
      if (i % 3 === 1) {
        const at = Math.floor(random() * bytes.length);
        bytes.fill(0, at, at + 1 + Math.floor(random() * 200));
      }
      if (i % 3 === 2) {
        const at = Math.floor(random() * bytes.length);
        const block = bytes.slice(at, at + 1 + Math.floor(random() * 400));
        bytes = new Uint8Array([...bytes.subarray(0, at), ...block, ...bytes.subarray(at)]);
      }
      const form = new FormData();
      form.append("file", new Blob([bytes]), `mutant-${i}.docx`);
      const res = await tenant.api.form("/files/upload", form);
      statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
      expect([201, 415], `mutant ${i}: ${JSON.stringify(res.body)}`).toContain(res.status);
      if (res.status === 415) expect(res.body.detail).toMatch(/damaged|unsupported|unrecognized|not accepted/);
    }
    // The mutations are strong enough to damage some archives beyond reading.
    expect(statuses.get(415)).toBeGreaterThan(0);
    expect(server.safetyNet.escapes).toBe(0);
  });
});

describe("as its own process", () => {
  const dataDir = tempDir("mediabox-hostile-");
  const MAIN = join(import.meta.dir, "..", "src", "main.ts");
  let server: ServerProcess | null = null;

  afterAll(async () => {
    await server?.stop("SIGKILL");
    rmSync(dataDir, { recursive: true, force: true });
  });

  test("the server survives every hostile upload and keeps serving", async () => {
    const cli = (...args: string[]) => run([process.execPath, MAIN, ...args, "--data-dir", dataDir]);
    expect((await cli("orgs", "create", "Hostile", "--tier", "ENTERPRISE")).exitCode).toBe(0);
    const key = (await cli("keys", "create", "--org", "Hostile")).stdout.trim();
    server = await spawnServer([process.execPath, MAIN, "serve", "--data-dir", dataDir]);
    for (const { path, field } of MULTIPART_ENDPOINTS) {
      const truncated = await rawRequest(server.url, {
        path,
        headers: multipartHeaders(key),
        body: [multipartFileHead(BOUNDARY, field, "cut.txt", "text/plain"), "cut short"],
        ending: "complete",
        chunked: true,
      });
      expect(truncated.status, path).toBe(400);
      await rawRequest(server.url, {
        path,
        headers: { ...multipartHeaders(key), "content-length": String(1024 * 1024) },
        body: [multipartFileHead(BOUNDARY, field, "gone.txt", "text/plain"), "y".repeat(100_000)],
        ending: "drop",
      });
    }
    await until(() => entries(join(dataDir, "staging")).length === 0, "staging to empty");
    const health = await fetch(`${server.url}/healthz`);
    expect(health.status).toBe(200);
    expect(server.proc.exitCode).toBeNull();
    const files = await fetch(`${server.url}/api/v2/files`, { headers: { authorization: `Bearer ${key}` } });
    expect(files.status).toBe(200);
  });
});

test("oversized request heads get the JSON 431 from a server started as npm start starts it", async () => {
  const scripts = (JSON.parse(readFileSync(join(import.meta.dir, "..", "package.json"), "utf8")) as { scripts: Record<string, string> }).scripts;
  expect(scripts.start).toContain(`bun ${RUNTIME_HEAD_FLAG} src/main.ts serve`);
  expect(scripts.mediabox).toContain(`bun ${RUNTIME_HEAD_FLAG} src/main.ts`);
  const dataDir = tempDir("mediabox-heads-");
  const server = await spawnServer([process.execPath, RUNTIME_HEAD_FLAG, join(import.meta.dir, "..", "src", "main.ts"), "serve", "--data-dir", dataDir]);
  try {
    const get = (path: string, headers: Record<string, string> = {}) => rawRequest(server.url, { method: "GET", path, headers, body: [], ending: "complete" });
    const longQuery = await get(`/api/v2/files?search=${"q".repeat(MAX_HEAD_BYTES)}`, { authorization: "Bearer mbx_whatever" });
    expect(longQuery.status).toBe(431);
    expect(JSON.parse(longQuery.body)).toEqual({ code: "HEADERS_TOO_LARGE", detail: expect.stringContaining(`over the ${MAX_HEAD_BYTES}-byte limit`) });
    const bigCookie = await get("/healthz", { cookie: `c=${"x".repeat(MAX_HEAD_BYTES)}` });
    expect(bigCookie.status).toBe(431);
    expect(JSON.parse(bigCookie.body).code).toBe("HEADERS_TOO_LARGE");
    // Just under the limit is served as before.
    expect((await get("/healthz", { cookie: `c=${"x".repeat(MAX_HEAD_BYTES - 200)}` })).status).toBe(200);
    // Heads far over the limit, up to Bun's raised one, get the envelope too (64 KiB was Bun's limit before).
    for (const size of [64 * 1024, 200 * 1024, RUNTIME_HEAD_BYTES - 1024]) {
      const big = await get("/healthz", { cookie: `c=${"x".repeat(size)}` });
      expect(big.status, `${size}-byte cookie`).toBe(431);
      expect(JSON.parse(big.body), `${size}-byte cookie`).toEqual({ code: "HEADERS_TOO_LARGE", detail: expect.stringContaining(`over the ${MAX_HEAD_BYTES}-byte limit`) });
    }
    // Past Bun's own limit Bun answers before the application: 431 without a body (README, Honest limits).
    const huge = await get("/healthz", { cookie: `c=${"x".repeat(RUNTIME_HEAD_BYTES)}` });
    expect(huge).toEqual({ status: 431, body: "" });
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
  } finally {
    await server.stop("SIGTERM");
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test("errors that escape every request are logged and the process keeps serving", async () => {
  const dataDir = tempDir("mediabox-escape-");
  try {
    const result = await run([process.execPath, join(import.meta.dir, "fixtures", "escape-server.ts")], { env: { MEDIABOX_DATA_DIR: dataDir } });
    expect(result.exitCode).toBe(0);
    expect(JSON.parse(result.stdout.trim().split("\n").at(-1)!)).toEqual({ escapes: 3, health: 200 });
    expect(result.stderr).toContain("the server keeps serving");
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});
