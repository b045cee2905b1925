/**
 * Outbound webhooks through real HTTP, with real receivers on loopback: a signed file.completed
 * that verifies and is retried after a 500, the dead-letter list and a retry by hand, rule.applied
 * through a rule's call_webhook action, batch.completed, and the link crawler's address policy
 * (loopback only through MEDIABOX_WEBHOOK_ALLOW_CIDRS, both when a webhook is saved and when it is
 * delivered to a name that resolves to loopback).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { verifySignature } from "../src/payments/webhooks.ts";
import { pollApi, processed, waitFor } from "./support/polling.ts";
import { startTestServer, type Tenant, type TestServer } from "./support/server.ts";
import { uploadFile } from "./support/uploads.ts";

interface Received {
  headers: Headers;
  body: string;
}

/** A webhook receiver on loopback answering with the statuses `answer` picks per request. */
function receiver(answer: (n: number, body: any) => number) {
  const received: Received[] = [];
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(req) {
      const body = await req.text();
      received.push({ headers: req.headers, body });
      return new Response("ok", { status: answer(received.length, JSON.parse(body)) });
    },
  });
  return { url: `http://127.0.0.1:${server.port}/hook`, port: server.port, received, stop: () => server.stop(true) };
}

let server: TestServer;
const receivers: { stop(): void }[] = [];
beforeAll(async () => {
  server = await startTestServer({
    env: { MEDIABOX_WEBHOOK_ALLOW_CIDRS: "127.0.0.1/32", MEDIABOX_WEBHOOK_PORTS: "any", MEDIABOX_LINK_PORTS: "any", MEDIABOX_WEBHOOK_RETRY_BASE_MS: "200", MEDIABOX_WEBHOOK_MAX_ATTEMPTS: "3" },
  });
});
afterAll(async () => {
  for (const r of receivers) r.stop();
  await server.close();
});

function track<T extends { stop(): void }>(r: T): T {
  receivers.push(r);
  return r;
}

const uploadText = (tenant: Tenant, text: string, filename: string) => uploadFile(tenant.api, text, filename, {}, { type: "text/plain" });

