/** Cloud tokens at rest: AES-256-GCM, the key file made at first start (0600), key rotation. */
import { afterEach, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { readFileSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { loadConfig } from "../src/config.ts";
import { loadTokenKey, TokenVault } from "../src/cloud/token-vault.ts";
import { connect, startCloudStack, type CloudStack } from "./support/cloud-setup.ts";
import { waitFor } from "./support/polling.ts";
import { tempDir } from "./support/server.ts";

let stack: CloudStack | null = null;
const dirs: string[] = [];
afterEach(async () => {
  await stack?.stop();
  stack = null;
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

test("sealed tokens: authenticated, tied to their key, readable after a rotation only with the old key listed", () => {
  const oldKey = randomBytes(32).toString("base64");
  const newKey = randomBytes(32).toString("base64");
  const sealed = new TokenVault(oldKey).encrypt("ya29.secret");
  expect(sealed).not.toContain("ya29");
  expect(new TokenVault(oldKey).decrypt(sealed)).toBe("ya29.secret");
  const tampered = sealed.slice(0, -3) + (sealed.endsWith("A") ? "BBB" : "AAA");
  expect(() => new TokenVault(oldKey).decrypt(tampered)).toThrow();
  expect(() => new TokenVault(newKey).decrypt(sealed)).toThrow(/previous/);
  const rotated = new TokenVault(newKey, [oldKey]);
  expect(rotated.decrypt(sealed)).toBe("ya29.secret");
  expect(rotated.isStale(sealed)).toBe(true);
  expect(rotated.isStale(rotated.encrypt("x"))).toBe(false);
  expect(() => loadConfig({}, { MEDIABOX_CLOUD_TOKEN_KEY: "short" })).toThrow(/32 bytes in base64/);
});

test("the key file is created once with 0600 and reused", () => {
  const dir = tempDir("mediabox-vault-");
  dirs.push(dir);
  const file = join(dir, "secrets", "cloud-token.key");
  const key = loadTokenKey(null, file);
  expect(statSync(file).mode & 0o777).toBe(0o600);
  expect(loadTokenKey(null, file)).toBe(key);
  expect(readFileSync(file, "utf8").trim()).toBe(key);
  expect(loadTokenKey("configured", file)).toBe("configured");
});

test("after a key rotation the server re-seals stored tokens with the new key at start", async () => {
  stack = await startCloudStack();
  const tenant = await stack.server.tenant();
  const { connection } = await connect(stack, tenant, "google_drive");
  // Processes sharing a database are given their key (the shared mode's); a lone one makes its own in the data directory.
  const oldKey = stack.server.config.cloudTokenKey ?? readFileSync(join(stack.dataDir, "secrets", "cloud-token.key"), "utf8").trim();
  const newKey = randomBytes(32).toString("base64");
  stack.env.MEDIABOX_CLOUD_TOKEN_KEY = newKey;
  stack.env.MEDIABOX_CLOUD_TOKEN_PREVIOUS_KEYS = oldKey;
  const server = await stack.restart();
  // The tokens are re-sealed in the background after the start.
  const sealedAgain = async () => {
    const row = await server.ctx.cloud.connection(tenant.orgId, connection.id);
    return server.ctx.cloud.vault.isStale(row.access_token) ? null : row;
  };
  const row = await waitFor(sealedAgain, { what: "the cloud tokens to be re-sealed with the new key" });
  expect(new TokenVault(newKey).decrypt(row.access_token)).toBe(stack.drive.tokens.at(-1)!);
  expect(() => new TokenVault(oldKey).decrypt(row.refresh_token!)).toThrow();
});
