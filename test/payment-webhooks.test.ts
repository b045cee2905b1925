/**
 * POST /payment/webhooks/{provider} over real HTTP: HMAC-SHA256 over `timestamp.body`, the
 * tolerance window, forged and replayed deliveries, idempotency by event id, tier changes in
 * order, and the 200 requests/minute per IP limit.
 */
import { afterEach, expect, test } from "bun:test";
import { ManualClock } from "../src/clock.ts";
import { signPayload } from "../src/payments/webhooks.ts";
import { ApiClient, startTestServer, type TestServer } from "./support/server.ts";

const SECRET = "whsec_test_0123456789abcdef";
const servers: TestServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
});

async function server(clock?: ManualClock): Promise<TestServer> {
  const s = await startTestServer({ ...(clock ? { clock } : {}), env: { MEDIABOX_PAYMENT_WEBHOOK_SECRET: SECRET, MEDIABOX_PAYMENT_PROVIDER: "stripe" } });
  servers.push(s);
  return s;
}

let events = 0;
function event(orgId: string, tier: string, type = "subscription.updated", created = Math.floor(Date.now() / 1000)) {
  events += 1;
  return { id: `evt_${events}_${crypto.randomUUID().slice(0, 8)}`, type, created, data: { organization_id: orgId, tier, status: "active" } };
}

function deliver(client: ApiClient, body: string, options: { secret?: string; timestamp?: number; header?: string; provider?: string } = {}) {
  const timestamp = options.timestamp ?? Math.floor(Date.now() / 1000);
  const signature = options.header ?? `t=${timestamp},v1=${signPayload(options.secret ?? SECRET, timestamp, body)}`;
  return client.request("POST", `/payment/webhooks/${options.provider ?? "stripe"}`, body, { "content-type": "application/json", "webhook-signature": signature });
}

async function tierOf(s: TestServer, orgId: string): Promise<string> {
  return (await s.ctx.sql.one<{ tier: string }>("SELECT tier FROM organizations WHERE id = ?", [orgId]))!.tier;
}

test("a signed subscription event changes the tier; a replay is acknowledged and changes nothing", async () => {
  const s = await server();
  const tenant = await s.tenant({ tier: "STARTER" });
  const client = s.anonymous();
  const body = JSON.stringify(event(tenant.orgId, "ENTERPRISE"));
  const first = await deliver(client, body);
  expect(first.status).toBe(200);
  expect(first.body.outcome).toBe("tier_changed");
  expect(await tierOf(s, tenant.orgId)).toBe("ENTERPRISE");
  expect((await tenant.api.get("/projects")).headers.get("x-ratelimit-limit")).toBe("500");

  // The provider redelivers (same id): 200, duplicate, and a tier changed meanwhile stays.
  await s.ctx.sql.run("UPDATE organizations SET tier = 'PROFESSIONAL' WHERE id = ?", [tenant.orgId]);
  const replay = await deliver(client, body);
  expect(replay.status).toBe(200);
  expect(replay.body.outcome).toBe("duplicate");
  expect(await tierOf(s, tenant.orgId)).toBe("PROFESSIONAL");
  const stored = (await s.ctx.sql.one<{ n: number }>("SELECT count(*) AS n FROM payment_events"))!.n;
  expect(stored).toBe(1);
});