describe("deliveries", () => {
  test("a receiver on loopback gets a signed file.completed that verifies, retried after a 500", async () => {
    const hook = track(receiver((n) => (n === 1 ? 500 : 200)));
    const tenant = await server.tenant({ tier: "CUSTOM" });
    const created = await tenant.api.post("/webhooks", { url: hook.url, events: ["file.completed"], description: "ops" });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const secret = created.body.secret as string;
    expect(secret).toMatch(/^whsec_/);
    expect(created.body.secret_hint).toBe(secret.slice(-4));
    expect((await tenant.api.get(`/webhooks/${created.body.id}`)).body.secret).toBeUndefined();
    // Sealed at rest: the stored value is not the secret.
    const stored = (await server.ctx.sql.one<{ secret: string }>("SELECT secret FROM webhooks WHERE id = ?", [created.body.id]))!.secret;
    expect(stored.startsWith("v1.")).toBe(true);
    expect(stored).not.toContain(secret);

    const fileId = await uploadText(tenant, "hello webhooks", "hello.txt");
    await processed(tenant, fileId);
    await waitFor(() => hook.received.length >= 2, { what: "the retried delivery" });
    const [first, second] = hook.received;
    expect(first!.body).toBe(second!.body);
    for (const r of [first!, second!]) {
      expect(r.headers.get("content-type")).toBe("application/json");
      expect(r.headers.get("mediabox-event")).toBe("file.completed");
      verifySignature(r.headers.get("mediabox-signature"), r.body, secret, Date.now(), 300);
      expect(() => verifySignature(r.headers.get("mediabox-signature"), r.body, "whsec_wrong-secret-123", Date.now(), 300)).toThrow();
    }
    const event = JSON.parse(second!.body);
    expect(event).toMatchObject({ type: "file.completed", organization_id: tenant.orgId, data: { file: { id: fileId, filename: "hello.txt", media_type: "document", processing_status: "completed" } } });

    const delivery = await pollApi(tenant, `/webhook-deliveries?webhook_id=${created.body.id}`, (r) => r.body.items[0]?.status === "delivered", { what: "the delivery to be recorded delivered" });
    const d = delivery.body.items[0];
    expect(d).toMatchObject({ id: second!.headers.get("mediabox-delivery"), event_type: "file.completed", attempts: 2, last_status_code: 200, last_error: null, url: hook.url });
    expect(d.attempt_log.map((a: any) => [a.attempt, a.status_code, a.error])).toEqual([[1, 500, "HTTP 500"], [2, 200, null]]);
    expect((await tenant.api.get(`/webhooks/${created.body.id}`)).body.deliveries).toEqual({ pending: 0, delivered: 1, failed: 0 });
  });

  test("a delivery that uses up its attempts is dead-lettered, and a retry by hand sends it again", async () => {
    let healthy = false;
    const hook = track(receiver(() => (healthy ? 204 : 503)));
    const tenant = await server.tenant({ tier: "CUSTOM" });
    const webhook = (await tenant.api.post("/webhooks", { url: hook.url, events: ["file.completed"] })).body;
    const test = await tenant.api.post(`/webhooks/${webhook.id}/test`);
    expect(test.status).toBe(202);
    const dead = await pollApi(tenant, "/webhook-deliveries?status=failed", (r) => r.body.total_count === 1, { what: "the delivery to be dead-lettered" });
    expect(dead.body.items[0]).toMatchObject({ id: test.body.delivery_id, event_type: "webhook.test", status: "failed", attempts: 3, last_status_code: 503 });
    expect(hook.received.length).toBe(3);
    expect((await tenant.api.post(`/webhook-deliveries/${crypto.randomUUID()}/retry`)).status).toBe(404);

    healthy = true;
    const retried = await tenant.api.post(`/webhook-deliveries/${test.body.delivery_id}/retry`);
    expect(retried.status).toBe(200);
    expect(retried.body.status).toBe("pending");
    const done = await pollApi(tenant, `/webhook-deliveries/${test.body.delivery_id}`, (r) => r.body.status === "delivered", { what: "the retried delivery" });
    expect(done.body.attempts).toBe(4);
    expect(hook.received.length).toBe(4);
    expect((await tenant.api.post(`/webhook-deliveries/${test.body.delivery_id}/retry`)).body.code).toBe("WEBHOOK_DELIVERY_NOT_FAILED");
  });

  test("rule.applied goes to the receiver a rule's call_webhook action names; batch.completed when an upload session ends", async () => {
    const hook = track(receiver(() => 200));
    const tenant = await server.tenant({ tier: "CUSTOM" });
    const webhook = (await tenant.api.post("/webhooks", { url: hook.url, events: ["batch.completed"] })).body;
    const rule = await tenant.api.post("/rules", { name: "notify", conditions: [{ field: "text", op: "contains", value: "urgent" }], actions: [{ type: "add_tags", tags: ["urgent"] }, { type: "call_webhook", webhook_id: webhook.id }] });
    expect(rule.status, JSON.stringify(rule.body)).toBe(201);
    const form = new FormData();
    form.append("files", new Blob(["URGENT: call back"]), "urgent.txt");
    form.append("files", new Blob(["nothing"]), "calm.txt");
    const batch = await tenant.api.form("/files/upload/batch", form);
    expect(batch.status).toBe(201);
    const urgentId = batch.body.immediate_results.find((r: any) => r.filename === "urgent.txt").image_id;
    await waitFor(() => hook.received.some((r) => r.headers.get("mediabox-event") === "rule.applied"), { what: "rule.applied" });
    const events = hook.received.map((r) => JSON.parse(r.body));
    expect(events.find((e) => e.type === "batch.completed").data).toEqual({ session_id: batch.body.session_id, status: "completed", total_files: 2, completed_files: 2, failed_files: 0, skipped_files: 0 });
    const applied = events.filter((e) => e.type === "rule.applied");
    expect(applied).toHaveLength(1);
    expect(applied[0].data).toMatchObject({ rule: { id: rule.body.id, name: "notify" }, file: { id: urgentId, tags: expect.arrayContaining(["urgent"]) }, application: { status: "applied" } });
    // The receiver subscribed to no file events: none came.
    expect(events.some((e) => e.type === "file.completed")).toBe(false);
  });
});

