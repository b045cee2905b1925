/**
 * The support feature is on the data-access port (docs/scale-out.md: the first module converted):
 * its messages are stored, listed newest first and marked mailed the same way on SQLite and on
 * PostgreSQL. The HTTP side (POST /support/contact, the CLI's list, the mailed copy) is tested in
 * accounts.test.ts. The PostgreSQL half skips, saying why, where no server binary is found.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { ManualClock } from "../src/clock.ts";
import { openDatabase, type Database } from "../src/db/database.ts";
import { openPostgres } from "../src/db/postgres-database.ts";
import type { PostgresClient } from "../src/db/postgres-client.ts";
import type { SqlClient } from "../src/db/sql-client.ts";
import { SqliteClient } from "../src/db/sqlite-client.ts";
import { listSupportMessages, storeSupportMessage } from "../src/support/support.ts";
import { postgresOrSkip, startPostgres, type TestPostgres } from "./support/postgres.ts";
import { tempDir } from "./support/temp-dir.ts";

const binaries = postgresOrSkip();
let sqliteDb: Database;
let pg: TestPostgres | null = null;
let postgres: PostgresClient | null = null;

beforeAll(async () => {
  sqliteDb = openDatabase(join(tempDir("mediabox-support-"), "support.db"));
  if (binaries) {
    pg = await startPostgres(binaries);
    postgres = await openPostgres(await pg.createDatabase("support"), { max: 2 });
  }
}, 120_000);

afterAll(async () => {
  await postgres?.close();
  await pg?.stop();
  sqliteDb?.close();
});

const engines: { name: string; client: () => SqlClient }[] = [{ name: "sqlite", client: () => new SqliteClient(sqliteDb) }];
if (binaries) engines.push({ name: "postgres", client: () => postgres! });

describe.each(engines)("support messages on $name", ({ client }) => {
  test("stored trimmed, listed newest first, marked once mailed", async () => {
    const db = client();
    const clock = new ManualClock(Date.UTC(2031, 4, 1));
    const first = await storeSupportMessage(db, clock, { email: " a@example.com ", name: "  ", subject: " Hi ", message: "first", userId: null, orgId: null, ip: "127.0.0.1" });
    clock.advance(1_000);
    const second = await storeSupportMessage(db, clock, { email: "b@example.com", name: "Bee", subject: "Again", message: "second", userId: null, orgId: null, ip: null });
    await db.run("UPDATE support_messages SET mailed_at = ? WHERE id = ?", ["2031-05-01T00:00:02.000Z", first.id]);
    const listed = await listSupportMessages(db);
    expect(listed.map((m) => [m.id, m.email, m.name, m.subject, m.mailed_at])).toEqual([
      [second.id, "b@example.com", "Bee", "Again", null],
      [first.id, "a@example.com", null, "Hi", "2031-05-01T00:00:02.000Z"],
    ]);
    expect(await listSupportMessages(db, 1)).toHaveLength(1);
  });
});