test("forged, missing, stale and future signatures are 401 and change nothing", async () => {
  const s = await server();
  const tenant = await s.tenant({ tier: "STARTER" });
  const client = s.anonymous();
  const body = JSON.stringify(event(tenant.orgId, "CUSTOM"));
  const now = Math.floor(Date.now() / 1000);
  const cases: Record<string, Parameters<typeof deliver>[2]> = {
    "wrong secret": { secret: "whsec_attacker" },
    "no header": { header: "" },
    "garbage header": { header: "sha256=abc" },
    // Ten seconds past the 300 s tolerance each way: `now` is floored to the second and the server reads its clock later.
    "too old": { timestamp: now - 310 },
    "from the future": { timestamp: now + 310 },
    "signature of another timestamp": { header: `t=${now},v1=${signPayload(SECRET, now - 1, body)}` },
  };
  for (const [name, options] of Object.entries(cases)) {
    const res = await deliver(client, body, options);
    expect(res.status, name).toBe(401);
    expect(res.body.code, name).toBe("WEBHOOK_SIGNATURE_INVALID");
  }
  // A body changed after signing.
  const tampered = await client.request("POST", "/payment/webhooks/stripe", body.replace("CUSTOM", "ENTERPRISE"), {
    "content-type": "application/json", "webhook-signature": `t=${now},v1=${signPayload(SECRET, now, body)}`,
  });
  expect(tampered.status).toBe(401);
  expect(await tierOf(s, tenant.orgId)).toBe("STARTER");
  expect((await s.ctx.sql.one<{ n: number }>("SELECT count(*) AS n FROM payment_events"))!.n).toBe(0);
});

test("a signed but malformed body is 400; another provider is 404; Stripe's header name is read too", async () => {
  const s = await server();
  const tenant = await s.tenant({ tier: "STARTER" });
  const client = s.anonymous();
  expect((await deliver(client, "not json")).status).toBe(400);
  expect((await deliver(client, JSON.stringify({ type: "x" }))).status).toBe(400);
  expect((await deliver(client, JSON.stringify(event(tenant.orgId, "PLATINUM")))).status).toBe(400);
  expect((await deliver(client, JSON.stringify(event(tenant.orgId, "CUSTOM")), { provider: "paypal" })).status).toBe(404);
  // Anonymous routes read small bodies whatever their type: no 5 GB text/plain body is buffered.
  const huge = await client.request("POST", "/payment/webhooks/stripe", "x".repeat(1024 * 1024 + 1), { "content-type": "text/plain", "webhook-signature": "t=1,v1=00" });
  expect(huge.status).toBe(413);
  const body = JSON.stringify(event(tenant.orgId, "FREE", "subscription.deleted"));
  const now = Math.floor(Date.now() / 1000);
  const res = await client.request("POST", "/payment/webhooks/stripe", body, { "content-type": "application/json", "stripe-signature": `t=${now},v1=${signPayload(SECRET, now, body)}` });
  expect(res.status).toBe(200);
  expect(await tierOf(s, tenant.orgId)).toBe("FREE");
  const other = JSON.stringify(event(tenant.orgId, "", "invoice.paid"));
  expect((await deliver(client, other)).body.outcome).toBe("ignored");
  expect((await deliver(client, JSON.stringify(event(crypto.randomUUID(), "CUSTOM")))).body.outcome).toBe("unknown_organization");
});

test("an older subscription event arriving late does not undo a newer one", async () => {
  const s = await server();
  const tenant = await s.tenant({ tier: "STARTER" });
  const client = s.anonymous();
  const now = Math.floor(Date.now() / 1000);
  expect((await deliver(client, JSON.stringify(event(tenant.orgId, "ENTERPRISE", "subscription.updated", now)))).body.outcome).toBe("tier_changed");
  expect((await deliver(client, JSON.stringify(event(tenant.orgId, "PROFESSIONAL", "subscription.updated", now - 60)))).body.outcome).toBe("stale");
  expect(await tierOf(s, tenant.orgId)).toBe("ENTERPRISE");
});

test("200 deliveries a minute per IP, then 429; another IP is unaffected", async () => {
  const clock = new ManualClock();
  const s = await server(clock);
  const client = s.anonymous();
  // Unsigned deliveries are cheap to refuse, and they count like any other.
  const statuses: number[] = [];
  for (let i = 0; i < 201; i++) statuses.push((await deliver(client, "{}", { header: "" })).status);
  expect(statuses.slice(0, 200).every((st) => st === 401)).toBe(true);
  expect(statuses[200]).toBe(429);
  expect((await deliver(s.anonymous(), "{}", { header: "" })).status).toBe(401);
  clock.advance(60_000);
  expect((await deliver(client, "{}", { header: "" })).status).toBe(401);
});
