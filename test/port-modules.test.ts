/**
 * The modules converted to the data-access port (docs/scale-out.md) behave the same on SQLite and
 * on PostgreSQL: support messages (stored, listed newest first, marked mailed), upload telemetry
 * (stored with its size limit, pruned after 30 days), the pruning of finished jobs, and payment
 * events setting an organization's tier (once per event id, never undone by an older event), and
 * webhooks (receivers, deliveries newest first, attempts, the dead-letter retry, secrets re-sealed
 * after a key rotation), and mail accounts (validated, listed, changed, one poll per due account
 * even when two processes look at once, messages recorded and listed, passwords re-sealed), and
 * rules (ordered, named uniquely, their applications listed newest first and counted), and watched
 * folders (listed, files claimed and finished, an organization's folders with counts and recent items), and
 * near-duplicates (fingerprints and pairs recorded and replaced, groups of live files with their best
 * member, "not duplicates" and its undo), and people (listed named first in any case, hidden, renamed,
 * merged, their files and faces newest taken first with undated ones last, a face given to another
 * person or to nobody), faces stored and removed with their vectors (sqlite-vec or pgvector), the
 * clustering of faces left without a person and the "same person" search. Their HTTP
 * sides are tested where they were (accounts.test.ts, telemetry's and the jobs' tests). The
 * PostgreSQL half skips, saying why, where no server binary is found.
 */
import { describe, expect, test } from "bun:test";
import { ManualClock } from "../src/clock.ts";
import type { SqlClient } from "../src/db/sql-client.ts";
import { portEngines } from "./support/port-engines.ts";
import { listSupportMessages, storeSupportMessage } from "../src/support/support.ts";
import { logUploadEvent, pruneUploadEvents } from "../src/telemetry/upload-events.ts";
import { pruneFinishedJobs } from "../src/jobs/queue.ts";
import { JobStore } from "../src/jobs/job-store.ts";
import { applyEvent, parseEvent } from "../src/payments/webhooks.ts";
import { randomBytes } from "node:crypto";
import { TokenVault } from "../src/cloud/token-vault.ts";
import { loadConfig } from "../src/config.ts";
import { JobRunner } from "../src/jobs/runner.ts";
import { Logger } from "../src/log.ts";
import {
  abandonDelivery, createWebhook, deleteWebhook, deliveryWork, getDelivery, getWebhook, listDeliveries, listWebhooks, recordAttempt, resealWebhookSecrets, retryDelivery, rotateSecret,
  updateWebhook, webhookExists, type WebhookDeps,
} from "../src/webhooks/webhooks.ts";
import {
  accountForPoll, createMailAccount, deleteMailAccount, dueAccounts, getMailAccount, listMailAccounts, mailboxRenumbered, messageRow, pollEnded, recentMessages, recordMessage,
  resealMailPasswords, updateMailAccount,
} from "../src/mail/mail-accounts.ts";
import { activeWatchedFolders, allWatchedFolders, claimItem, finishItem, openItems, removeWatchedFolder, scanned, watchedFoldersOf } from "../src/watch/watched-folders.ts";
import { applicationsOfFile, applicationsOfJob, applicationsOfRule, createRule, deleteRule, enabledRules, getRule, handledByJob, listRules, updateRule } from "../src/rules/rules.ts";
import {
  assignFace, clusterUnassigned, FACE_DIMENSION, FACE_MODEL, getPerson, listPeople, mergePeople, personFaces, personFileIds, removeFaces, similarFaces, storeFaces, updatePerson,
} from "../src/people/people.ts";
import { SqliteVectorSpaces } from "../src/vectors/sqlite-vector-spaces.ts";
import { PgVectorIndex } from "../src/vectors/pgvector-index.ts";
import type { VectorSpaces } from "../src/vectors/vector-spaces.ts";
import { findPostgres } from "./support/postgres.ts";
import { dismissDuplicates, groupMemberships, recordFingerprint, undismissDuplicates, withMembers } from "../src/duplicates/duplicate-store.ts";

const { engines, sqlite } = portEngines("support");
/** An organization (named after its id) and, given `projectId`, its default project: what the modules' rows belong to. */
async function tenant(db: SqlClient, orgId: string, projectId?: string): Promise<void> {
  await db.run("INSERT INTO organizations (id, name, name_key, tier, created_at) VALUES (?, ?, ?, 'STARTER', 'x') ON CONFLICT DO NOTHING", [orgId, orgId, orgId]);
  if (projectId) {
    await db.run("INSERT INTO projects (id, org_id, name, name_key, is_default, created_at, updated_at) VALUES (?, ?, 'Default', 'default', 1, 'x', 'x') ON CONFLICT DO NOTHING", [projectId, orgId]);
  }
}

/** Whether the PostgreSQL found has pgvector (the face space's tests need it). */
const pgvector = (() => {
  const found = findPostgres();
  return !("missing" in found) && found.vector;
})();

