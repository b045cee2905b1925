/**
 * A media kind added by a test alone (test/support/audio-kind.ts, registered through the server's
 * `kinds` option): uploaded, detected by its content, processed by its pipeline, listed and
 * filtered, shown with its own fields, exported with its own columns and purged with what it
 * stored, through real HTTP and without a change to any module of src/. The kind brings its own
 * table (audio_facts), created before the server listens and recorded per kind.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { parse } from "csv-parse/sync";
import { ManualClock } from "../src/clock.ts";
import { purgeDeletedFiles } from "../src/library/file-edits.ts";
import { AUDIO_TABLES, audioKind, envelopeKey, wav } from "./support/audio-kind.ts";
import { migrateOwned } from "../src/db/owned-migrations.ts";
import { png } from "./support/fixtures.ts";
import { processed } from "./support/polling.ts";
import { startTestServer, type Tenant, type TestServer } from "./support/server.ts";
import { testEngine } from "./support/suite-database.ts";

let server: TestServer;
let owner: Tenant;
beforeAll(async () => {
  server = await startTestServer({ kinds: [audioKind] });
  owner = await server.tenant();
});
afterAll(() => server.close());

function form(bytes: Uint8Array, filename: string) {
  const f = new FormData();
  f.append("file", new Blob([bytes as Uint8Array<ArrayBuffer>], { type: "application/octet-stream" }), filename);
  return f;
}

async function upload(tenant: Tenant, bytes: Uint8Array, filename: string) {
  const res = await fetch(`${server.url}/api/v2/files/upload`, { method: "POST", headers: { authorization: `Bearer ${tenant.key}`, "x-forwarded-for": tenant.api.ip }, body: form(bytes, filename) });
  return { status: res.status, body: (await res.json()) as any };
}

test("a WAV file is taken by the test's kind, processed by its pipeline and shown with its fields", async () => {
  const res = await upload(owner, wav(1.5), "tone.bin");
  expect(res.status).toBe(201);
  expect(res.body).toMatchObject({ media_type: "audio", status: "processing", analysis_started: true, thumbnail_generation_started: false, document_type: null });

  const detail = await processed(owner, res.body.image_id);
  expect(detail).toMatchObject({ id: res.body.image_id, media_type: "audio", processing_status: "completed", content_type: "audio/wav", duration_seconds: 1.5, channels: 1, sample_rate: 8000 });
  const { storage, s3Endpoint, s3Bucket } = server.config;
  if (storage === "s3") {
    // Blobs in a bucket are served by the bucket: a URL signed for the deployment's own bucket, that reads the file.
    expect(detail.audio_url).toStartWith(`${s3Endpoint!.replace(/\/$/, "")}/${s3Bucket}/`);
    expect(detail.audio_url).toContain("X-Amz-Signature=");
    const served = await fetch(detail.audio_url);
    expect([served.status, served.headers.get("content-type")]).toEqual([200, "audio/wav"]);
    expect(new Uint8Array(await served.arrayBuffer())).toEqual(new Uint8Array(wav(1.5)));
  } else {
    expect(detail.audio_url).toStartWith(server.url);
  }
  // A sine at amplitude 16000 of 32768 throughout: every tenth peaks near 0.49.
  expect(detail.envelope).toHaveLength(10);
  for (const peak of detail.envelope) expect(peak).toBeCloseTo(16_000 / 32768, 2);
  // The stage runner recorded the kind's stage like any other.
  const stages = await server.ctx.sql.all("SELECT stage, status FROM file_stage_runs WHERE file_id = ?", [res.body.image_id]);
  expect(stages).toEqual([{ stage: "read", status: "completed" }]);
  // Its facts are in the table the kind brought (columns named: on PostgreSQL the table also keeps SQLite's implicit rowid).
  expect(await server.ctx.sql.one("SELECT file_id, channels, sample_rate, bits_per_sample, duration_seconds FROM audio_facts WHERE file_id = ?", [res.body.image_id])).toEqual({
    file_id: res.body.image_id, channels: 1, sample_rate: 8000, bits_per_sample: 16, duration_seconds: 1.5,
  });
});

/**
 * The tables and the declared indexes whose names start with `prefix`, from the engine's own
 * catalog (each keeps one of its own). PostgreSQL's primary-key index (`<table>_pkey`) is left out:
 * the kind declares no index of that name, and SQLite's (`sqlite_autoindex_...`) does not match.
 */
async function schemaObjects(prefix: string): Promise<{ name: string }[]> {
  const catalog =
    testEngine() === "postgres"
      ? `SELECT name FROM (
           SELECT tablename AS name FROM pg_tables WHERE schemaname = current_schema()
           UNION ALL
           SELECT c.relname FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
           WHERE NOT i.indisprimary AND c.relnamespace = current_schema()::regnamespace
         ) AS objects WHERE name LIKE ? ORDER BY name`
      : "SELECT name FROM sqlite_master WHERE name LIKE ? ORDER BY name";
  return server.ctx.sql.all<{ name: string }>(catalog, [`${prefix}%`]);
}

