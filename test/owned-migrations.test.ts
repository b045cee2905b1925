/**
 * A media kind's own tables (db/owned-migrations.ts) on both databases: the kind's SQLite
 * statements made on SQLite and, translated, on PostgreSQL, in order, recorded per owner, never
 * made twice (two processes starting at once apply them once), and refused when the database is
 * ahead of the build.
 */
import { describe, expect, test } from "bun:test";
import { ManualClock } from "../src/clock.ts";
import { migrateOwned } from "../src/db/owned-migrations.ts";
import { createOrganization } from "../src/tenancy/organizations.ts";
import { defaultProjectId } from "../src/tenancy/projects.ts";
import { AUDIO_TABLES } from "./support/audio-kind.ts";
import { portEngines } from "./support/port-engines.ts";

const { engines } = portEngines("owned_migrations");

describe.each(engines)("a kind's own tables on $name", ({ name, client }) => {
  test("made in order and recorded; applied once when two start together; a database ahead of the build is refused", async () => {
    const db = client();
    const owner = `kind:audio-${name}`;
    // Two processes starting at once: each runs the migrations, one makes the tables.
    await Promise.all([migrateOwned(db, owner, AUDIO_TABLES), migrateOwned(db, owner, AUDIO_TABLES)]);
    expect(await db.all("SELECT owner, version, name FROM owned_migrations WHERE owner = ? ORDER BY version", [owner])).toEqual([
      { owner, version: 1, name: "audio_facts" },
      { owner, version: 2, name: "audio_duration_index" },
    ]);
    // The table works as the kind uses it: a row of a file, removed with it.
    const org = await createOrganization(db, new ManualClock(Date.parse("2026-12-02T00:00:00Z")), `Audio-${name}`, "PROFESSIONAL");
    const fileId = crypto.randomUUID();
    await db.run("INSERT INTO files (id, org_id, project_id, media_type, filename, created_at, updated_at) VALUES (?, ?, ?, 'audio', 'memo.wav', 'x', 'x')", [
      fileId, org.id, await defaultProjectId(db, org.id),
    ]);
    await db.run("INSERT INTO audio_facts (file_id, channels, sample_rate, bits_per_sample, duration_seconds) VALUES (?, 1, 8000, 16, 1.5)", [fileId]);
    expect(await db.all("SELECT channels, sample_rate, duration_seconds FROM audio_facts WHERE duration_seconds > ?", [1])).toEqual([{ channels: 1, sample_rate: 8000, duration_seconds: 1.5 }]);
    await db.run("DELETE FROM files WHERE id = ?", [fileId]);
    expect(await db.all("SELECT file_id FROM audio_facts")).toEqual([]);
    // A restart meets them applied; a build that knows fewer refuses to run on the database.
    await migrateOwned(db, owner, AUDIO_TABLES);
    expect(await db.all("SELECT version FROM owned_migrations WHERE owner = ?", [owner])).toHaveLength(2);
    await expect(migrateOwned(db, owner, AUDIO_TABLES.slice(0, 1))).rejects.toThrow(/newer than this build understands/);
  });

  test("a kind's trigger is made too (on PostgreSQL a function whose body holds semicolons)", async () => {
    const db = client();
    await migrateOwned(db, `kind:tally-${name}`, [
      {
        version: 1,
        name: "tally",
        sql: `CREATE TABLE tally_items (id TEXT PRIMARY KEY);
CREATE TABLE tally_totals (items INTEGER NOT NULL, last_id TEXT);
INSERT INTO tally_totals (items) VALUES (0);
CREATE TRIGGER tally_items_insert AFTER INSERT ON tally_items BEGIN
  UPDATE tally_totals SET items = items + 1;
  UPDATE tally_totals SET last_id = new.id;
END`,
      },
    ]);
    await db.run("INSERT INTO tally_items (id) VALUES ('a')");
    await db.run("INSERT INTO tally_items (id) VALUES ('b')");
    expect(await db.all("SELECT items, last_id FROM tally_totals")).toEqual([{ items: 2, last_id: "b" }]);
  });
});