describe("address policy", () => {
  test("without the allow-list a loopback address is refused when saved, and a name resolving to loopback when delivered", async () => {
    // Webhooks given a list of their own ("none") no longer follow the crawler's.
    const strict = await startTestServer({ env: { MEDIABOX_LINK_ALLOW_CIDRS: "127.0.0.1/32", MEDIABOX_WEBHOOK_ALLOW_CIDRS: "none", MEDIABOX_WEBHOOK_PORTS: "any", MEDIABOX_WEBHOOK_RETRY_BASE_MS: "200" } });
    try {
      const hook = track(receiver(() => 200));
      const tenant = await strict.tenant({ tier: "CUSTOM" });
      for (const url of [hook.url, `http://[::1]:${hook.port}/`, "http://169.254.169.254/latest", "ftp://example.com/", "http://user:pw@example.com/"]) {
        const res = await tenant.api.post("/webhooks", { url, events: ["file.completed"] });
        expect({ url, status: res.status, code: res.body.code }).toEqual({ url, status: 400, code: "INVALID_WEBHOOK_URL" });
      }
      const refused = await tenant.api.post("/webhooks", { url: hook.url, events: ["file.completed"] });
      expect(refused.body.detail).toBe("url: blocked address 127.0.0.1 (loopback); MEDIABOX_WEBHOOK_ALLOW_CIDRS lists the ranges webhook receivers may reach");
      const named = await tenant.api.post("/webhooks", { url: `http://localhost:${hook.port}/hook`, events: ["file.completed"] });
      expect(named.status).toBe(201);
      const sent = await tenant.api.post(`/webhooks/${named.body.id}/test`);
      const failed = await pollApi(tenant, `/webhook-deliveries/${sent.body.delivery_id}`, (r) => r.body.status === "failed", { what: "the delivery to be refused" });
      // Refused by policy: final at once, nothing reached the receiver.
      expect(failed.body.attempts).toBe(1);
      expect(failed.body.last_error).toMatch(/^blocked address (127\.0\.0\.1|::1) \(loopback\); MEDIABOX_WEBHOOK_ALLOW_CIDRS/);
      expect(hook.received).toHaveLength(0);
    } finally {
      await strict.close();
    }
  });

  test("the webhooks' allow-list opens nothing to the crawler: a link to the receiver's address is blocked", async () => {
    const hook = track(receiver(() => 200));
    const tenant = await server.tenant({ tier: "CUSTOM" });
    const saved = await tenant.api.post("/files/links", { url: `http://127.0.0.1:${hook.port}/page` });
    expect(saved.status, JSON.stringify(saved.body)).toBe(201);
    const link = await pollApi(tenant, `/files/${saved.body.id}`, (r) => r.body.crawl_status === "blocked", { what: "the link's crawl to be blocked" });
    expect(link.body.crawl_error).toBe("blocked address 127.0.0.1 (loopback); MEDIABOX_LINK_ALLOW_CIDRS lists the ranges the crawler may reach");
    expect(hook.received).toHaveLength(0);
  });

  test("without a list of their own, webhooks follow the crawler's allow-list (one setting opens both)", async () => {
    const shared = await startTestServer({ env: { MEDIABOX_LINK_ALLOW_CIDRS: "127.0.0.1/32", MEDIABOX_WEBHOOK_PORTS: "any" } });
    try {
      const hook = track(receiver(() => 200));
      const tenant = await shared.tenant({ tier: "CUSTOM" });
      const saved = await tenant.api.post("/webhooks", { url: hook.url, events: ["file.completed"] });
      expect(saved.status, JSON.stringify(saved.body)).toBe(201);
      const sent = await tenant.api.post(`/webhooks/${saved.body.id}/test`);
      await pollApi(tenant, `/webhook-deliveries/${sent.body.delivery_id}`, (r) => r.body.status === "delivered", { what: "the test delivery" });
      expect(hook.received.length).toBeGreaterThan(0);
    } finally {
      await shared.close();
    }
  });

  test("the default ports are 80 and 443", async () => {
    const plain = await startTestServer();
    try {
      const tenant = await plain.tenant({ tier: "CUSTOM" });
      const res = await tenant.api.post("/webhooks", { url: "http://example.com:8080/hook", events: ["file.completed"] });
      expect([res.status, res.body.code]).toEqual([400, "INVALID_WEBHOOK_URL"]);
      expect(res.body.detail).toBe("url: port 8080 is not allowed (MEDIABOX_WEBHOOK_PORTS allows 80, 443)");
      expect((await tenant.api.post("/webhooks", { url: "https://example.com/hook", events: ["file.completed"] })).status).toBe(201);
    } finally {
      await plain.close();
    }
  });
});