describe.each(engines)("modules on the port, on $name", ({ name, client }) => {
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

  test("webhooks: receivers created, listed, changed and deleted; deliveries newest first with their attempts; a dead letter retried once; secrets re-sealed", async () => {
    const db = client();
    const clock = new ManualClock(Date.UTC(2031, 5, 1));
    const oldKey = randomBytes(32).toString("base64");
    const config = loadConfig({}, {});
    const deps = (vault: TokenVault): WebhookDeps => ({ sql: db, clock, config, vault, jobs: new JobRunner(new JobStore(db), clock, new Logger("error"), { leaseMs: 60_000 }) });
    const old = deps(new TokenVault(oldKey));
    await db.run("INSERT INTO organizations (id, name, name_key, tier, created_at) VALUES ('org-hook', 'Hook Co', 'hook co', 'STARTER', 'x') ON CONFLICT DO NOTHING");
    await db.run("INSERT INTO organizations (id, name, name_key, tier, created_at) VALUES ('org-other', 'Other Co', 'other co', 'STARTER', 'x') ON CONFLICT DO NOTHING");
    const a = await createWebhook(old, "org-hook", null, { url: "https://hooks.example.com/a", events: ["file.completed", "file.completed"], description: " ops " });
    clock.advance(1_000);
    const b = await createWebhook(old, "org-hook", "key-1", { url: "https://hooks.example.com/b", events: ["batch.completed"], secret: "s".repeat(20), enabled: false });
    expect([a.events, a.description, a.enabled, a.secret.startsWith("whsec_"), a.secret_hint]).toEqual([["file.completed"], "ops", true, true, a.secret.slice(-4)]);
    expect(b).toMatchObject({ enabled: false, created_by: "key-1", secret: "s".repeat(20), deliveries: { pending: 0, delivered: 0, failed: 0 } });
    await expect(createWebhook(old, "org-hook", null, { url: "ftp://x", events: ["file.completed"] })).rejects.toThrow(/url/);
    expect((await listWebhooks(db, "org-hook", 1, 1)).items.map((w) => w.id)).toEqual([b.id]);
    expect((await listWebhooks(db, "org-hook", 10, 0)).total).toBe(2);
    expect((await listWebhooks(db, "org-other", 10, 0)).total).toBe(0);
    await expect(getWebhook(db, "org-other", a.id)).rejects.toThrow(/not found/);
    expect([await webhookExists(db, "org-hook", a.id.toUpperCase()), await webhookExists(db, "org-other", a.id)]).toEqual([true, false]);
    clock.advance(1_000);
    const changed = await updateWebhook(old, "org-hook", b.id.toUpperCase(), { enabled: true, description: null, events: ["rule.applied"] });
    expect([changed.enabled, changed.description, changed.events, changed.updated_at]).toEqual([true, null, ["rule.applied"], "2031-06-01T00:00:02.000Z"]);
    const rotated = await rotateSecret(old, "org-hook", b.id);
    expect([rotated.secret === b.secret, rotated.webhook.secret_hint]).toEqual([false, rotated.secret.slice(-4)]);

    // Deliveries are recorded by emitEvent in its callers' transactions; here two with the same time.
    const at = "2031-06-01T00:00:03.000Z";
    for (const id of ["d-1", "d-2"]) {
      await db.run(
        `INSERT INTO webhook_deliveries (id, org_id, webhook_id, event_id, event_type, payload, status, max_attempts, next_attempt_at, created_at, updated_at)
         VALUES (?, 'org-hook', ?, 'evt', 'file.completed', '{"n":1}', 'pending', 2, ?, ?, ?)`,
        [id, a.id, at, at, at],
      );
    }
    expect((await listDeliveries(db, "org-hook", {}, 10, 0)).items.map((d) => d.id)).toEqual(["d-2", "d-1"]);
    const work = await deliveryWork(old, "d-1");
    expect(typeof work === "string" ? work : [work.url, work.secret, work.payload]).toEqual(["https://hooks.example.com/a", a.secret, '{"n":1}']);
    await recordAttempt(old, "d-1", { statusCode: 500, error: "HTTP 500", durationMs: 12, delivered: false, final: false, nextAttemptAt: Date.UTC(2031, 5, 1, 0, 1) });
    expect(await getDelivery(db, "org-hook", "d-1")).toMatchObject({ status: "pending", attempts: 1, last_status_code: 500, next_attempt_at: "2031-06-01T00:01:00.000Z", payload: { n: 1 } });
    await expect(retryDelivery(old, "org-hook", "d-1")).rejects.toThrow(/only failed deliveries/);
    await recordAttempt(old, "d-1", { statusCode: 503, error: "HTTP 503", durationMs: 7, delivered: false, final: true, nextAttemptAt: null });
    expect((await listDeliveries(db, "org-hook", { status: "failed" }, 10, 0)).items.map((d) => [d.id, d.attempts, d.next_attempt_at])).toEqual([["d-1", 2, null]]);
    const retried = await retryDelivery(old, "org-hook", "d-1");
    expect([retried.status, retried.max_attempts]).toEqual(["pending", 2 + config.webhookMaxAttempts]);
    expect(await db.one("SELECT queue, org_id FROM jobs WHERE id = ?", [retried.job_id])).toEqual({ queue: "webhook.deliver", org_id: "org-hook" });
    await recordAttempt(old, "d-1", { statusCode: 204, error: null, durationMs: 5, delivered: true, final: false, nextAttemptAt: null });
    const delivered = await getDelivery(db, "org-hook", "d-1");
    expect([delivered.status, delivered.delivered_at, delivered.attempt_log.map((x) => [x.attempt, x.status_code, x.error])]).toEqual([
      "delivered", "2031-06-01T00:00:02.000Z", [[1, 500, "HTTP 500"], [2, 503, "HTTP 503"], [3, 204, null]],
    ]);
    expect((await getWebhook(db, "org-hook", a.id)).deliveries).toEqual({ pending: 1, delivered: 1, failed: 0 });
    await expect(getDelivery(db, "org-other", "d-2")).rejects.toThrow(/not found/);

    await updateWebhook(old, "org-hook", a.id, { enabled: false });
    expect(await deliveryWork(old, "d-2")).toBe("the webhook is disabled");
    await abandonDelivery(old, "d-2", "the webhook is disabled");
    expect(await getDelivery(db, "org-hook", "d-2")).toMatchObject({ status: "failed", last_error: "the webhook is disabled" });

    const rotatedKey = deps(new TokenVault(randomBytes(32).toString("base64"), [oldKey]));
    expect(await resealWebhookSecrets(rotatedKey)).toBe(2);
    expect(await resealWebhookSecrets(rotatedKey)).toBe(0);
    expect((await deliveryWork(rotatedKey, "d-1")) as string).toBe("the delivery is already delivered");
    await deleteWebhook(db, "org-hook", a.id);
    expect(await db.one("SELECT count(*) AS n FROM webhook_deliveries WHERE webhook_id = ?", [a.id])).toEqual({ n: 0 });
    await expect(deleteWebhook(db, "org-hook", a.id)).rejects.toThrow(/not found/);
    await deleteWebhook(db, "org-hook", b.id);
  });

  test("mail accounts: validated, listed and changed; each due account polled once though two look at once; messages recorded; passwords re-sealed", async () => {
    const db = client();
    const clock = new ManualClock(Date.UTC(2031, 6, 1));
    const oldKey = randomBytes(32).toString("base64");
    // The placement of an account's files still reads the folders from the SQLite handle: the organization and its Default project exist on both.
    const orgId = "org-mail";
    for (const target of [sqlite(), null]) {
      const run = (q: string, p: (string | number)[]) => (target ? (target.query(q).run(...p), Promise.resolve()) : db.run(q, p).then(() => {}));
      await run("INSERT INTO organizations (id, name, name_key, tier, created_at) VALUES (?, 'Mail Co', 'mail co', 'STARTER', 'x') ON CONFLICT DO NOTHING", [orgId]);
      await run("INSERT INTO projects (id, org_id, name, name_key, is_default, created_at, updated_at) VALUES ('p-mail', ?, 'Default', 'default', 1, 'x', 'x') ON CONFLICT DO NOTHING", [orgId]);
    }
    const deps = { sql: db, db: sqlite(), clock, vault: new TokenVault(oldKey) };
    const input = { name: "receipts", host: "Mail.Example.com", username: "me", password: "pw-1", tls: "starttls" as const, attachment_types: [".PDF", "image/*"] };
    const a = await createMailAccount(deps, orgId, null, input);
    expect(a).toMatchObject({ host: "mail.example.com", port: 143, attachment_types: ["pdf", "image/*"], project_id: "p-mail", has_password: true, messages: { done: 0, skipped: 0, failed: 0, ingesting: 0 } });
    await expect(createMailAccount(deps, orgId, null, input)).rejects.toThrow(/already exists/);
    await expect(createMailAccount(deps, orgId, null, { ...input, name: "x", after_action: "move" })).rejects.toThrow(/move_to/);
    const b = await createMailAccount(deps, orgId, "key-1", { ...input, name: "archive", poll_interval_seconds: 60 });
    expect((await listMailAccounts(db, orgId)).map((x) => x.name)).toEqual(["archive", "receipts"]);
    await expect(updateMailAccount(deps, orgId, a.id, { name: "archive" })).rejects.toThrow(/already exists/);
    await mailboxRenumbered(db, a.id, "7");
    await pollEnded(db, clock, a.id, { error: null, uidValidity: "7", lastUid: 12 });
    expect(await accountForPoll(db, deps.vault, a.id)).toMatchObject({ password: "pw-1", uidValidity: "7", lastUid: 12, orgId });
    // Another mailbox has other UIDs: the account starts over there.
    clock.advance(1_000);
    const moved = await updateMailAccount(deps, orgId, a.id.toUpperCase(), { mailbox: "Receipts", password: "pw-2" });
    expect([moved.mailbox, moved.updated_at]).toEqual(["Receipts", "2031-07-01T00:00:01.000Z"]);
    expect(await accountForPoll(db, deps.vault, a.id)).toMatchObject({ password: "pw-2", uidValidity: null, lastUid: 0 });
    await pollEnded(db, clock, a.id, { error: "connection refused" });
    expect((await getMailAccount(db, orgId, a.id)).last_error).toBe("connection refused");
    await expect(getMailAccount(db, "org-other", a.id)).rejects.toThrow(/not found/);

    // Both are due at once: two lookers (two processes) take each account once, and its next time is set.
    const now = clock.now();
    const looks = await Promise.all([dueAccounts(db, now), dueAccounts(db, now)]);
    expect(looks.flat().map((x) => x.id).sort()).toEqual([a.id, b.id].sort());
    expect(await dueAccounts(db, now + 59_000)).toEqual([]);
    expect(await dueAccounts(db, now + 60_000)).toEqual([{ id: b.id, org_id: orgId }]);
    await updateMailAccount(deps, orgId, b.id, { enabled: false });
    expect(await accountForPoll(db, deps.vault, b.id)).toBeNull();
    expect(await dueAccounts(db, now + 3_600_000)).toEqual([{ id: a.id, org_id: orgId }]);

    const base = { account_id: a.id, uid_validity: "7", message_id: "<m@x>", subject: "Invoice", sender: "<s@x>", received_at: null };
    await recordMessage(db, clock, { ...base, uid: 1, status: "skipped", parts: [], error: "no attachment" });
    clock.advance(1_000);
    await recordMessage(db, clock, { ...base, uid: 2, status: "ingesting", parts: [{ part: "2", filename: "a.pdf", file_id: "f-1", status: "pending", error: null }], error: null });
    await recordMessage(db, clock, { ...base, uid: 2, status: "done", parts: [{ part: "2", filename: "a.pdf", file_id: "f-1", status: "stored", error: null }], error: null });
    expect((await messageRow(db, a.id, "7", 2))?.status).toBe("done");
    expect((await recentMessages(db, orgId, a.id, 10)).map((m) => [m.uid, m.status, m.parts.map((p) => p.status)])).toEqual([[2, "done", ["stored"]], [1, "skipped", []]]);
    expect((await getMailAccount(db, orgId, a.id)).messages).toEqual({ done: 1, skipped: 1, failed: 0, ingesting: 0 });

    const rotated = new TokenVault(randomBytes(32).toString("base64"), [oldKey]);
    expect(await resealMailPasswords(db, rotated)).toBe(2);
    expect(await resealMailPasswords(db, rotated)).toBe(0);
    expect((await accountForPoll(db, rotated, a.id))?.password).toBe("pw-2");
    await deleteMailAccount(db, orgId, a.id);
    await deleteMailAccount(db, orgId, b.id);
    expect(await listMailAccounts(db, orgId)).toEqual([]);
    expect(await messageRow(db, a.id, "7", 2)).toBeNull();
  });

  test("rules: listed in position order, named uniquely (any case), changed and deleted; their applications newest first, per file and per job", async () => {
    const db = client();
    const clock = new ManualClock(Date.UTC(2031, 7, 1));
    const orgId = "org-rules";
    await tenant(db, orgId, "p-rules");
    // Validating these actions reads nothing; a move or run_schema action would read the SQLite handle still.
    const store = { sql: db, clock };
    const refs = { webhookExists: async () => false };
    const tag = (tags: string[]) => [{ type: "add_tags", tags }];
    const a = await createRule(store, orgId, null, { name: "Invoices", conditions: [{ field: "text", op: "contains", value: "invoice" }], actions: tag(["invoice"]), position: 1 }, refs);
    const b = await createRule(store, orgId, "key-1", { name: "Drafts", actions: tag(["draft"]), enabled: false }, refs);
    expect([a.match, a.enabled, a.applied_files, a.last_applied_at, b.enabled, b.created_by]).toEqual(["all", true, 0, null, false, "key-1"]);
    await expect(createRule(store, orgId, null, { name: "INVOICES", actions: tag(["x"]) }, refs)).rejects.toThrow(/already exists/);
    await expect(createRule(store, orgId, null, { name: "hooked", actions: [{ type: "call_webhook", webhook_id: crypto.randomUUID() }] }, refs)).rejects.toThrow(/no webhook/);
    expect((await listRules(db, orgId, 10, 0)).items.map((r) => r.name)).toEqual(["Drafts", "Invoices"]);
    expect((await listRules(db, orgId, 1, 1))).toMatchObject({ total: 2, items: [{ id: a.id }] });
    expect((await enabledRules(db, orgId)).map((r) => r.id)).toEqual([a.id]);
    clock.advance(1_000);
    const renamed = await updateRule(store, orgId, a.id.toUpperCase(), { name: "invoices", match: "any" }, refs);
    expect([renamed.name, renamed.match, renamed.updated_at]).toEqual(["invoices", "any", "2031-08-01T00:00:01.000Z"]);
    await expect(updateRule(store, orgId, b.id, { name: "Invoices" }, refs)).rejects.toThrow(/already exists/);
    await expect(getRule(db, "org-other", a.id)).rejects.toThrow(/not found/);

    // Applications are written by applyRulesTo with the file's changes; here directly, two at one time.
    for (const id of ["rf-1", "rf-2"]) {
      await db.run("INSERT INTO files (id, org_id, project_id, media_type, filename, created_at, updated_at) VALUES (?, ?, 'p-rules', 'document', 'a.txt', 'x', 'x')", [id, orgId]);
    }
    const record = (id: string, fileId: string, status: string, jobId: string | null, at: string) =>
      db.run(
        "INSERT INTO rule_applications (id, org_id, rule_id, rule_name, file_id, trigger, job_id, status, outcomes, error, applied_at) VALUES (?, ?, ?, 'invoices', ?, ?, ?, ?, '[]', ?, ?)",
        [id, orgId, a.id, fileId, jobId ? "library" : "analysis", jobId, status, status === "failed" ? "folder gone" : null, at],
      );
    await record("ra-1", "rf-1", "applied", null, "2031-08-01T00:00:02.000Z");
    await record("ra-2", "rf-2", "applied", "job-1", "2031-08-01T00:00:03.000Z");
    await record("ra-3", "rf-1", "failed", "job-1", "2031-08-01T00:00:03.000Z");
    expect((await applicationsOfRule(db, orgId, a.id, 10, 0)).items.map((x) => x.id)).toEqual(["ra-3", "ra-2", "ra-1"]);
    expect(await applicationsOfFile(db, orgId, "rf-1", 1, 0)).toMatchObject({ total: 2, items: [{ id: "ra-3", status: "failed", error: "folder gone", outcomes: [] }] });
    expect((await applicationsOfFile(db, "org-other", "rf-1", 10, 0)).total).toBe(0);
    expect([await handledByJob(db, "job-1", "rf-2"), await handledByJob(db, "job-1", "rf-9"), await applicationsOfJob(db, "job-1"), await applicationsOfJob(db, "job-9")]).toEqual([
      true, false, { applied: 1, failed: 1 }, { applied: 0, failed: 0 },
    ]);
    expect(await getRule(db, orgId, a.id)).toMatchObject({ applied_files: 2, last_applied_at: "2031-08-01T00:00:03.000Z" });
    await deleteRule(db, orgId, a.id);
    await expect(getRule(db, orgId, a.id)).rejects.toThrow(/not found/);
    expect((await applicationsOfFile(db, orgId, "rf-1", 10, 0)).total).toBe(2);
    await deleteRule(db, orgId, b.id);
  });

  test("watched folders: listed by path, files claimed, resumed and finished, an organization's folders with counts and recent items; only the CLI's are removed", async () => {
    const db = client();
    const clock = new ManualClock(Date.UTC(2031, 8, 1));
    const orgId = "org-watch";
    await db.run("INSERT INTO organizations (id, name, name_key, tier, created_at) VALUES (?, 'Watch Co', 'watch co', 'STARTER', 'x') ON CONFLICT DO NOTHING", [orgId]);
    // Mappings are recorded by addWatchedFolder (projects and folders still on the SQLite handle); here directly.
    const watch = async (id: string, path: string, origin: string, active: number) => {
      await db.run("INSERT INTO watched_folders (id, org_id, path, project_id, origin, active, created_at) VALUES (?, ?, ?, 'p-w', ?, ?, 'x')", [id, orgId, path, origin, active]);
      return (await allWatchedFolders(db)).find((w) => w.id === id)!;
    };
    const inbox = await watch("w-2", "/srv/watch-inbox", "setting", 1);
    await watch("w-1", "/srv/watch-archive", "cli", 0);
    const scans = await watch("w-3", "/srv/watch-scans", "cli", 1);
    expect((await allWatchedFolders(db)).filter((w) => w.org_id === orgId).map((w) => w.id)).toEqual(["w-1", "w-2", "w-3"]);
    expect((await activeWatchedFolders(db)).filter((w) => w.org_id === orgId).map((w) => w.id)).toEqual(["w-2", "w-3"]);
    await scanned(db, clock, inbox.id, "permission denied");

    const first = await claimItem(db, clock, inbox, "a/one.pdf", 10);
    const second = await claimItem(db, clock, inbox, "two.pdf", 20);
    const third = await claimItem(db, clock, inbox, "three.pdf", 30);
    expect((await openItems(db, inbox.id)).map((i) => i.id).sort()).toEqual([first.id, second.id, third.id].sort());
    clock.advance(1_000);
    await finishItem(db, clock, first.id, { status: "done", movedTo: "done/a/one.pdf", error: null });
    await finishItem(db, clock, second.id, { status: "failed", movedTo: "failed/two.pdf", error: "unsupported file", fileId: "f-other" });
    expect((await openItems(db, inbox.id)).map((i) => i.id)).toEqual([third.id]);
    const [listed, other] = [await watchedFoldersOf(db, orgId, 2), await watchedFoldersOf(db, "org-other", 2)];
    expect(other).toEqual([]);
    expect(listed.map((w) => [w.id, w.active, w.last_error, w.counts])).toEqual([
      ["w-1", false, null, { ingesting: 0, done: 0, failed: 0 }],
      ["w-2", true, "permission denied", { ingesting: 1, done: 1, failed: 1 }],
      ["w-3", true, null, { ingesting: 0, done: 0, failed: 0 }],
    ]);
    // The same claim time: the later claim first.
    expect(listed[1]!.recent_items.map((i) => [i.id, i.status, i.moved_to])).toEqual([[third.id, "ingesting", null], [second.id, "failed", "failed/two.pdf"]]);
    expect(listed[1]!.recent_items[1]).toMatchObject({ file_id: "f-other", error: "unsupported file", finished_at: "2031-09-01T00:00:01.000Z" });

    expect(await removeWatchedFolder(db, inbox.path)).toBe(false);
    expect(await removeWatchedFolder(db, scans.path)).toBe(true);
    expect((await allWatchedFolders(db)).filter((w) => w.org_id === orgId).map((w) => w.id)).toEqual(["w-1", "w-2"]);
    await db.run("DELETE FROM watched_folders WHERE org_id = ?", [orgId]);
    expect(await openItems(db, inbox.id)).toEqual([]);
  });

  test("near-duplicates: pairs recorded and replaced, groups of live files with the largest first, not-duplicates and its undo", async () => {
    const db = client();
    const orgId = "org-dup";
    await tenant(db, orgId, "p-dup");
    const image = async (id: string, width: number, created: string) =>
      db.run("INSERT INTO files (id, org_id, project_id, media_type, filename, created_at, updated_at, width, height, size_bytes) VALUES (?, ?, 'p-dup', 'image', ?, ?, ?, ?, ?, 1000)", [
        id, orgId, `${id}.jpg`, created, created, width, width,
      ]);
    await image("dup-a", 800, "2031-01-01T00:00:01.000Z");
    await image("dup-b", 800, "2031-01-01T00:00:02.000Z");
    await image("dup-c", 800, "2031-01-01T00:00:03.000Z");
    await image("dup-d", 1600, "2031-01-01T00:00:04.000Z");
    const thumb = Uint8Array.from({ length: 1024 }, (_, i) => (i * 7) % 256);
    const same = { phash: "01".repeat(32), phashCenter: "01".repeat(32), thumb, sharpness: 5 };
    const different = { phash: "1".repeat(64), phashCenter: "0".repeat(64), thumb: thumb.map((v) => 255 - v), sharpness: 9 };
    const file = (id: string) => ({ id, org_id: orgId });
    expect(await recordFingerprint(db, file("dup-a"), same)).toBe(0);
    expect(await recordFingerprint(db, file("dup-b"), same)).toBe(1);
    expect(await recordFingerprint(db, file("dup-c"), different)).toBe(0);
    expect(await recordFingerprint(db, file("dup-d"), same)).toBe(2);
    // Analysed again: b's pairs are replaced, not added to (the stored thumbnails read back as they were written).
    expect(await recordFingerprint(db, file("dup-b"), { ...same, sharpness: 7 })).toBe(2);
    expect((await db.one<{ n: number }>("SELECT count(*) AS n FROM duplicate_pairs WHERE org_id = ?", [orgId]))!.n).toBe(3);
    const groups = await groupMemberships(db, orgId);
    expect(groups.map((g) => g.memberIds)).toEqual([["dup-a", "dup-b", "dup-d"]]);
    const [group] = await withMembers(db, groups);
    expect(group!.best).toBe("dup-d");
    expect(group!.members.map((m) => [m.id, m.width, m.sharpness])).toEqual([["dup-d", 1600, 5], ["dup-a", 800, 5], ["dup-b", 800, 7]]);
    expect(await groupMemberships(db, "org-other")).toEqual([]);

    // a and b are not copies: still grouped through d. All three: no group.
    expect(await dismissDuplicates(db, orgId, ["dup-b", "dup-a"], "2031-01-02T00:00:00.000Z")).toBe(1);
    expect((await groupMemberships(db, orgId)).map((g) => g.memberIds)).toEqual([["dup-a", "dup-b", "dup-d"]]);
    expect(await dismissDuplicates(db, orgId, ["dup-a", "dup-b", "dup-d"], "2031-01-02T00:00:00.000Z")).toBe(3);
    expect(await groupMemberships(db, orgId)).toEqual([]);
    expect(await undismissDuplicates(db, orgId, ["dup-d", "dup-a"])).toBe(1);
    expect((await groupMemberships(db, orgId)).map((g) => g.memberIds)).toEqual([["dup-a", "dup-d"]]);
    // A deleted file leaves its groups.
    await db.run("UPDATE files SET deleted_at = 'x' WHERE id = 'dup-d'");
    expect(await groupMemberships(db, orgId)).toEqual([]);
  });

  test("people: listed named first in any case, then by files; hidden, renamed, merged; files and faces newest taken first, undated last; a face reassigned", async () => {
    const db = client();
    const clock = new ManualClock(Date.UTC(2031, 9, 1));
    const orgId = "org-ppl";
    await tenant(db, orgId, "p-ppl");
    const photo = (id: string, taken: string | null, created: string, deleted: string | null = null) =>
      db.run("INSERT INTO files (id, org_id, project_id, media_type, filename, created_at, updated_at, content_created_at, deleted_at) VALUES (?, ?, 'p-ppl', 'image', ?, ?, ?, ?, ?)", [
        id, orgId, `${id}.jpg`, created, created, taken, deleted,
      ]);
    await photo("ppl-f1", "2031-03-01T00:00:00.000Z", "2031-09-01T00:00:01.000Z");
    await photo("ppl-f2", null, "2031-09-01T00:00:02.000Z");
    await photo("ppl-f3", "2031-05-01T00:00:00.000Z", "2031-09-01T00:00:03.000Z");
    await photo("ppl-gone", "2031-06-01T00:00:00.000Z", "2031-09-01T00:00:04.000Z", "2031-09-02T00:00:00.000Z");
    const person = (id: string, name: string | null, hidden = 0) =>
      db.run("INSERT INTO people (id, org_id, name, hidden, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)", [id, orgId, name, hidden, "2031-09-01T00:00:00.000Z", "x"]);
    await person("ppl-bob", "bob");
    await person("ppl-ann", "Ann");
    await person("ppl-none", null);
    await person("ppl-zed", "Zed", 1);
    await person("ppl-ghost", "Ghost");
    const face = (id: string, file: string, personId: string | null, size: number) =>
      db.run("INSERT INTO faces (id, file_id, org_id, person_id, x_min, y_min, x_max, y_max, score, created_at) VALUES (?, ?, ?, ?, 0, 0, ?, ?, 0.9, 'x')", [id, file, orgId, personId, size, size]);
    await face("fa-1", "ppl-f1", "ppl-bob", 10);
    await face("fa-2", "ppl-f2", "ppl-bob", 30);
    await face("fa-3", "ppl-f3", "ppl-ann", 20);
    await face("fa-4", "ppl-f1", "ppl-none", 5);
    await face("fa-5", "ppl-f1", "ppl-zed", 5);
    await face("fa-6", "ppl-gone", "ppl-ghost", 5);

    // Named first by name whatever its case, the unnamed after; the hidden only when asked; a person left only in trashed files not at all.
    const listed = await listPeople(db, orgId, { includeHidden: false, limit: 10, offset: 0 });
    expect([listed.total, listed.people.map((p) => [p.id, p.faceCount, p.fileCount])]).toEqual([3, [["ppl-ann", 1, 1], ["ppl-bob", 2, 2], ["ppl-none", 1, 1]]]);
    expect((await listPeople(db, orgId, { includeHidden: true, limit: 1, offset: 2 })).people.map((p) => p.id)).toEqual(["ppl-zed"]);
    // The cover: the largest face.
    expect((await getPerson(db, orgId, "PPL-BOB")).cover).toEqual({ faceId: "fa-2", fileId: "ppl-f2", box: { x_min: 0, y_min: 0, x_max: 30, y_max: 30 } });
    await expect(getPerson(db, orgId, "ppl-ghost")).rejects.toThrow(/not found/);
    await expect(getPerson(db, "org-other", "ppl-bob")).rejects.toThrow(/not found/);
    // Newest taken first, the file with no date taken last (PostgreSQL would put it first unasked).
    expect(await personFileIds(db, orgId, "ppl-bob", 10, 0)).toEqual({ ids: ["ppl-f1", "ppl-f2"], total: 2 });
    expect((await personFaces(db, orgId, "ppl-bob", 10, 0)).faces.map((f) => [f.id, f.filename, f.personName])).toEqual([["fa-1", "ppl-f1.jpg", "bob"], ["fa-2", "ppl-f2.jpg", "bob"]]);

    clock.advance(1_000);
    expect(await updatePerson({ sql: db, clock }, orgId, "ppl-none", { name: "  Cleo " })).toMatchObject({ name: "Cleo", hidden: false, updatedAt: "2031-10-01T00:00:01.000Z" });
    expect((await updatePerson({ sql: db, clock }, orgId, "ppl-zed", { hidden: false })).hidden).toBe(false);
    // Merged: the faces move, the sources go, the unnamed target would take a source's name.
    const merged = await mergePeople({ sql: db, clock }, orgId, "ppl-ann", ["ppl-bob", "ppl-zed"]);
    expect([merged.name, merged.faceCount, merged.fileCount]).toEqual(["Ann", 4, 3]);
    await expect(getPerson(db, orgId, "ppl-bob")).rejects.toThrow(/not found/);
    await expect(mergePeople({ sql: db, clock }, orgId, "ppl-ann", ["ppl-ann"])).rejects.toThrow(/itself/);

    // A face given to Cleo, then to nobody: reviewed, both people touched.
    clock.advance(1_000);
    expect(await assignFace({ sql: db, clock }, orgId, "FA-3", "ppl-none")).toEqual({
      id: "fa-3", fileId: "ppl-f3", personId: "ppl-none", personName: "Cleo", box: { x_min: 0, y_min: 0, x_max: 20, y_max: 20 }, score: 0.9,
    });
    expect((await assignFace({ sql: db, clock }, orgId, "fa-3", null)).personId).toBeNull();
    expect((await db.one<{ reviewed: number }>("SELECT reviewed FROM faces WHERE id = 'fa-3'"))!.reviewed).toBe(1);
    expect((await getPerson(db, orgId, "ppl-ann")).updatedAt).toBe("2031-10-01T00:00:02.000Z");
    await expect(assignFace({ sql: db, clock }, orgId, "fa-6", null)).rejects.toThrow(/not found/);
    await expect(assignFace({ sql: db, clock }, "org-other", "fa-1", null)).rejects.toThrow(/not found/);
  });

  test.skipIf(name === "postgres" && !pgvector)("faces: stored with their vectors, joining the person of a like face; clustered once; found again in other files; removed with their vectors", async () => {
    const db = client();
    const clock = new ManualClock(Date.UTC(2031, 10, 1));
    const orgId = "org-faces";
    await tenant(db, orgId, "p-faces");
    // The vector spaces of this engine: sqlite-vec on SQLite, pgvector on PostgreSQL.
    const spaces: VectorSpaces = name === "sqlite" ? new SqliteVectorSpaces(sqlite(), clock) : new PgVectorIndex(db, clock);
    const deps = { sql: db, clock, spaces };
    let seed = 7;
    const next = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648) - 0.5;
    const someone = Float32Array.from({ length: FACE_DIMENSION }, next);
    const near = (noise: number) => someone.map((v) => v + noise * next());
    const box = { x_min: 0, y_min: 0, x_max: 10, y_max: 10 };
    const store = async (file: string, embedding: Float32Array) => {
      await db.run("INSERT INTO files (id, org_id, project_id, media_type, filename, created_at, updated_at) VALUES (?, ?, 'p-faces', 'image', ?, 'x', 'x') ON CONFLICT DO NOTHING", [file, orgId, `${file}.jpg`]);
      return storeFaces(deps, { id: file, org_id: orgId }, [{ box, score: 0.9, embedding }]);
    };
    const faceOf = async (file: string) => (await db.one<{ id: string; person_id: string | null }>("SELECT id, person_id FROM faces WHERE file_id = ?", [file]))!;
    // No one like them has a person yet: stored without one.
    expect([await store("fc-a", near(0.1)), await store("fc-b", near(0.2)), await store("fc-c", near(0.3)), await store("fc-d", Float32Array.from({ length: FACE_DIMENSION }, next))]).toEqual([0, 0, 0, 0]);
    // fc-a..c are one person; fc-d has no one like it (a person needs two faces). Run again: nothing left, nobody moved.
    expect(await clusterUnassigned(deps, orgId)).toEqual({ people: 1, faces: 3 });
    expect(await clusterUnassigned(deps, orgId)).toEqual({ people: 0, faces: 0 });
    const personId = (await faceOf("fc-a")).person_id!;
    expect([(await faceOf("fc-d")).person_id, (await faceOf("fc-c")).person_id]).toEqual([null, personId]);
    // A new photo of them joins the person at once; fc-a analysed again keeps its face and person.
    expect(await store("fc-e", near(0.15))).toBe(1);
    const first = await faceOf("fc-a");
    expect(await storeFaces(deps, { id: "fc-a", org_id: orgId }, [{ box, score: 0.9, embedding: near(0.1) }])).toBe(1);
    expect(await faceOf("fc-a")).toEqual(first);
    expect((await getPerson(db, orgId, personId)).faceCount).toBe(4);

    const similar = await similarFaces(deps, orgId, first.id.toUpperCase(), 10);
    expect(similar.map((f) => f.fileId).sort()).toEqual(["fc-b", "fc-c", "fc-e"]);
    expect(similar.every((f, i) => f.personId === personId && (i === 0 || f.similarity <= similar[i - 1]!.similarity))).toBe(true);
    expect(await similarFaces(deps, orgId, (await faceOf("fc-d")).id, 10)).toEqual([]);
    await expect(similarFaces(deps, "org-other", first.id, 10)).rejects.toThrow(/not found/);

    // Removed (a purge): the rows and the vectors go.
    const gone = (await faceOf("fc-e")).id;
    await removeFaces(deps, "fc-e");
    expect(await db.one("SELECT id FROM faces WHERE file_id = 'fc-e'")).toBeNull();
    expect((await (await spaces.find("face", FACE_MODEL))!.vectorsOf([gone, first.id])).size).toBe(1);
    expect((await similarFaces(deps, orgId, first.id, 10)).map((f) => f.fileId).sort()).toEqual(["fc-b", "fc-c"]);
  });
});
