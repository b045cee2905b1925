/**
 * The modules converted to the data-access port (docs/scale-out.md) behave the same on SQLite and
 * on PostgreSQL: support messages (stored, listed newest first, marked mailed), upload telemetry
 * (stored with its size limit, pruned after 30 days), the pruning of finished jobs, and payment
 * events setting an organization's tier (once per event id, never undone by an older event). Their HTTP
 * sides are tested where they were (accounts.test.ts, telemetry's and the jobs' tests). The
 * PostgreSQL half skips, saying why, where no server binary is found.
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
import { logUploadEvent, pruneUploadEvents } from "../src/telemetry/upload-events.ts";
import { pruneFinishedJobs } from "../src/jobs/queue.ts";
import { JobStore } from "../src/jobs/job-store.ts";
import { applyEvent, parseEvent } from "../src/payments/webhooks.ts";
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

describe.each(engines)("modules on the port, on $name", ({ client }) => {
  test("support messages: stored trimmed, listed newest first, marked once mailed", async () => {
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

  test("upload telemetry: stored with its data, refused past 10 KB, pruned after 30 days", async () => {
    const db = client();
    const clock = new ManualClock(Date.UTC(2031, 4, 1));
    const logged = await logUploadEvent(db, clock, { event_type: "upload_failed", message: "network", data: { attempt: 2 }, file_index: 3 }, { orgId: null, ip: "10.0.0.1" });
    expect(logged).toEqual({ status: "logged", timestamp: "2031-05-01T00:00:00.000Z" });
    await expect(logUploadEvent(db, clock, { event_type: "x", message: "y", data: { blob: "z".repeat(11_000) } }, { orgId: null, ip: "10.0.0.1" })).rejects.toThrow(/at most 10240 bytes/);
    const row = await db.one<{ data: string; file_index: number }>("SELECT data, file_index FROM upload_events WHERE event_type = 'upload_failed'");
    expect([JSON.parse(row!.data), row!.file_index]).toEqual([{ attempt: 2 }, 3]);
    clock.advance(29 * 86_400_000);
    expect(await pruneUploadEvents(db, clock)).toBe(0);
    clock.advance(2 * 86_400_000);
    expect(await pruneUploadEvents(db, clock)).toBe(1);
  });

  test("finished jobs are pruned after the retention; pending and recent ones stay", async () => {
    const db = client();
    const store = new JobStore(db);
    const now = Date.UTC(2031, 4, 20);
    const old = await store.enqueue({ queue: "t.prune", payload: {} }, now);
    const recent = await store.enqueue({ queue: "t.prune", payload: {} }, now);
    const pending = await store.enqueue({ queue: "t.prune", payload: {} }, now);
    await db.run("UPDATE jobs SET status = 'completed', finished_at = ? WHERE id = ?", ["2031-05-01T00:00:00.000Z", old.id]);
    await db.run("UPDATE jobs SET status = 'completed', finished_at = ? WHERE id = ?", ["2031-05-19T00:00:00.000Z", recent.id]);
    expect(await pruneFinishedJobs(db, new ManualClock(now), 14 * 86_400_000)).toBe(1);
    expect((await db.all<{ id: string }>("SELECT id FROM jobs WHERE queue = 't.prune' ORDER BY id")).map((r) => r.id).sort()).toEqual([recent.id, pending.id].sort());
  });

  test("payment events: a subscription sets the tier once per event id; an older event is stale; unknown organizations and other types are recorded only", async () => {
    const db = client();
    const clock = new ManualClock(Date.UTC(2031, 4, 1));
    await db.run("INSERT INTO organizations (id, name, name_key, tier, created_at) VALUES ('org-pay', 'Pay Co', 'pay co', 'STARTER', 'x') ON CONFLICT DO NOTHING");
    const event = (id: string, created: number, data: Record<string, unknown>, type = "subscription.updated") => {
      const raw = JSON.stringify({ id, type, created, data: { organization_id: "org-pay", ...data } });
      return applyEvent(db, clock, "stripe", parseEvent(raw), raw);
    };
    const tier = async () => (await db.one<{ tier: string }>("SELECT tier FROM organizations WHERE id = 'org-pay'"))!.tier;
    expect(await event("evt-1", 2_000, { tier: "professional", status: "active" })).toBe("tier_changed");
    expect(await tier()).toBe("PROFESSIONAL");
    expect(await event("evt-1", 2_000, { tier: "professional", status: "active" })).toBe("duplicate");
    expect(await event("evt-0", 1_000, { tier: "enterprise", status: "active" })).toBe("stale");
    expect(await tier()).toBe("PROFESSIONAL");
    expect(await event("evt-2", 3_000, { status: "canceled" })).toBe("tier_changed");
    expect(await tier()).toBe("FREE");
    expect(await event("evt-3", 4_000, { organization_id: "nobody", tier: "starter" })).toBe("unknown_organization");
    expect(await event("evt-4", 5_000, {}, "invoice.paid")).toBe("ignored");
    expect((await db.all<{ event_id: string; outcome: string }>("SELECT event_id, outcome FROM payment_events ORDER BY received_at, event_id")).map((r) => `${r.event_id}:${r.outcome}`)).toEqual([
      "evt-0:stale", "evt-1:tier_changed", "evt-2:tier_changed", "evt-3:unknown_organization", "evt-4:ignored",
    ]);
  });
});
