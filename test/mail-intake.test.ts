/**
 * Mail intake against a real IMAP server (Debian's Dovecot, started by the test): an account's
 * filtered messages have their attachments stored (tags, folder, source mail) and are flagged,
 * others are left alone; a second poll takes nothing twice; the move-after action and the message
 * as a document; the password sealed at rest; the address policy; validation, roles, tenants.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { elf, pdf } from "./support/fixtures.ts";
import { startDovecot, mimeMessage, type Dovecot } from "./support/dovecot.ts";
import { jobDone, pollApi, processed } from "./support/polling.ts";
import { startTestServer, type Tenant, type TestServer } from "./support/server.ts";

let server: TestServer;
let imap: Dovecot;
beforeAll(async () => {
  imap = await startDovecot();
  server = await startTestServer({ env: { MEDIABOX_MAIL_ALLOW_CIDRS: "127.0.0.1/32" } });
});
afterAll(async () => {
  await server?.close();
  await imap?.stop();
});

const text = (s: string) => new TextEncoder().encode(s);

async function poll(tenant: Tenant, accountId: string) {
  const started = await tenant.api.post(`/mail-accounts/${accountId}/poll`);
  expect(started.status).toBe(202);
  const job = await jobDone(tenant, started.body.job_id);
  expect(job.status).toBe("completed");
  return job.results[0];
}

describe("an IMAP account", () => {
  test("attachments of the messages its filters take are stored and the messages flagged; the others are left alone; nothing is taken twice", async () => {
    const tenant = await server.tenant({ tier: "CUSTOM" });
    const folder = (await tenant.api.post("/folders", { name: "Mail" })).body;
    await imap.append(mimeMessage({ from: "Alice <alice@example.com>", subject: "Invoice March", text: "see attached", attachments: [
      { filename: "invoice.pdf", type: "application/pdf", bytes: pdf("Invoice 2024-3 total 120 EUR") },
      { filename: "notes.txt", type: "text/plain", bytes: text("remember to pay") },
      { filename: "tool.exe", type: "application/octet-stream", bytes: elf() },
    ] }));
    await imap.append(mimeMessage({ from: "Bob <bob@example.org>", subject: "Lunch", text: "pizza?", attachments: [{ filename: "menu.txt", type: "text/plain", bytes: text("pizza") }] }));
    await imap.append(mimeMessage({ from: "Alice <alice@example.com>", subject: "Hello", text: "no attachment here" }));

    const created = await tenant.api.post("/mail-accounts", {
      name: "scans", host: "127.0.0.1", port: imap.port, tls: "none", username: imap.user, password: imap.password,
      from_contains: "example.com", attachment_types: ["pdf", "exe", "text/plain"], folder_id: folder.id, tags: ["mail", "inbox"],
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body).toMatchObject({ has_password: true, after_action: "flag", mailbox: "INBOX", folder_id: folder.id, tags: ["mail", "inbox"] });
    expect(JSON.stringify(created.body)).not.toContain(imap.password);
    const sealed = (await server.ctx.sql.one<{ password: string }>("SELECT password FROM mail_accounts WHERE id = ?", [created.body.id]))!.password;
    expect(sealed.startsWith("v1.")).toBe(true);
    expect(sealed).not.toContain(imap.password);

    const summary = await poll(tenant, created.body.id);
    // tool.exe is named but refused by type detection; the .txt and .pdf are stored.
    expect(summary).toMatchObject({ messages_seen: 3, messages_taken: 1, messages_skipped: 2, files_stored: 2, files_failed: 1 });
    const messages = (await tenant.api.get(`/mail-accounts/${created.body.id}/messages`)).body.items;
    const bySubject = Object.fromEntries(messages.map((m: any) => [m.subject, m]));
    expect(bySubject["Lunch"]).toMatchObject({ status: "skipped", error: 'the sender does not contain "example.com"' });
    expect(bySubject["Hello"]).toMatchObject({ status: "skipped", error: expect.stringContaining("no attachment") });
    const invoice = bySubject["Invoice March"];
    expect(invoice).toMatchObject({ status: "done", sender: "Alice <alice@example.com>" });
    expect(invoice.parts.map((p: any) => [p.filename, p.status])).toEqual([["invoice.pdf", "stored"], ["notes.txt", "stored"], ["tool.exe", "failed"]]);
    expect(invoice.parts[2].error).toContain("unsupported or unsafe");

    const stored = (await tenant.api.get(`/files/${invoice.parts[0].file_id}`)).body;
    expect(stored).toMatchObject({ filename: "invoice.pdf", media_type: "document", folder_id: folder.id });
    expect(stored.tags).toEqual(expect.arrayContaining(["mail", "inbox"]));
    const flags = await imap.flagsBySubject();
    expect(flags["Invoice March"]).toEqual(expect.arrayContaining(["\\Flagged", "\\Seen"]));
    expect(flags["Lunch"]).not.toContain("\\Flagged");
    expect(flags["Hello"]).not.toContain("\\Flagged");
    await pollApi(tenant, `/files/${stored.id}`, (r) => r.body.processing_status === "completed", { what: "the invoice's analysis" });
    expect((await tenant.api.post("/rules/dry-run", { conditions: [{ field: "source", op: "equals", value: "mail" }] })).body.matched_count).toBeGreaterThanOrEqual(1);

    // A second poll finds nothing new, even though the messages are still there.
    expect(await poll(tenant, created.body.id)).toMatchObject({ messages_seen: 0, files_stored: 0 });
    await imap.append(mimeMessage({ from: "alice@example.com", subject: "Second", text: "more", attachments: [{ filename: "b.txt", type: "text/plain", bytes: text("second file") }] }));
    expect(await poll(tenant, created.body.id)).toMatchObject({ messages_seen: 1, messages_taken: 1, files_stored: 1 });
    const account = (await tenant.api.get(`/mail-accounts/${created.body.id}`)).body;
    expect(account).toMatchObject({ last_error: null, messages: { done: 2, skipped: 2, failed: 0, ingesting: 0 } });
    expect(account.last_polled_at).not.toBeNull();
  });

  test("move after success, and the message itself as a document", async () => {
    const tenant = await server.tenant({ tier: "CUSTOM" });
    const c = await imap.client();
    await c.mailboxCreate("Receipts").catch(() => {});
    await c.logout();
    await imap.append(mimeMessage({ from: "shop@example.net", subject: "Your receipt 991", text: "Thank you for your order of 3 lamps." }), "Receipts");
    const created = await tenant.api.post("/mail-accounts", {
      name: "receipts", host: "127.0.0.1", port: imap.port, tls: "none", username: imap.user, password: imap.password, mailbox: "Receipts",
      after_action: "move", move_to: "Processed", ingest_body: true,
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(await poll(tenant, created.body.id)).toMatchObject({ messages_taken: 1, files_stored: 1 });
    const [message] = (await tenant.api.get(`/mail-accounts/${created.body.id}/messages`)).body.items;
    expect(message.parts).toMatchObject([{ part: "body", filename: "Your receipt 991.txt", status: "stored" }]);
    await processed(tenant, message.parts[0].file_id);
    const text = await tenant.api.get(`/files/${message.parts[0].file_id}/text`);
    expect(text.body.text).toContain("3 lamps");
    expect(text.body.text).toContain("shop@example.net");
    expect((await tenant.api.get(`/mail-accounts/${created.body.id}`)).body.last_error).toBeNull();
    expect(Object.keys(await imap.flagsBySubject("Receipts"))).toEqual([]);
    expect(Object.keys(await imap.flagsBySubject("Processed"))).toEqual(["Your receipt 991"]);
  });

  test("a server address outside the allow-list is refused and the reason kept on the account", async () => {
    const tenant = await server.tenant({ tier: "CUSTOM" });
    const created = (await tenant.api.post("/mail-accounts", { name: "intranet", host: "10.20.30.40", tls: "none", username: "u", password: "p" })).body;
    expect(created.port).toBe(143);
    await poll(tenant, created.id);
    const account = (await tenant.api.get(`/mail-accounts/${created.id}`)).body;
    expect(account.last_error).toContain("blocked address 10.20.30.40 (private); MEDIABOX_MAIL_ALLOW_CIDRS lists the ranges mail servers may reach");
  });
});

describe("mail accounts API", () => {
  test("validation, patch, delete", async () => {
    const tenant = await server.tenant({ tier: "CUSTOM" });
    const base = { name: "a", host: "imap.example.com", username: "u", password: "p" };
    for (const [body, mention] of [
      [{ ...base, host: "bad host!" }, "host"],
      [{ ...base, after_action: "move" }, "move_to"],
      [{ ...base, attachment_types: ["not a type!"] }, "attachment_types"],
      [{ ...base, poll_interval_seconds: 5 }, "poll_interval_seconds"],
      [{ ...base, password: "" }, "password"],
      [{ ...base, tls: "ssl" }, "tls"],
    ] as [unknown, string][]) {
      const res = await tenant.api.post("/mail-accounts", body);
      expect({ body, status: res.status }).toEqual({ body, status: 400 });
      expect(res.body.detail).toContain(mention);
    }
    const made = await tenant.api.post("/mail-accounts", base);
    expect(made.body).toMatchObject({ port: 993, tls: "implicit", poll_interval_seconds: 300 });
    expect((await tenant.api.post("/mail-accounts", base)).status).toBe(409);
    const patched = await tenant.api.patch(`/mail-accounts/${made.body.id}`, { subject_contains: "invoice", enabled: false, password: "new" });
    expect(patched.body).toMatchObject({ subject_contains: "invoice", enabled: false, has_password: true });
    expect((await tenant.api.delete(`/mail-accounts/${made.body.id}`)).status).toBe(204);
    expect((await tenant.api.get(`/mail-accounts/${made.body.id}`)).body.code).toBe("MAIL_ACCOUNT_NOT_FOUND");
  });

  test("roles are checked before the body; another organization's accounts are 404", async () => {
    const tenant = await server.tenant({ tier: "CUSTOM" });
    const viewer = await tenant.keyWith(["view"]);
    expect((await viewer.post("/mail-accounts", { nonsense: 1 })).status).toBe(403);
    const made = (await tenant.api.post("/mail-accounts", { name: "a", host: "imap.example.com", username: "u", password: "p", enabled: false })).body;
    expect((await viewer.post(`/mail-accounts/${made.id}/poll`)).status).toBe(403);
    const stranger = await server.tenant({ tier: "CUSTOM" });
    for (const res of [
      await stranger.api.get(`/mail-accounts/${made.id}`),
      await stranger.api.patch(`/mail-accounts/${made.id}`, { enabled: true }),
      await stranger.api.delete(`/mail-accounts/${made.id}`),
      await stranger.api.post(`/mail-accounts/${made.id}/poll`),
      await stranger.api.get(`/mail-accounts/${made.id}/messages`),
    ]) {
      expect([res.status, res.body.code]).toEqual([404, "MAIL_ACCOUNT_NOT_FOUND"]);
    }
    expect((await stranger.api.get("/mail-accounts")).body.items).toEqual([]);
  });
});
