/**
 * A two-process deployment for tests of what crosses processes: an `api` server and a `worker`
 * server, each with its own data directory as on two hosts, over one throwaway PostgreSQL
 * database and one bucket (test/support/s3-server.ts), one sealing key, and an organization
 * with an API key made through the database. `stop()` stops whatever was started.
 */
import { createApiKey } from "../../src/auth/api-keys.ts";
import { systemClock } from "../../src/clock.ts";
import { loadConfig } from "../../src/config.ts";
import type { PostgresClient } from "../../src/db/postgres-client.ts";
import { openPostgres } from "../../src/db/postgres-database.ts";
import { startServer, type RunningServer } from "../../src/server.ts";
import { createOrganization } from "../../src/tenancy/organizations.ts";
import { startPostgres, type PostgresBinaries, type TestPostgres } from "./postgres.ts";
import { startS3Server, type S3Fixture } from "./s3-server.ts";
import { tempDir } from "./temp-dir.ts";

export interface TwoProcesses {
  api: RunningServer;
  worker: RunningServer;
  /** A connection of the test's own to the shared database. */
  admin: PostgresClient;
  orgId: string;
  key: string;
  stop(): Promise<void>;
}

export async function startTwoProcesses(binaries: PostgresBinaries, name: string): Promise<TwoProcesses> {
  let pg: TestPostgres | null = null;
  let s3: S3Fixture | null = null;
  let admin: PostgresClient | null = null;
  const servers: RunningServer[] = [];
  const stop = async () => {
    for (const server of servers.splice(0).reverse()) await server.stop();
    await admin?.close();
    await s3?.close();
    await pg?.stop();
  };
  try {
    pg = await startPostgres(binaries);
    s3 = await startS3Server();
    const url = await pg.createDatabase(name);
    const env = (role: string) => ({
      MEDIABOX_PORT: "0",
      MEDIABOX_HOST: "127.0.0.1",
      MEDIABOX_DATA_DIR: tempDir(`mediabox-${name}-${role}-`),
      MEDIABOX_LOG_LEVEL: "error",
      MEDIABOX_TEXT_VOCABULARY_WORDS: "0",
      MEDIABOX_LAYOUT_MODEL: "none",
      MEDIABOX_TEXT_EMBEDDING_MODEL: "use-lite-sif",
      MEDIABOX_OCR_ENGINE: "tesseract",
      MEDIABOX_DATABASE: url,
      MEDIABOX_ROLE: role,
      MEDIABOX_CLOUD_TOKEN_KEY: Buffer.alloc(32, 9).toString("base64"),
      ...s3!.env,
    });
    const api = await startServer(loadConfig({}, env("api")));
    servers.push(api);
    const worker = await startServer(loadConfig({}, env("worker")));
    servers.push(worker);
    admin = await openPostgres(url, { max: 2 });
    const orgId = (await createOrganization(admin, systemClock, "Shared", "PROFESSIONAL")).id;
    const key = (await createApiKey(admin, systemClock, "Shared")).key;
    return { api, worker, admin, orgId, key, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