describe("webhooks API", () => {
  test("validation, patch, rotate, delete", async () => {
    const tenant = await server.tenant({ tier: "CUSTOM" });
    const hook = track(receiver(() => 200));
    for (const [body, mention] of [
      [{ url: hook.url, events: [] }, "events"],
      [{ url: hook.url, events: ["file.exploded"] }, "file.exploded"],
      [{ url: hook.url, events: ["file.completed"], secret: "short" }, "secret"],
      [{ events: ["file.completed"] }, "url"],
    ] as [unknown, string][]) {
      const res = await tenant.api.post("/webhooks", body);
      expect({ body, status: res.status }).toEqual({ body, status: 400 });
      expect(res.body.detail).toContain(mention);
    }
    const own = await tenant.api.post("/webhooks", { url: hook.url, events: ["file.failed", "file.failed"], secret: "my-own-secret-0123456789" });
    expect(own.body).toMatchObject({ secret: "my-own-secret-0123456789", events: ["file.failed"], enabled: true });
    const patched = await tenant.api.patch(`/webhooks/${own.body.id}`, { events: ["rule.applied", "batch.completed"], enabled: false });
    expect(patched.body).toMatchObject({ events: ["rule.applied", "batch.completed"], enabled: false });
    expect((await tenant.api.post(`/webhooks/${own.body.id}/test`)).body.delivery_id).toBeNull();
    const rotated = await tenant.api.post(`/webhooks/${own.body.id}/rotate-secret`);
    expect(rotated.body.secret).not.toBe("my-own-secret-0123456789");
    expect(rotated.body.webhook.secret_hint).toBe(rotated.body.secret.slice(-4));
    expect((await tenant.api.delete(`/webhooks/${own.body.id}`)).status).toBe(204);
    expect((await tenant.api.get(`/webhooks/${own.body.id}`)).body.code).toBe("WEBHOOK_NOT_FOUND");
  });

  test("roles are checked before the body; another organization's webhooks and deliveries are 404", async () => {
    const tenant = await server.tenant({ tier: "CUSTOM" });
    const hook = track(receiver(() => 200));
    const viewer = await tenant.keyWith(["view"]);
    expect((await viewer.post("/webhooks", { nonsense: 1 })).status).toBe(403);
    const webhook = (await tenant.api.post("/webhooks", { url: hook.url, events: ["file.completed"] })).body;
    const sent = (await tenant.api.post(`/webhooks/${webhook.id}/test`)).body;
    expect((await viewer.get(`/webhooks/${webhook.id}`)).status).toBe(200);
    expect((await viewer.post(`/webhooks/${webhook.id}/rotate-secret`)).status).toBe(403);
    expect((await viewer.delete(`/webhooks/${webhook.id}`)).status).toBe(403);
    const stranger = await server.tenant({ tier: "CUSTOM" });
    for (const res of [
      await stranger.api.get(`/webhooks/${webhook.id}`),
      await stranger.api.patch(`/webhooks/${webhook.id}`, { enabled: false }),
      await stranger.api.post(`/webhooks/${webhook.id}/test`),
      await stranger.api.post(`/webhooks/${webhook.id}/rotate-secret`),
      await stranger.api.delete(`/webhooks/${webhook.id}`),
      await stranger.api.get(`/webhook-deliveries?webhook_id=${webhook.id}`),
    ]) {
      expect([res.status, res.body.code]).toEqual([404, "WEBHOOK_NOT_FOUND"]);
    }
    expect((await stranger.api.get(`/webhook-deliveries/${sent.delivery_id}`)).body.code).toBe("WEBHOOK_DELIVERY_NOT_FOUND");
    expect((await stranger.api.get("/webhook-deliveries")).body.total_count).toBe(0);
    expect((await stranger.api.post("/rules", { name: "x", actions: [{ type: "call_webhook", webhook_id: webhook.id }] })).status).toBe(400);
  });
});
