/**
 * Automation on the data-access port, on SQLite (the appliance's group-commit client) and on
 * PostgreSQL (two pools, as two processes have): the facts conditions read (a file's text, how it
 * arrived, its camera and place, its people and their count, each kind's own: page count,
 * duration, domain) and dry runs; auto matching (the library's fingerprint, a model trained,
 * stored and read back, predictions, training requested once); a rule's application, its record, the jobs its actions queue and its webhook deliveries
 * committing together or rolling back together; two processes applying rules to one file at once
 * taking turns (both rules' tags kept, one apply-to-library job's file applied once); and the
 * library events' listeners recording their job or delivery in the caller's transaction. The HTTP
 * sides are rules, rule-schema-people, auto-match and webhooks' tests. The PostgreSQL half skips,
 * saying why, where no server binary is found.
 */
import { describe, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { ManualClock } from "../src/clock.ts";
import type { CloudConnections } from "../src/cloud/connections.ts";
import { TokenVault } from "../src/cloud/token-vault.ts";
import { loadConfig } from "../src/config.ts";
import type { SqlClient } from "../src/db/sql-client.ts";
import { LibraryEvents } from "../src/events/library-events.ts";
import { FileRepository } from "../src/files/file-repository.ts";
import { JobStore } from "../src/jobs/job-store.ts";
import { JobRunner } from "../src/jobs/runner.ts";
import { MediaKinds } from "../src/kinds/media-kind.ts";
import { Logger } from "../src/log.ts";
import { autoMatchStatus, learnIfStale, libraryFingerprint, modelStale, predictionsFor, requestTraining, trainOrganization } from "../src/rules/auto-match.ts";
import { parseConditions } from "../src/rules/conditions.ts";
import type { RuleDeps } from "../src/rules/deps.ts";
import { applyAndAnnounce, automateProcessedFiles } from "../src/rules/rule-jobs.ts";
import { createRule, dryRun, hasEnabledRules, matcherOf, type Rule } from "../src/rules/rules.ts";
import { sendBatchEvents, webhookDeps } from "../src/webhooks/delivery.ts";
import { createWebhook, hasSubscribers } from "../src/webhooks/webhooks.ts";
import type { DocumentDeps } from "../src/documents/deps.ts";
import { documentKind } from "../src/documents/kind.ts";
import type { LinkDeps } from "../src/links/deps.ts";
import { linkKind } from "../src/links/kind.ts";
import type { VideoDeps } from "../src/video/deps.ts";
import { videoKind } from "../src/video/kind.ts";
import { waitFor } from "./support/polling.ts";
import { portEngines } from "./support/port-engines.ts";

const log = new Logger("error");
// Two pools on PostgreSQL stand for two processes; SQLite's one process writes through its group commit.
const { engines } = portEngines("rules", { connections: 4, processes: 2, groupCommit: true });

const unique = () => crypto.randomUUID();

describe.each(engines)("automation on the port, on $name", ({ name, client }) => {
  const clock = new ManualClock(Date.UTC(2032, 0, 1));

  /** What the rule jobs get from the composition root, over `sql` (one process's view). */
  function automation(sql: SqlClient): RuleDeps {
    const vault = new TokenVault(randomBytes(32).toString("base64"));
    return {
      config: loadConfig({}, {}),
      sql,
      files: new FileRepository(sql, clock),
      kinds: new MediaKinds(),
      clock,
      jobs: new JobRunner(new JobStore(sql), clock, log, { leaseMs: 60_000 }),
      libraryEvents: new LibraryEvents(),
      cloud: { vault } as unknown as CloudConnections,
    };
  }

  async function organization(sql: SqlClient): Promise<{ orgId: string; projectId: string }> {
    const orgId = unique();
    const projectId = unique();
    await sql.run("INSERT INTO organizations (id, name, name_key, tier, created_at) VALUES (?, ?, ?, 'STARTER', 'x')", [orgId, orgId, orgId]);
    await sql.run("INSERT INTO projects (id, org_id, name, name_key, is_default, created_at, updated_at) VALUES (?, ?, 'Default', 'default', 1, 'x', 'x')", [projectId, orgId]);
    return { orgId, projectId };
  }

  async function file(sql: SqlClient, org: { orgId: string; projectId: string }, fields: { media_type?: string; title?: string; tags?: string[]; folder_id?: string; visible_text?: string } = {}): Promise<string> {
    const id = unique();
    await sql.run(
      `INSERT INTO files (id, org_id, project_id, media_type, filename, title, tags, folder_id, visible_text, processing_status, created_at, updated_at)
       VALUES (?, ?, ?, ?, 'f.txt', ?, ?, ?, ?, 'completed', 'x', 'x')`,
      [id, org.orgId, org.projectId, fields.media_type ?? "document", fields.title ?? null, JSON.stringify(fields.tags ?? []), fields.folder_id ?? null, fields.visible_text ?? null],
    );
    return id;
  }

  const tagsOn = async (sql: SqlClient, id: string) => JSON.parse((await sql.one<{ tags: string }>("SELECT tags FROM files WHERE id = ?", [id]))!.tags) as string[];
  const count = async (sql: SqlClient, statement: string, params: string[]) => (await sql.one<{ n: number }>(statement, params))!.n;

  test("file facts: a file's text, how it arrived, its camera and place, its people and their count, read through the port; a dry run over the settled files", async () => {
    const sql = client(0);
    const ctx = automation(sql);
    const org = await organization(sql);
    const invoice = await file(sql, org, { tags: ["Finance"] });
    await sql.run("INSERT INTO document_texts (file_id, text) VALUES (?, ?)", [invoice, "Invoice 42, due in March"]);
    await sql.run("INSERT INTO file_origins (file_id, source, detail) VALUES (?, 'mail', 'inbox')", [invoice]);
    const photo = await file(sql, org, { media_type: "image", visible_text: "EXIT" });
    const ada = unique();
    await sql.run("INSERT INTO people (id, org_id, name, created_at, updated_at) VALUES (?, ?, 'Ada', 'x', 'x')", [ada, org.orgId]);
    for (const [person, size] of [[ada, 0.5], [null, 0.2]] as const) {
      await sql.run("INSERT INTO faces (id, file_id, org_id, person_id, x_min, y_min, x_max, y_max, score, created_at) VALUES (?, ?, ?, ?, 0, 0, ?, ?, 0.9, 'x')", [unique(), photo, org.orgId, person, size, size]);
    }
    await sql.run("INSERT INTO image_findings (file_id, objects, faces, people, colours, found_at) VALUES (?, '[]', 2, 3, '[]', 'x')", [photo]);
    await sql.run("INSERT INTO camera_facts (file_id, org_id, make, model, lens, country_code, country, region, city) VALUES (?, ?, 'Canon', 'EOS R6', 'RF 35mm', 'PT', 'Portugal', 'Lisboa', 'Lisbon')", [photo, org.orgId]);
    const alone = await file(sql, org, { media_type: "image" });
    await sql.run("INSERT INTO faces (id, file_id, org_id, person_id, x_min, y_min, x_max, y_max, score, created_at) VALUES (?, ?, ?, NULL, 0, 0, 0.1, 0.1, 0.9, 'x')", [unique(), alone, org.orgId]);

    const which = async (conditions: unknown[], match: "all" | "any" = "all") => {
      const matches = matcherOf(sql, ctx, { conditions: parseConditions(conditions), match });
      const rows = await sql.all<Parameters<typeof matches>[0]>("SELECT * FROM files WHERE org_id = ? ORDER BY id", [org.orgId]);
      const found: string[] = [];
      for (const row of rows) if (await matches(row)) found.push(row.id === invoice ? "invoice" : row.id === photo ? "photo" : "alone");
      return found.sort();
    };
    expect(await which([{ field: "text", op: "contains", value: "INVOICE" }])).toEqual(["invoice"]);
    expect(await which([{ field: "text", op: "equals", value: "exit" }])).toEqual(["photo"]);
    expect(await which([{ field: "source", op: "equals", value: "mail" }])).toEqual(["invoice"]);
    expect(await which([{ field: "source", op: "equals", value: "upload" }])).toEqual(["alone", "photo"]);
    expect(await which([{ field: "people", op: "contains", value: "ada" }])).toEqual(["photo"]);
    // The detectors' count wins over the faces recognised; without findings, the faces.
    expect(await which([{ field: "people_count", op: "gte", value: 3 }])).toEqual(["photo"]);
    expect(await which([{ field: "people_count", op: "equals", value: 1 }])).toEqual(["alone"]);
    expect(await which([{ field: "people_count", op: "not_exists" }])).toEqual(["invoice"]);
    expect(await which([{ field: "tags", op: "contains", value: "finance" }, { field: "people", op: "exists" }], "any")).toEqual(["invoice", "photo"]);
    expect(await which([{ field: "camera", op: "equals", value: "canon eos r6" }, { field: "place", op: "contains", value: "Lisbon, Lisboa" }, { field: "country_code", op: "equals", value: "PT" }])).toEqual(["photo"]);
    expect(await which([{ field: "lens", op: "not_exists" }])).toEqual(["alone", "invoice"]);
    expect(await which([])).toEqual(["alone", "invoice", "photo"]);

    const dry = await dryRun(sql, ctx, org.orgId, { conditions: [{ field: "text", op: "contains", value: "march" }] }, 10);
    expect(dry).toMatchObject({ matched_count: 1, scanned_count: 3, has_more: false, files: [{ id: invoice }] });
  });

  test("the kinds' own facts (a document's page count, a video's duration, a link's domain and page count) read through the port, in a dry run and in a rule applied in a transaction", async () => {
    const sql = client(0);
    const ctx = automation(sql);
    // The built-in kinds, as the composition root registers them; conditions read only their conditionFacts.
    const kindDeps = { config: loadConfig({}, {}), sql, clock } as unknown as DocumentDeps & VideoDeps & LinkDeps;
    for (const kind of [documentKind(kindDeps), videoKind(kindDeps), linkKind(kindDeps)]) ctx.kinds.register(kind);
    const org = await organization(sql);
    const report = await file(sql, org, { media_type: "document" });
    await sql.run("INSERT INTO document_facts (file_id, page_count) VALUES (?, 12)", [report]);
    const memo = await file(sql, org, { media_type: "document" });
    await sql.run("INSERT INTO document_facts (file_id, page_count) VALUES (?, 2)", [memo]);
    const film = await file(sql, org, { media_type: "video" });
    await sql.run("INSERT INTO video_facts (file_id, duration_seconds) VALUES (?, 95.5)", [film]);
    const page = await file(sql, org, { media_type: "link" });
    await sql.run("INSERT INTO link_crawls (file_id, url_key, domain, extract_images, status) VALUES (?, 'https://news.example.com/a', 'news.example.com', 0, 'completed')", [page]);
    await sql.run("INSERT INTO document_facts (file_id, page_count) VALUES (?, 1)", [page]);
    const names = new Map([[report, "report"], [memo, "memo"], [film, "film"], [page, "page"]]);

    const which = async (conditions: unknown[]) => {
      const dry = await dryRun(sql, ctx, org.orgId, { conditions }, 10);
      return dry.files.map((f: { id: string }) => names.get(f.id)).sort();
    };
    expect(await which([{ field: "page_count", op: "gte", value: 10 }])).toEqual(["report"]);
    expect(await which([{ field: "page_count", op: "exists" }])).toEqual(["memo", "page", "report"]);
    expect(await which([{ field: "duration_seconds", op: "gt", value: 60 }])).toEqual(["film"]);
    expect(await which([{ field: "duration_seconds", op: "not_exists" }])).toEqual(["memo", "page", "report"]);
    expect(await which([{ field: "domain", op: "equals", value: "NEWS.example.com" }])).toEqual(["page"]);

    // Applied in a port transaction: the facts are read through it (on PostgreSQL no SQLite handle exists).
    const long = await createRule(ctx, org.orgId, null, { name: "long reads", conditions: [{ field: "page_count", op: "gte", value: 10 }], actions: [{ type: "add_tags", tags: ["long"] }] }, { webhookExists: async () => true });
    const short = await createRule(ctx, org.orgId, null, { name: "short films", conditions: [{ field: "duration_seconds", op: "lt", value: 120 }], actions: [{ type: "add_tags", tags: ["short"] }] }, { webhookExists: async () => true });
    for (const id of [report, memo, film, page]) {
      await sql.transaction((tx) => applyAndAnnounce(ctx, tx, id, [long, short], { kind: "analysis", jobId: null }));
    }
    expect(await tagsOn(sql, report)).toEqual(["long"]);
    expect(await tagsOn(sql, memo)).toEqual([]);
    expect(await tagsOn(sql, film)).toEqual(["short"]);
    expect(await tagsOn(sql, page)).toEqual([]);
  });

  test("auto matching: the library's fingerprint, a model trained and read back, predictions, stale after a change, training requested once", async () => {
    const sql = client(0);
    const ctx = automation(sql);
    const org = await organization(sql);
    expect(await modelStale(sql, org.orgId)).toBe(true);
    const empty = await libraryFingerprint(sql, org.orgId);
    for (let i = 0; i < 6; i++) {
      await file(sql, org, { title: `Invoice ${i} payment due amount total`, tags: ["Finance"], visible_text: `invoice number ${i} total amount payable` });
      await file(sql, org, { title: `Holiday letter ${i}`, visible_text: `dear friend the beach was lovely and sunny ${i}` });
    }
    const before = await libraryFingerprint(sql, org.orgId);
    expect(before).not.toBe(empty);
    expect(before.startsWith("12:")).toBe(true);

    const status = await trainOrganization(ctx, org.orgId);
    expect(status).toMatchObject({ trained_at: "2032-01-01T00:00:00.000Z", example_files: 12, stale: false, labels: [{ kind: "tag", label: "finance", examples: 6 }] });
    expect(await autoMatchStatus(sql, org.orgId)).toEqual(status);
    expect(await modelStale(sql, org.orgId)).toBe(false);

    const bill = await file(sql, org, { title: "Invoice 99", visible_text: "invoice total amount payable" });
    const note = await file(sql, org, { title: "Postcard", visible_text: "dear friend the beach" });
    const row = async (id: string) => (await sql.one<Parameters<typeof predictionsFor>[2]>("SELECT * FROM files WHERE id = ?", [id]))!;
    const predicted = await predictionsFor(sql, ctx.files, await row(bill));
    expect(predicted!.tags.get("finance")!).toBeGreaterThan(0.5);
    expect((await predictionsFor(sql, ctx.files, await row(note)))!.tags.get("finance")!).toBeLessThan(0.5);
    const matches = matcherOf(sql, ctx, { conditions: parseConditions([{ field: "predicted_tags", op: "contains", value: "Finance" }]), match: "all" });
    expect([await matches(await row(bill)), await matches(await row(note))]).toEqual([true, false]);
    // The two new files changed the library.
    expect(await modelStale(sql, org.orgId)).toBe(true);
    expect((await autoMatchStatus(sql, org.orgId)).stale).toBe(true);

    // Conditions without predictions ask for nothing; asking twice queues one training.
    await learnIfStale(ctx, org.orgId, parseConditions([{ field: "tags", op: "exists" }]), "now");
    expect(await count(sql, "SELECT count(*) AS n FROM jobs WHERE queue = 'rules.learn' AND org_id = ?", [org.orgId])).toBe(0);
    await learnIfStale(ctx, org.orgId, parseConditions([{ field: "predicted_tags", op: "contains", value: "finance" }]), "now");
    expect((await requestTraining(ctx, org.orgId, "now")).deduplicated).toBe(true);
    expect(await count(sql, "SELECT count(*) AS n FROM jobs WHERE queue = 'rules.learn' AND org_id = ?", [org.orgId])).toBe(1);
  });

  /** A rule made through the API's path; `extra` actions are added as stored (a run_schema needs no schema to queue its job). */
  async function rule(ctx: RuleDeps, orgId: string, name: string, tags: string[], webhookId: string | null, extra: Rule["actions"] = []): Promise<Rule> {
    const actions = [{ type: "add_tags", tags }, ...(webhookId ? [{ type: "call_webhook", webhook_id: webhookId }] : [])];
    const made = await createRule(ctx, orgId, null, { name, actions }, { webhookExists: async () => true });
    return { ...made, actions: [...made.actions, ...extra] };
  }

  test("a rule's application, its record, the jobs its actions queue and its webhook deliveries commit together or roll back together", async () => {
    const sql = client(0);
    const ctx = automation(sql);
    const org = await organization(sql);
    const subscribed = await createWebhook(webhookDeps(ctx), org.orgId, null, { url: "https://hooks.example.com/applied", events: ["rule.applied"] });
    const named = await createWebhook(webhookDeps(ctx), org.orgId, null, { url: "https://hooks.example.com/named", events: ["batch.completed"] });
    const id = await file(sql, org, { tags: ["a"] });
    const tagging = await rule(ctx, org.orgId, "tag it", ["b"], named.id, [{ type: "run_schema", schema_id: unique() }]);
    const state = async () => ({
      tags: await tagsOn(sql, id),
      applications: await count(sql, "SELECT count(*) AS n FROM rule_applications WHERE file_id = ?", [id]),
      deliveries: await count(sql, "SELECT count(*) AS n FROM webhook_deliveries WHERE org_id = ?", [org.orgId]),
      jobs: (await sql.all<{ queue: string }>("SELECT queue FROM jobs WHERE org_id = ? ORDER BY queue", [org.orgId])).map((j) => j.queue),
    });

    await expect(
      sql.transaction(async (tx) => {
        const applied = await applyAndAnnounce(ctx, tx, id, [tagging], { kind: "analysis", jobId: null });
        expect(applied.map((a) => a.application.status)).toEqual(["applied"]);
        throw new Error("what came after failed");
      }),
    ).rejects.toThrow("what came after failed");
    expect(await state()).toEqual({ tags: ["a"], applications: 0, deliveries: 0, jobs: [] });

    const applied = await sql.transaction((tx) => applyAndAnnounce(ctx, tx, id, [tagging], { kind: "analysis", jobId: null }));
    expect(applied[0]!.application.outcomes.map((o) => o.type)).toEqual(["add_tags", "call_webhook", "run_schema"]);
    expect(await state()).toEqual({ tags: ["a", "b"], applications: 1, deliveries: 2, jobs: ["file.schema", "webhook.deliver", "webhook.deliver"] });
    const deliveries = await sql.all<{ webhook_id: string; event_type: string; job_id: string }>("SELECT webhook_id, event_type, job_id FROM webhook_deliveries WHERE org_id = ? ORDER BY webhook_id", [org.orgId]);
    expect(deliveries.map((d) => [d.webhook_id, d.event_type]).sort()).toEqual([[named.id, "rule.applied"], [subscribed.id, "rule.applied"]].sort());
    for (const d of deliveries) expect(await sql.one("SELECT queue FROM jobs WHERE id = ?", [d.job_id])).toEqual({ queue: "webhook.deliver" });
  });

  test("two processes applying rules to one file at once take turns: both rules' tags are kept, and one apply-to-library job's file is applied once", async () => {
    const [one, two] = [automation(client(0)), automation(client(1))];
    const org = await organization(one.sql);
    const hook = await createWebhook(webhookDeps(one), org.orgId, null, { url: "https://hooks.example.com/a", events: ["rule.applied"] });
    const id = await file(one.sql, org, { tags: ["a"] });
    const addB = await rule(one, org.orgId, "b", ["b"], null);
    const addC = await rule(one, org.orgId, "c", ["c"], null);

    /** Process one applies `first` and holds its transaction open until process two's is waiting for it; then both commit. */
    async function race(first: [Rule, string | null], second: [Rule, string | null]) {
      let applied = false;
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      const a = one.sql.transaction(async (tx) => {
        const done = await applyAndAnnounce(one, tx, id, [first[0]], { kind: first[1] ? "library" : "analysis", jobId: first[1] });
        applied = true;
        await held;
        return done;
      });
      await waitFor(() => applied, { what: "process one to apply its rule" });
      const b = two.sql.transaction((tx) => applyAndAnnounce(two, tx, id, [second[0]], { kind: second[1] ? "library" : "analysis", jobId: second[1] }));
      // On PostgreSQL process two waits for the file's row; SQLite's one writer makes it wait for the transaction.
      if (name === "postgres") {
        await waitFor(async () => (await client(0).one<{ n: number }>("SELECT count(*) AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()"))!.n === 1, {
          what: "process two to wait for the file's row",
          timeoutMs: 10_000,
        });
      }
      release();
      return Promise.all([a, b]);
    }

    const [byOne, byTwo] = await race([addB, null], [addC, null]);
    expect([byOne.length, byTwo.length]).toEqual([1, 1]);
    expect(await tagsOn(one.sql, id)).toEqual(["a", "b", "c"]);

    const jobId = unique();
    const [first, again] = await race([addB, jobId], [addB, jobId]);
    expect([first.length, again.length]).toEqual([1, 0]);
    expect(await count(one.sql, "SELECT count(*) AS n FROM rule_applications WHERE job_id = ?", [jobId])).toBe(1);
    expect(await count(one.sql, "SELECT count(*) AS n FROM webhook_deliveries WHERE webhook_id = ?", [hook.id])).toBe(3);
  });

  test("the library events' listeners record a file's automation job and a batch's delivery in the caller's transaction, or nothing", async () => {
    const sql = client(0);
    const ctx = automation(sql);
    automateProcessedFiles(ctx);
    sendBatchEvents(ctx);
    const quiet = await organization(sql);
    const busy = await organization(sql);
    await rule(ctx, busy.orgId, "tag", ["t"], null);
    await createWebhook(webhookDeps(ctx), busy.orgId, null, { url: "https://hooks.example.com/batches", events: ["batch.completed"] });
    expect([await hasEnabledRules(sql, quiet.orgId), await hasEnabledRules(sql, busy.orgId)]).toEqual([false, true]);
    expect([await hasSubscribers(sql, busy.orgId, ["file.completed"]), await hasSubscribers(sql, busy.orgId, ["batch.completed", "x"])]).toEqual([false, true]);

    const processed = async (orgId: string, fail: boolean) => {
      const row = (await ctx.files.byId(await file(sql, orgId === busy.orgId ? busy : quiet)))!;
      const batch = { orgId, sessionId: unique(), status: "completed", totalFiles: 1, completedFiles: 1, failedFiles: 0, skippedFiles: 0 };
      const run = sql.transaction(async (tx) => {
        await ctx.libraryEvents.emit("file.processed", tx, { file: row, outcome: "completed", error: null });
        await ctx.libraryEvents.emit("batch.finished", tx, batch);
        if (fail) throw new Error("the end of processing failed to commit");
      });
      if (fail) await expect(run).rejects.toThrow("failed to commit");
      else await run;
      return (await sql.all<{ queue: string }>("SELECT queue FROM jobs WHERE org_id = ? ORDER BY queue", [orgId])).map((j) => j.queue);
    };
    expect(await processed(busy.orgId, true)).toEqual([]);
    expect(await count(sql, "SELECT count(*) AS n FROM webhook_deliveries WHERE org_id = ?", [busy.orgId])).toBe(0);
    expect(await processed(busy.orgId, false)).toEqual(["file.automate", "webhook.deliver"]);
    expect(await sql.one("SELECT event_type FROM webhook_deliveries WHERE org_id = ?", [busy.orgId])).toEqual({ event_type: "batch.completed" });
    // An organization without rules or receivers pays nothing.
    expect(await processed(quiet.orgId, false)).toEqual([]);
    await expect(ctx.libraryEvents.emit("batch.finished", sql, { orgId: busy.orgId, sessionId: "s", status: "completed", totalFiles: 0, completedFiles: 0, failedFiles: 0, skippedFiles: 0 })).rejects.toThrow(
      /caller's transaction/,
    );
  });
});
