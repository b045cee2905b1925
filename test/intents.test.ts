/**
 * Upload intents through real HTTP: presigned single-shot and multipart uploads done with plain
 * HTTP PUTs (fetch and curl), confirmation, retry, completion (hash mismatch 409, missing parts
 * 422, duplicates, unsupported content), abort, idempotency, expiry and validation. The shared
 * flows run twice: against the appliance's own S3 endpoint (local disk) and against a real S3
 * server (versitygw, or s3rver where it is missing: test/support/s3-server.ts) through the S3 backend.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readdirSync, utimesSync } from "node:fs";
import { join } from "node:path";
import { ManualClock } from "../src/clock.ts";
import { completeIntent, sweepExpiredIntents } from "../src/ingest/intents.ts";
import { concat, elf, mp4, png } from "./support/fixtures.ts";
import { findVersitygw, startS3Server, type S3Fixture } from "./support/s3-server.ts";
import { startTestServer, type Tenant, type TestServer } from "./support/server.ts";
import { sharedDeployment } from "./support/suite-database.ts";

const MiB = 1024 * 1024;
const sha256Hex = (bytes: Uint8Array) => new Bun.CryptoHasher("sha256").update(bytes).digest("hex");
const hasCurl = Bun.which("curl") !== null;

/** A "video" of the given size: a real MP4 header followed by pseudo-random bytes. */
function video(size: number, seed = 1): Uint8Array {
  const head = mp4();
  const body = new Uint8Array(size - head.byteLength);
  let x = seed * 2654435761;
  for (let i = 0; i < body.length; i += 4) {
    x = (x * 1103515245 + 12345) >>> 0;
    body[i] = x & 255;
    body[i + 1] = (x >> 8) & 255;
    body[i + 2] = (x >> 16) & 255;
    body[i + 3] = (x >> 24) & 255;
  }
  return concat(head, body);
}

function intentBody(bytes: Uint8Array, extra: Record<string, unknown> = {}) {
  return { filename: "clip.mp4", content_type: "video/mp4", size_bytes: bytes.byteLength, claimed_file_hash: sha256Hex(bytes), ...extra };
}

async function putPart(url: string, bytes: Uint8Array): Promise<string> {
  const res = await fetch(url, { method: "PUT", body: bytes as Uint8Array<ArrayBuffer> });
  expect(res.status).toBe(200);
  const etag = res.headers.get("etag");
  expect(etag).toBeTruthy();
  return etag!;
}

async function putSingleShot(created: { presigned_url: string; headers: Record<string, string> }, bytes: Uint8Array): Promise<Response> {
  return fetch(created.presigned_url, { method: "PUT", body: bytes as Uint8Array<ArrayBuffer>, headers: created.headers });
}

/** Uploads all parts of a multipart intent and confirms them (etag unquoted on odd parts: both forms are accepted). */
async function uploadParts(api: Tenant["api"], created: any, bytes: Uint8Array, skip: number[] = []): Promise<void> {
  for (const part of created.part_urls) {
    if (skip.includes(part.part_number)) continue;
    const slice = bytes.subarray((part.part_number - 1) * created.part_size_bytes, part.part_number * created.part_size_bytes);
    const etag = await putPart(part.url, slice);
    const confirmed = await api.post(`/files/uploads/${created.upload_id}/parts/confirm`, {
      part_number: part.part_number,
      etag: part.part_number % 2 ? etag.replaceAll('"', "") : etag,
      size_bytes: slice.byteLength,
    });
    expect(confirmed.status).toBe(200);
  }
}

interface Backend {
  name: string;
  /** Whether the store refuses a presigned PUT whose checksum or signature is wrong (s3rver checks neither). */
  verifiesSignatures: boolean;
  /** Starts the server (and its storage); `onStop` receives each stop step as soon as there is something to stop. */
  start(onStop: (stop: () => Promise<unknown>) => void): Promise<TestServer>;
}

