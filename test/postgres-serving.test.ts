/**
 * The appliance served from PostgreSQL (docs/scale-out.md): an `api` server and a `worker`
 * server, each with its own data directory as on two hosts, sharing one PostgreSQL database
 * (rows, jobs, vectors) and one S3 bucket. A file uploaded to the api is processed by the worker
 * and read back through the api; what the api cannot see of the worker's disk is never needed.
 * Paths still on the SQLite handle fail loudly on PostgreSQL; this file grows as they convert.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { loadConfig } from "../src/config.ts";
import { createApiKey } from "../src/auth/api-keys.ts";
import { createOrganization } from "../src/tenancy/organizations.ts";
import { startServer, type RunningServer } from "../src/server.ts";
import { openPostgres } from "../src/db/postgres-database.ts";
import type { PostgresClient } from "../src/db/postgres-client.ts";
import { systemClock } from "../src/clock.ts";
import { ApiClient } from "./support/server.ts";
import { waitFor } from "./support/polling.ts";
import { postgresOrSkip, startPostgres, type TestPostgres } from "./support/postgres.ts";
import { startS3rver, type S3Fixture } from "./support/s3rver.ts";
import { tempDir } from "./support/temp-dir.ts";

const binaries = postgresOrSkip();

describe.skipIf(!binaries)("served from PostgreSQL: an api and a worker sharing one database and one bucket", () => {
  let pg: TestPostgres;
  let s3: S3Fixture;
  let admin: PostgresClient;
  const servers: RunningServer[] = [];
  let api: RunningServer;
  let key: string;

  beforeAll(async () => {
    pg = await startPostgres(binaries!);
    s3 = await startS3rver();
    const url = await pg.createDatabase("serving");
    const env = (role: string) => ({
      MEDIABOX_PORT: "0",
      MEDIABOX_HOST: "127.0.0.1",
      MEDIABOX_DATA_DIR: tempDir(`mediabox-pg-${role}-`),
      MEDIABOX_LOG_LEVEL: "error",
      MEDIABOX_TEXT_VOCABULARY_WORDS: "0",
      MEDIABOX_LAYOUT_MODEL: "none",
      MEDIABOX_TEXT_EMBEDDING_MODEL: "use-lite-sif",
      MEDIABOX_OCR_ENGINE: "tesseract",
      MEDIABOX_DATABASE: url,
      MEDIABOX_ROLE: role,
      MEDIABOX_CLOUD_TOKEN_KEY: Buffer.alloc(32, 9).toString("base64"),
      ...s3.env,
    });
    api = await startServer(loadConfig({}, env("api")));
    servers.push(api);
    servers.push(await startServer(loadConfig({}, env("worker"))));
    admin = await openPostgres(url, { max: 1 });
    await createOrganization(admin, systemClock, "Shared", "PROFESSIONAL");
    key = (await createApiKey(admin, systemClock, "Shared")).key;
  }, 180_000);

  afterAll(async () => {
    for (const server of servers) await server.stop();
    await admin?.close();
    await s3?.close();
    await pg?.stop();
  });

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
});