test("a kind's tables are made before the server listens, in order, recorded per kind, and never made again", async () => {
  const applied = () => server.ctx.sql.all("SELECT owner, version, name FROM owned_migrations ORDER BY owner, version");
  expect(await applied()).toEqual([
    { owner: "kind:audio", version: 1, name: "audio_facts" },
    { owner: "kind:audio", version: 2, name: "audio_duration_index" },
  ]);
  expect(await schemaObjects("audio_facts")).toEqual([
    { name: "audio_facts" }, { name: "audio_facts_duration" },
  ]);
  // A restart meets them applied: nothing runs again (a CREATE TABLE run twice would throw).
  await migrateOwned(server.ctx.sql, "kind:audio", AUDIO_TABLES);
  expect(await applied()).toHaveLength(2);
  // A build that knows fewer of them than the database holds refuses to run on it.
  await expect(migrateOwned(server.ctx.sql, "kind:audio", AUDIO_TABLES.slice(0, 1))).rejects.toThrow(/newer than this build understands/);
});

test("an upload intent forecasts the kind from its declared type, and the content confirms it at completion", async () => {
  const bytes = wav(0.5);
  const sha = new Bun.CryptoHasher("sha256").update(bytes).digest("hex");
  const created = await owner.api.post("/files/uploads", { filename: "memo.wav", content_type: "audio/wav", size_bytes: bytes.byteLength, claimed_file_hash: sha });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  expect(created.body.media_type).toBe("audio");
  const put = await fetch(created.body.presigned_url, { method: "PUT", body: bytes as Uint8Array<ArrayBuffer>, headers: created.body.headers });
  expect(put.status).toBe(200);
  const completed = await owner.api.post(`/files/uploads/${created.body.upload_id}/complete`, {});
  expect(completed.status, JSON.stringify(completed.body)).toBeLessThan(300);
  const detail = await processed(owner, completed.body.file_id ?? completed.body.image_id);
  expect(detail).toMatchObject({ media_type: "audio", duration_seconds: 0.5 });
  // A type no kind's hints name is refused before any byte is sent.
  const refused = await owner.api.post("/files/uploads", { filename: "song.flac", content_type: "audio/flac", size_bytes: 10, claimed_file_hash: sha });
  expect(refused.status).toBe(415);
});

test("listings filter by the kind's type and show its summary; other kinds are unchanged", async () => {
  const tenant = await server.tenant();
  const audio = (await upload(tenant, wav(0.5), "a.wav")).body.image_id;
  const image = (await upload(tenant, png(8, 8), "p.png")).body;
  expect(image.media_type).toBe("image");
  await processed(tenant, audio);

  const listed = await tenant.api.get("/files?media_types=audio");
  expect(listed.status).toBe(200);
  expect(listed.body.items.map((i: any) => i.id)).toEqual([audio]);
  expect(listed.body.items[0]).toMatchObject({ media_type: "audio", duration_seconds: 0.5, sample_rate: 8000 });
  // The summary leaves out the detail's fields.
  expect(listed.body.items[0].envelope).toBeUndefined();
  expect((await tenant.api.get("/files?media_types=image")).body.items.map((i: any) => i.id)).toEqual([image.image_id]);
  // A type no kind registers is refused by the same check as before.
  const unknown = await tenant.api.get("/files?media_types=podcast");
  expect(unknown.status).toBe(400);
  expect(unknown.body.detail).toContain("must be one of image, document, video, link, audio");
});

test("exports list the kind's columns under its type and fill them", async () => {
  const tenant = await server.tenant();
  const audio = (await upload(tenant, wav(2), "long.wav")).body.image_id;
  await processed(tenant, audio);
  const columns = await tenant.api.get("/files/export/columns");
  expect(columns.body.groups.audio).toEqual([
    { field_key: "audio_duration_seconds", display_name: "Duration (s)", group: "audio" },
    { field_key: "audio_sample_rate", display_name: "Sample rate (Hz)", group: "audio" },
  ]);
  const res = await tenant.api.post("/files/export", {
    format: "csv",
    file_ids: [audio],
    columns: [{ field_key: "filename" }, { field_key: "media_type" }, { field_key: "audio_duration_seconds" }, { field_key: "audio_sample_rate" }],
  });
  expect(res.status).toBe(200);
  const csv = Buffer.from(await (await fetch(res.body.download_url)).arrayBuffer());
  expect(parse(csv, { bom: true })).toEqual([
    ["File name", "Media type", "Duration (s)", "Sample rate (Hz)"],
    ["long.wav", "audio", "2", "8000"],
  ]);
});

test("purging a deleted file asks its kind to remove what it stored", async () => {
  const tenant = await server.tenant();
  const id = (await upload(tenant, wav(0.25), "gone.wav")).body.image_id;
  await processed(tenant, id);
  const row = (await server.ctx.files.byId(id))!;
  expect(await server.ctx.blobs.size(envelopeKey(row))).toBeGreaterThan(0);
  expect((await tenant.api.delete(`/files/${id}`)).status).toBe(200);

  const later = new ManualClock(Date.now() + 31 * 86_400_000);
  expect(await purgeDeletedFiles({ ...server.ctx, clock: later })).toBeGreaterThanOrEqual(1);
  expect(await server.ctx.files.byId(id)).toBeNull();
  expect(await server.ctx.blobs.size(envelopeKey(row))).toBeNull();
  expect(await server.ctx.blobs.size(row.blob_key!)).toBeNull();
  // The kind's own row went with the file's.
  expect(await server.ctx.sql.one("SELECT count(*) AS n FROM audio_facts WHERE file_id = ?", [id])).toEqual({ n: 0 });
});

test("the OpenAPI document describes the kind's File variant", async () => {
  const res = await fetch(`${server.url}/api/v2/openapi.json`);
  const text = await res.text();
  expect(res.status).toBe(200);
  expect(text).toContain("AudioFileSummary");
  expect(text).toContain("\"AudioFile\"");
});