const backends: Backend[] = [
  {
    name: "local store (the appliance's own S3 endpoint)",
    verifiesSignatures: true,
    async start(onStop) {
      const server = await startTestServer();
      onStop(() => server.close());
      return server;
    },
  },
  {
    name: `S3 backend against ${findVersitygw() ? "versitygw" : "s3rver"}`,
    verifiesSignatures: findVersitygw() !== null,
    async start(onStop) {
      const s3: S3Fixture = await startS3Server();
      onStop(() => s3.close());
      const server = await startTestServer({ env: s3.env });
      onStop(() => server.close());
      return server;
    },
  },
];

for (const backend of backends) {
  describe(`upload intents: ${backend.name}`, () => {
    let server: TestServer;
    let owner: Tenant;
    const stops: (() => Promise<unknown>)[] = [];

    beforeAll(async () => {
      server = await backend.start((stop) => stops.push(stop));
      owner = await server.tenant();
    });
    // Whatever started, even if the start failed half-way: the server first, then its storage.
    afterAll(async () => {
      for (const stop of stops.splice(0).reverse()) await stop();
    });

    // s3rver (where versitygw is missing) checks neither; the completion's SHA-256 check still catches wrong bytes there.
    test.skipIf(!backend.verifiesSignatures)("a presigned PUT with other bytes than signed, or a tampered signature, is refused and stores nothing", async () => {
      const bytes = png(8, 8, 1);
      const created = (await owner.api.post("/files/uploads", { filename: "a.png", content_type: "image/png", size_bytes: bytes.byteLength, claimed_file_hash: sha256Hex(bytes) })).body;
      const otherBytes = await putSingleShot(created, png(8, 8, 2));
      expect(otherBytes.status).toBe(400);
      expect(await otherBytes.text()).toContain("BadDigest");
      const url = new URL(created.presigned_url);
      const signature = url.searchParams.get("X-Amz-Signature")!;
      url.searchParams.set("X-Amz-Signature", (signature[0] === "0" ? "1" : "0") + signature.slice(1));
      const tampered = await putSingleShot({ presigned_url: url.toString(), headers: created.headers }, bytes);
      expect(tampered.status).toBe(403);
      expect(await tampered.text()).toContain("SignatureDoesNotMatch");
      expect((await owner.api.get(`/files/uploads/${created.upload_id}`)).body.status).toBe("PENDING");
      expect(await server.ctx.blobs.size(created.object_key)).toBeNull();
      // The signed bytes still go through afterwards.
      expect((await putSingleShot(created, bytes)).status).toBe(200);
    });

    test("single-shot: create, PUT the bytes to the presigned URL, complete; completing again returns the same file", async () => {
      const bytes = png(32, 32, 7);
      const created = await owner.api.post("/files/uploads", {
        filename: "photo.png",
        content_type: "image/png",
        size_bytes: bytes.byteLength,
        claimed_file_hash: sha256Hex(bytes),
        title: "A photo",
        tags: ["sunset", "beach"],
      });
      expect(created.status).toBe(201);
      const body = created.body;
      expect(body).toMatchObject({ upload_mode: "single_shot", media_type: "image", method: "PUT", max_size_bytes: bytes.byteLength });
      expect(body.headers).toEqual({
        "Content-Type": "image/png",
        "x-amz-checksum-sha256": Buffer.from(sha256Hex(bytes), "hex").toString("base64"),
        "x-amz-sdk-checksum-algorithm": "SHA256",
      });
      expect(body.bucket_name).toBe(server.ctx.blobs.bucket);
      expect(Date.parse(body.expires_at)).toBeGreaterThan(Date.now());
      expect((await owner.api.get(`/files/uploads/${body.upload_id}`)).body.status).toBe("PENDING");

      expect((await putSingleShot(body, bytes)).status).toBe(200);
      const uploaded = await owner.api.get(`/files/uploads/${body.upload_id}`);
      // The spec: parts and progress are null for single_shot; confirmed_at says when the object arrived.
      expect(uploaded.body).toMatchObject({ status: "UPLOADED", total_parts: null, parts_confirmed: null, progress_percent: null, object_key: body.object_key });
      expect(Date.parse(uploaded.body.confirmed_at)).toBeGreaterThan(0);

      const done = await owner.api.post(`/files/uploads/${body.upload_id}/complete`, {});
      expect(done.status).toBe(200);
      expect(done.body).toMatchObject({
        upload_id: body.upload_id,
        media_type: "image",
        filename: "photo.png",
        object_key: body.object_key,
        size_bytes: bytes.byteLength,
        deduplicated: false,
        status: "processing",
      });
      const again = await owner.api.post(`/files/uploads/${body.upload_id}/complete`, {});
      expect(again.body).toEqual(done.body);

      const intent = await owner.api.get(`/files/uploads/${body.upload_id}`);
      expect(intent.body).toMatchObject({ status: "COMPLETED", file_id: done.body.file_id, completed_at: expect.any(String) });
      const status = await owner.api.get(`/files/uploads-status/${done.body.file_id}`);
      expect(status.status).toBe(200);
      const row = await server.ctx.sql.one("SELECT sha256, size_bytes, upload_method, title, tags FROM files WHERE id = ?", [done.body.file_id]);
      expect(row).toEqual({ sha256: sha256Hex(bytes), size_bytes: bytes.byteLength, upload_method: "presigned", title: "A photo", tags: '["sunset","beach"]' });
      expect((await server.ctx.blobs.digest(body.object_key))?.sha256).toBe(sha256Hex(bytes));
    });

    test.if(hasCurl)("single-shot upload made with curl", async () => {
      const bytes = png(16, 16, 99);
      const created = (await owner.api.post("/files/uploads", { filename: "curl.png", content_type: "image/png", size_bytes: bytes.byteLength, claimed_file_hash: sha256Hex(bytes) })).body;
      const file = join(server.dataDir, `curl-${crypto.randomUUID()}.png`);
      await Bun.write(file, bytes);
      const headerArgs = Object.entries(created.headers as Record<string, string>).flatMap(([k, v]) => ["-H", `${k}: ${v}`]);
      // Async spawn: the server answers from this same process.
      const curl = Bun.spawn(["curl", "-sS", "-o", "/dev/null", "-w", "%{http_code}", "--max-time", "60", "-X", "PUT", "--upload-file", file, ...headerArgs, created.presigned_url], { stdout: "pipe", stderr: "pipe" });
      const [code, stderr] = await Promise.all([new Response(curl.stdout).text(), new Response(curl.stderr).text(), curl.exited]);
      expect({ code, stderr }).toEqual({ code: "200", stderr: "" });
      const done = await owner.api.post(`/files/uploads/${created.upload_id}/complete`, {});
      expect(done.status).toBe(200);
      expect(done.body.media_type).toBe("image");
    });

    test("multipart: 422 names the missing part; a retried part completes the upload; the stored bytes are exact", async () => {
      const bytes = video(12 * MiB + 12345);
      const created = await owner.api.post("/files/uploads", intentBody(bytes, { upload_mode: "multipart", part_size_bytes: 5 * MiB }));
      expect(created.status).toBe(201);
      const body = created.body;
      expect(body).toMatchObject({ upload_mode: "multipart", media_type: "video", part_size_bytes: 5 * MiB, total_parts: 3 });
      expect(body.s3_upload_id).toBeTruthy();
      expect(body.part_urls.map((p: { part_number: number }) => p.part_number)).toEqual([1, 2, 3]);

      await uploadParts(owner.api, body, bytes, [2]);
      const partial = await owner.api.get(`/files/uploads/${body.upload_id}`);
      expect(partial.body).toMatchObject({ status: "PENDING", parts_confirmed: 2, total_parts: 3 });
      expect(partial.body.progress_percent).toBeCloseTo(((5 * MiB + (bytes.byteLength - 10 * MiB)) / bytes.byteLength) * 100, 0);

      const missing = await owner.api.post(`/files/uploads/${body.upload_id}/complete`, {});
      expect(missing.status).toBe(422);
      expect(missing.body.code).toBe("UPLOAD_PARTS_MISSING");
      expect(missing.body.detail).toContain("parts not confirmed: 2");

      const retry = await owner.api.post(`/files/uploads/${body.upload_id}/parts/retry`, { part_number: 2 });
      expect(retry.status).toBe(200);
      expect(retry.body).toMatchObject({ upload_id: body.upload_id, part_number: 2, expires_at: body.expires_at });
      const etag = await putPart(retry.body.url, bytes.subarray(5 * MiB, 10 * MiB));
      const confirmed = await owner.api.post(`/files/uploads/${body.upload_id}/parts/confirm`, { part_number: 2, etag, size_bytes: 5 * MiB });
      expect(confirmed.body).toEqual({ upload_id: body.upload_id, part_number: 2, parts_confirmed: 3, total_parts: 3, progress_percent: 100 });
      expect((await owner.api.get(`/files/uploads/${body.upload_id}`)).body.status).toBe("UPLOADED");

      const done = await owner.api.post(`/files/uploads/${body.upload_id}/complete`, {});
      expect(done.status).toBe(200);
      expect(done.body).toMatchObject({ media_type: "video", size_bytes: bytes.byteLength, deduplicated: false, status: "processing" });
      expect(await server.ctx.blobs.digest(body.object_key)).toEqual({ size: bytes.byteLength, sha256: sha256Hex(bytes) });
    });

    test("multipart: bytes that differ from claimed_file_hash give 409 and the upload is discarded", async () => {
      const bytes = video(6 * MiB, 2);
      const claimed = video(6 * MiB, 3);
      const created = (await owner.api.post("/files/uploads", intentBody(claimed, { upload_mode: "multipart", part_size_bytes: 5 * MiB }))).body;
      await uploadParts(owner.api, created, bytes);
      const res = await owner.api.post(`/files/uploads/${created.upload_id}/complete`, {});
      expect(res.status).toBe(409);
      expect(res.body.code).toBe("UPLOAD_HASH_MISMATCH");
      expect(res.body.detail).toContain(sha256Hex(bytes));
      const intent = await owner.api.get(`/files/uploads/${created.upload_id}`);
      expect(intent.body.status).toBe("FAILED");
      expect(intent.body.error_message).toContain("hash mismatch");
      expect(await server.ctx.blobs.size(created.object_key)).toBeNull();
      expect(await server.ctx.sql.one("SELECT count(*) AS n FROM files WHERE blob_key = ?", [created.object_key])).toEqual({ n: 0 });
      const again = await owner.api.post(`/files/uploads/${created.upload_id}/complete`, {});
      expect(again.status).toBe(409);
      expect(again.body.code).toBe("UPLOAD_STATE_CONFLICT");
    });

    test("multipart: a completion racing another process's, whose store assembled the object after this one looked, answers the file", async () => {
      const bytes = video(6 * MiB, 8);
      const created = (await owner.api.post("/files/uploads", intentBody(bytes, { upload_mode: "multipart", part_size_bytes: 5 * MiB }))).body;
      await uploadParts(owner.api, created, bytes);
      const intent = (await server.ctx.sql.one<{ object_key: string; store_upload_id: string }>("SELECT object_key, store_upload_id FROM upload_intents WHERE id = ?", [created.upload_id]))!;
      const parts = await server.ctx.sql.all<{ part_number: number; etag: string }>("SELECT part_number, etag FROM intent_parts WHERE upload_id = ? ORDER BY part_number", [created.upload_id]);
      // The other process's completion: the store assembles the object and forgets the upload.
      await server.ctx.blobs.completeMultipartUpload(intent.object_key, intent.store_upload_id, parts.map((p) => ({ partNumber: Number(p.part_number), etag: p.etag })));
      // This one looked just before: no object yet.
      const blobs = Object.create(server.ctx.blobs) as typeof server.ctx.blobs;
      let looked = false;
      blobs.size = async (key) => (key === intent.object_key && !looked ? ((looked = true), null) : server.ctx.blobs.size(key));
      const principal = { keyId: "key-race", orgId: owner.orgId, tier: "CUSTOM" as const, permissions: new Set<never>() };
      const result = await completeIntent({ ...server.ctx, blobs }, principal, created.upload_id);
      expect(looked).toBe(true);
      expect(result).toMatchObject({ deduplicated: false, mediaType: "video" });
      expect((await owner.api.get(`/files/${result.fileId}`)).status).toBe(200);
      expect(await server.ctx.sql.one("SELECT sha256 FROM files WHERE id = ?", [result.fileId])).toEqual({ sha256: sha256Hex(bytes) });
    });

    test("abort: DELETE with a reason fails the intent and drops its bytes; a second abort reports aborted false", async () => {
      const bytes = video(6 * MiB, 4);
      const created = (await owner.api.post("/files/uploads", intentBody(bytes, { upload_mode: "multipart", part_size_bytes: 5 * MiB }))).body;
      await putPart(created.part_urls[0].url, bytes.subarray(0, 5 * MiB));
      const tooLong = await owner.api.delete(`/files/uploads/${created.upload_id}?reason=${"x".repeat(256)}`);
      expect(tooLong.status).toBe(400);
      const res = await owner.api.delete(`/files/uploads/${created.upload_id}?reason=changed%20my%20mind`);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ upload_id: created.upload_id, aborted: true, reason: "changed my mind" });
      const intent = await owner.api.get(`/files/uploads/${created.upload_id}`);
      expect(intent.body).toMatchObject({ status: "FAILED", error_message: "aborted: changed my mind" });
      const complete = await owner.api.post(`/files/uploads/${created.upload_id}/complete`, {});
      expect(complete.status).toBe(409);
      expect((await owner.api.post(`/files/uploads/${created.upload_id}/parts/retry`, { part_number: 1 })).status).toBe(409);
      const again = await owner.api.delete(`/files/uploads/${created.upload_id}`);
      expect(again.body).toEqual({ upload_id: created.upload_id, aborted: false, reason: null });
    });

    test("idempotency_key: the same request returns the same intent; a different file under the key is 409", async () => {
      const bytes = video(1 * MiB, 5);
      const key = `client-retry-${crypto.randomUUID()}`;
      const first = await owner.api.post("/files/uploads", intentBody(bytes, { idempotency_key: key }));
      expect(first.status).toBe(201);
      const second = await owner.api.post("/files/uploads", intentBody(bytes, { idempotency_key: key }));
      expect(second.status).toBe(200);
      expect(second.body.upload_id).toBe(first.body.upload_id);
      expect(second.body.object_key).toBe(first.body.object_key);
      const other = await owner.api.post("/files/uploads", intentBody(video(1 * MiB, 6), { idempotency_key: key }));
      expect(other.status).toBe(409);
      expect(other.body.code).toBe("IDEMPOTENCY_KEY_REUSED");
      // Keys are per organization.
      const stranger = await server.tenant();
      const theirs = await stranger.api.post("/files/uploads", intentBody(bytes, { idempotency_key: key }));
      expect(theirs.status).toBe(201);
      expect(theirs.body.upload_id).not.toBe(first.body.upload_id);
      expect((await stranger.api.get(`/files/uploads/${first.body.upload_id}`)).status).toBe(404);
    });

    test("skip_duplicates: completing bytes the organization already has returns that file and keeps no copy", async () => {
      const bytes = png(24, 24, 42);
      const make = async (skip: boolean) => {
        const created = (await owner.api.post("/files/uploads", { filename: "dup.png", content_type: "image/png", size_bytes: bytes.byteLength, claimed_file_hash: sha256Hex(bytes), skip_duplicates: skip })).body;
        expect((await putSingleShot(created, bytes)).status).toBe(200);
        return { created, done: await owner.api.post(`/files/uploads/${created.upload_id}/complete`, {}) };
      };
      const original = await make(false);
      expect(original.done.body.deduplicated).toBe(false);
      const duplicate = await make(true);
      expect(duplicate.done.status).toBe(200);
      expect(duplicate.done.body).toMatchObject({ file_id: original.done.body.file_id, deduplicated: true, status: "completed" });
      expect(await server.ctx.blobs.size(duplicate.created.object_key)).toBeNull();
      expect(await server.ctx.blobs.size(original.created.object_key)).toBe(bytes.byteLength);
    });

    test("content decides the type at completion: an executable announced as an image is refused with 415 and removed", async () => {
      const bytes = elf();
      const created = (await owner.api.post("/files/uploads", { filename: "innocent.png", content_type: "image/png", size_bytes: bytes.byteLength, claimed_file_hash: sha256Hex(bytes) })).body;
      expect((await putSingleShot(created, bytes)).status).toBe(200);
      const res = await owner.api.post(`/files/uploads/${created.upload_id}/complete`, {});
      expect(res.status).toBe(415);
      expect(res.body.code).toBe("UNSUPPORTED_FILE_TYPE");
      expect((await owner.api.get(`/files/uploads/${created.upload_id}`)).body.status).toBe("FAILED");
      expect(await server.ctx.blobs.size(created.object_key)).toBeNull();
    });
  });
}

