/**
 * Cloud drive connections on the data-access port (docs/scale-out.md), on SQLite and PostgreSQL:
 * an OAuth state is used once, only by the key it was issued to, and not after it expires;
 * connections are listed newest first, found per organization, removed, and their tokens
 * re-sealed after a key rotation; a picker session is refused once its connection is gone. The
 * flows through the providers are tested over HTTP in cloud.test.ts. The PostgreSQL half skips,
 * saying why, where no server binary is found.
 */
import { describe, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { ManualClock } from "../src/clock.ts";
import { CloudConnections } from "../src/cloud/connections.ts";
import { TokenVault } from "../src/cloud/token-vault.ts";
import { loadConfig } from "../src/config.ts";
import type { SqlClient } from "../src/db/sql-client.ts";
import { portEngines } from "./support/port-engines.ts";
import { Logger } from "../src/log.ts";

const { engines } = portEngines("cloud");

const config = loadConfig({}, { MEDIABOX_NEXTCLOUD_URL: "http://127.0.0.1:9/nextcloud", MEDIABOX_NEXTCLOUD_CLIENT_ID: "id", MEDIABOX_NEXTCLOUD_CLIENT_SECRET: "secret" });
const quiet = new Logger("error");

async function organization(sql: SqlClient, id: string): Promise<void> {
  await sql.run("INSERT INTO organizations (id, name, name_key, tier, created_at) VALUES (?, ?, ?, 'CUSTOM', 'x') ON CONFLICT DO NOTHING", [id, id, id]);
}

async function connectionRow(sql: SqlClient, vault: TokenVault, orgId: string, id: string, connectedAt: string): Promise<void> {
  await sql.run(
    `INSERT INTO cloud_connections (id, org_id, provider, provider_user_id, access_token, refresh_token, is_active, connected_at, updated_at)
     VALUES (?, ?, 'nextcloud', ?, ?, ?, 1, ?, ?)`,
    [id, orgId, `user-${id}`, vault.encrypt(`access-${id}`), vault.encrypt(`refresh-${id}`), connectedAt, connectedAt],
  );
}

describe.each(engines)("cloud connections on the port, on $name", ({ name, client }) => {
  const org = `org-cloud-${name}`;
  const who = { orgId: org, keyId: "key-1" };

  test("an OAuth state is used once, by its own key, before it expires; each refusal says why", async () => {
    const sql = client();
    await organization(sql, org);
    const clock = new ManualClock(Date.UTC(2031, 6, 1));
    const cloud = new CloudConnections(sql, clock, config, quiet, new TokenVault(randomBytes(32).toString("base64")));
    const refusal = (params: { state?: string; error?: string }, caller: typeof who | null = who) =>
      cloud.completeAuthorization("nextcloud", params, caller).then(
        () => "completed",
        (err: Error & { code?: string }) => `${err.code}: ${err.message}`,
      );

    const first = await cloud.startAuthorization(who, "nextcloud", "http://127.0.0.1:8080");
    expect(first.authorization_url).toContain(`state=${first.state}`);
    expect(await refusal({ state: first.state, error: "access_denied" }, { orgId: org, keyId: "key-2" })).toMatch(/^OAUTH_STATE_INVALID: .*was not issued to this API key/);
    // The user declined at the provider: the state is used up all the same.
    expect(await refusal({ state: first.state, error: "access_denied" })).toMatch(/^OAUTH_PROVIDER_ERROR: nextcloud ended the authorization: access_denied/);
    expect(await refusal({ state: first.state, error: "access_denied" })).toMatch(/was already used/);
    expect(await refusal({ state: "never-issued" })).toMatch(/is unknown/);
    expect(await refusal({ state: first.state }, null)).toMatch(/was already used/);

    const late = await cloud.startAuthorization(who, "nextcloud", "http://127.0.0.1:8080");
    clock.advance((config.cloudOauthStateTtlSeconds + 1) * 1000);
    expect(await refusal({ state: late.state, error: "access_denied" })).toMatch(/has expired/);
    // A day later the next flow clears the old states.
    clock.advance(25 * 3600_000);
    await cloud.startAuthorization(who, "nextcloud", "http://127.0.0.1:8080");
    expect((await sql.one<{ n: number }>("SELECT count(*) AS n FROM cloud_oauth_states WHERE org_id = ?", [org]))!.n).toBe(1);
  });

  test("connections: listed newest first, found per organization, tokens re-sealed after a key rotation, removed; a picker session of a removed one is refused", async () => {
    const sql = client();
    const other = `${org}-other`;
    await organization(sql, org);
    await organization(sql, other);
    const oldKey = randomBytes(32).toString("base64");
    const newKey = randomBytes(32).toString("base64");
    const before = new CloudConnections(sql, new ManualClock(Date.UTC(2031, 6, 1)), config, quiet, new TokenVault(oldKey));
    const ids = [crypto.randomUUID(), crypto.randomUUID()] as const;
    await connectionRow(sql, before.vault, org, ids[0], "2031-07-01T00:00:00.000Z");
    await connectionRow(sql, before.vault, org, ids[1], "2031-07-02T00:00:00.000Z");

    const cloud = new CloudConnections(sql, new ManualClock(Date.UTC(2031, 6, 3)), config, quiet, new TokenVault(newKey, [oldKey]));
    const listed = await cloud.list(org, { activeOnly: true, limit: 10, offset: 0 });
    expect(listed.items.map((c) => c.id)).toEqual([ids[1], ids[0]]);
    expect([listed.total_count, listed.has_more]).toEqual([2, false]);
    expect((await cloud.list(org, { activeOnly: true, limit: 1, offset: 0 })).has_more).toBe(true);
    expect((await cloud.connection(org, ids[0].toUpperCase())).id).toBe(ids[0]);
    await expect(cloud.connection(other, ids[0])).rejects.toMatchObject({ code: "CLOUD_CONNECTION_NOT_FOUND" });

    expect(await cloud.resealStaleTokens()).toBeGreaterThanOrEqual(2);
    const row = await cloud.connection(org, ids[0]);
    expect(new TokenVault(newKey).decrypt(row.access_token)).toBe(`access-${ids[0]}`);
    expect(new TokenVault(newKey).decrypt(row.refresh_token!)).toBe(`refresh-${ids[0]}`);
    expect(await cloud.resealStaleTokens()).toBe(0);

    await sql.run("INSERT INTO cloud_picker_sessions (id, org_id, connection_id, created_at, expires_at) VALUES (?, ?, ?, 'x', ?)", [ids[0], org, ids[0], Date.UTC(2032, 0, 1)]);
    const removed = await cloud.remove(org, ids[0]);
    expect(removed.message).toContain(`connection ${ids[0]} removed`);
    expect((await cloud.list(org, { activeOnly: false, limit: 10, offset: 0 })).items.map((c) => c.id)).toEqual([ids[1]]);
    await expect(cloud.pickerProxy(org, { session_id: ids[0], endpoint: "files" })).rejects.toMatchObject({ code: "PICKER_SESSION_NOT_FOUND" });
  });
});