describe("upload intents: rules and the local store's checks", () => {
  let server: TestServer;
  let owner: Tenant;
  const clock = new ManualClock(Date.now());

  beforeAll(async () => {
    server = await startTestServer({ clock });
    owner = await server.tenant();
  });
  afterAll(() => server.close());

  const hash = "a".repeat(64);
  const base = { filename: "big.mp4", content_type: "video/mp4", claimed_file_hash: hash };

  test("the server picks the mode by size and sizes parts to stay within 10,000", async () => {
    const small = await owner.api.post("/files/uploads", { ...base, size_bytes: 100 * MiB });
    expect(small.body.upload_mode).toBe("single_shot");
    const large = await owner.api.post("/files/uploads", { ...base, size_bytes: 100 * MiB + 1 });
    expect(large.body).toMatchObject({ upload_mode: "multipart", part_size_bytes: 16 * MiB, total_parts: 7 });
    expect(large.body.part_urls).toHaveLength(7);
    const huge = await owner.api.post("/files/uploads", { ...base, size_bytes: 1024 * 1024 * MiB });
    expect(huge.status).toBe(201);
    expect(huge.body.total_parts).toBeLessThanOrEqual(10_000);
    expect(huge.body.part_size_bytes * huge.body.total_parts).toBeGreaterThanOrEqual(1024 * 1024 * MiB);
  });

  test("limits and validation answer 400/413/415 with a detail naming the field", async () => {
    const cases: Array<[Record<string, unknown>, number, string]> = [
      [{ ...base, size_bytes: 1, claimed_file_hash: undefined }, 400, "claimed_file_hash"],
      [{ ...base, size_bytes: 1, claimed_file_hash: "xyz" }, 400, "claimed_file_hash"],
      [{ ...base, size_bytes: 0 }, 400, "size_bytes"],
      [{ ...base, size_bytes: 5 * 1024 * MiB + 1, upload_mode: "single_shot" }, 400, "multipart"],
      [{ ...base, size_bytes: 5 * 1024 * 1024 * MiB + 1 }, 413, "5 TB"],
      [{ ...base, size_bytes: 50 * MiB, upload_mode: "multipart", part_size_bytes: 5 * MiB - 1 }, 400, "part_size_bytes"],
      [{ ...base, size_bytes: 10_001 * 5 * MiB, upload_mode: "multipart", part_size_bytes: 5 * MiB }, 400, "10000 parts"],
      [{ ...base, size_bytes: 10, upload_mode: "single_shot", part_size_bytes: 5 * MiB }, 400, "part_size_bytes"],
      [{ ...base, size_bytes: 10, upload_mode: "sideways" }, 400, "upload_mode"],
      [{ ...base, size_bytes: 10, tags: Array.from({ length: 21 }, (_, i) => `t${i}`) }, 400, "at most 20 tags"],
      [{ ...base, size_bytes: 10, idempotency_key: "k".repeat(129) }, 400, "idempotency_key"],
      [{ ...base, size_bytes: 10, folder_id: crypto.randomUUID() }, 404, "folder"],
      [{ ...base, size_bytes: 10, filename: "setup.exe", content_type: "application/x-msdownload" }, 415, "not a supported"],
    ];
    for (const [body, status, needle] of cases) {
      const res = await owner.api.post("/files/uploads", body);
      expect({ body, status: res.status }).toEqual({ body, status });
      expect(res.body.detail).toContain(needle);
    }
  });

  test("ids, permissions and tenancy: 400 bad id, 404 unknown or another org's, 403 without EDIT", async () => {
    const created = (await owner.api.post("/files/uploads", { ...base, size_bytes: 10 })).body;
    expect((await owner.api.get("/files/uploads/not-a-uuid")).status).toBe(400);
    const unknown = await owner.api.get(`/files/uploads/${crypto.randomUUID()}`);
    expect(unknown.status).toBe(404);
    expect(unknown.body.code).toBe("UPLOAD_NOT_FOUND");
    const stranger = await server.tenant();
    expect((await stranger.api.post(`/files/uploads/${created.upload_id}/complete`, {})).status).toBe(404);
    expect((await stranger.api.delete(`/files/uploads/${created.upload_id}`)).status).toBe(404);
    const viewer = await owner.keyWith(["view"]);
    expect((await viewer.get(`/files/uploads/${created.upload_id}`)).status).toBe(200);
    expect((await viewer.post("/files/uploads", { ...base, size_bytes: 10 })).status).toBe(403);
    expect((await viewer.post(`/files/uploads/${created.upload_id}/complete`, {})).status).toBe(403);
    expect((await server.anonymous().get(`/files/uploads/${created.upload_id}`)).status).toBe(401);
  });

  test("complete requires an empty body and an uploaded object; single-shot intents have no parts", async () => {
    const created = (await owner.api.post("/files/uploads", { ...base, size_bytes: 10 })).body;
    const withBody = await owner.api.post(`/files/uploads/${created.upload_id}/complete`, { file_hash: hash });
    expect(withBody.status).toBe(400);
    const nothing = await owner.api.post(`/files/uploads/${created.upload_id}/complete`, {});
    expect(nothing.status).toBe(409);
    expect(nothing.body.detail).toContain("PUT the file");
    const parts = await owner.api.post(`/files/uploads/${created.upload_id}/parts/confirm`, { part_number: 1, etag: "x", size_bytes: 10 });
    expect(parts.status).toBe(409);
    expect(parts.body.detail).toContain("single_shot");
  });

  test("confirm checks the part against the store: unknown part, wrong ETag, wrong size, bad part number", async () => {
    const bytes = video(11 * MiB, 8);
    const created = (await owner.api.post("/files/uploads", intentBody(bytes, { upload_mode: "multipart", part_size_bytes: 5 * MiB }))).body;
    const confirm = (body: Record<string, unknown>) => owner.api.post(`/files/uploads/${created.upload_id}/parts/confirm`, body);
    const notYet = await confirm({ part_number: 1, etag: '"abc"', size_bytes: 5 * MiB });
    expect(notYet.status).toBe(409);
    expect(notYet.body.detail).toContain("not been received");
    const etag = await putPart(created.part_urls[0].url, bytes.subarray(0, 5 * MiB));
    const wrongEtag = await confirm({ part_number: 1, etag: '"0123456789abcdef0123456789abcdef"', size_bytes: 5 * MiB });
    expect(wrongEtag.status).toBe(409);
    expect(wrongEtag.body.detail).toContain("ETag");
    expect((await confirm({ part_number: 1, etag, size_bytes: 5 * MiB - 1 })).status).toBe(400);
    expect((await confirm({ part_number: 3, etag, size_bytes: 5 * MiB })).body.detail).toContain(`${1 * MiB} bytes`);
    expect((await confirm({ part_number: 0, etag, size_bytes: 5 * MiB })).status).toBe(400);
    expect((await confirm({ part_number: 4, etag, size_bytes: 5 * MiB })).status).toBe(400);
    const ok = await confirm({ part_number: 1, etag, size_bytes: 5 * MiB });
    expect(ok.body).toMatchObject({ parts_confirmed: 1, total_parts: 3 });
  });

  test("expiry: after the TTL complete answers 410, the sweeper fails the intent and removes its staged parts, its URLs are refused", async () => {
    const bytes = video(6 * MiB, 9);
    const created = (await owner.api.post("/files/uploads", intentBody(bytes, { upload_mode: "multipart", part_size_bytes: 5 * MiB }))).body;
    await uploadParts(owner.api, created, bytes);
    // The local store stages parts in the data directory; a bucket keeps them out of sight.
    const local = !sharedDeployment();
    const staging = join(server.dataDir, "blobs", "multipart", created.s3_upload_id);
    if (local) expect(existsSync(staging)).toBe(true);

    clock.advance(server.config.uploadIntentTtlSeconds * 1000 + 1000);
    const late = await owner.api.post(`/files/uploads/${created.upload_id}/complete`, {});
    expect(late.status).toBe(410);
    expect(late.body.code).toBe("UPLOAD_EXPIRED");
    // The local endpoint judges expiry on the appliance's clock (advanced above); a bucket on its own.
    if (local) expect((await fetch(created.part_urls[0].url, { method: "PUT", body: "x" })).status).toBe(403);

    const swept = await sweepExpiredIntents(server.ctx);
    expect(swept.expired).toBeGreaterThanOrEqual(1);
    const intent = await owner.api.get(`/files/uploads/${created.upload_id}`);
    expect(intent.body.status).toBe("FAILED");
    expect(intent.body.error_message).toContain("expired");
    if (local) {
      expect(existsSync(staging)).toBe(false);
      expect(readdirSync(join(server.dataDir, "blobs", "multipart"))).not.toContain(created.s3_upload_id);
    }
  });

  // Orphaned staging is found by the local store's directory ages; a bucket expires its own uploads.
  test.skipIf(sharedDeployment())("the sweeper removes multipart staging no intent refers to once it is an hour old, and leaves young staging alone", async () => {
    const root = join(server.dataDir, "blobs", "multipart");
    const key = `orgs/${owner.orgId}/uploads/${crypto.randomUUID()}/original`;
    const layout = { partSize: 5 * MiB, totalSize: 6 * MiB };
    const old = await server.ctx.blobs.createMultipartUpload(key, "video/mp4", layout);
    const young = await server.ctx.blobs.createMultipartUpload(key, "video/mp4", layout);
    const twoHoursAgo = new Date(Date.now() - 2 * 3600 * 1000);
    utimesSync(join(root, old), twoHoursAgo, twoHoursAgo);
    const swept = await sweepExpiredIntents(server.ctx);
    expect(swept.orphans).toBe(1);
    expect(existsSync(join(root, old))).toBe(false);
    expect(existsSync(join(root, young))).toBe(true);
  });
});
