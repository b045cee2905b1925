/**
 * Encryption at rest of cloud drive tokens (AES-256-GCM). The key comes from a setting
 * (`--cloud-token-key`, 32 bytes in base64) or, without one, from a key file in the data
 * directory's secrets created at first start with 0600 permissions. Each ciphertext names the key
 * that made it ("v1.<key id>.<iv>.<data>"), so a rotation only needs the old key listed in
 * `--cloud-token-previous-keys`: it still decrypts, and every stored token is re-encrypted with
 * the current key when the server starts (cloud/connections.ts), after which the old key can go.
 */
import { createCipheriv, createDecipheriv, createHash, randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";

const VERSION = "v1";

interface Key {
  id: string;
  bytes: Buffer;
}

export class TokenVaultError extends Error {
  override name = "TokenVaultError";
}

function parseKey(text: string, where: string): Key {
  const bytes = Buffer.from(text.trim(), "base64");
  if (bytes.length !== 32) throw new TokenVaultError(`${where}: a cloud token key is 32 bytes in base64 (got ${bytes.length} bytes)`);
  // The id is a digest of the key, so it identifies the key without revealing it.
  return { id: createHash("sha256").update(bytes).digest("hex").slice(0, 12), bytes };
}

/** The configured key, else the key file's (created once, 0600, never replaced). */
export function loadTokenKey(configured: string | null, keyFile: string): string {
  if (configured) return configured;
  if (existsSync(keyFile)) return readFileSync(keyFile, "utf8").trim();
  mkdirSync(dirname(keyFile), { recursive: true, mode: 0o700 });
  const key = randomBytes(32).toString("base64");
  // wx: never overwrite a key that tokens are already encrypted with.
  writeFileSync(keyFile, key + "\n", { mode: 0o600, flag: "wx" });
  return key;
}

export class TokenVault {
  private readonly current: Key;
  private readonly byId: Map<string, Key>;

  constructor(currentKey: string, previousKeys: string[] = []) {
    this.current = parseKey(currentKey, "cloud token key");
    this.byId = new Map([this.current, ...previousKeys.map((k, i) => parseKey(k, `previous cloud token key ${i + 1}`))].map((k) => [k.id, k]));
  }

  encrypt(plain: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv("aes-256-gcm", this.current.bytes, iv);
    const data = Buffer.concat([cipher.update(plain, "utf8"), cipher.final(), cipher.getAuthTag()]);
    return [VERSION, this.current.id, iv.toString("base64url"), data.toString("base64url")].join(".");
  }

  decrypt(sealed: string): string {
    const [version, keyId, iv, data] = sealed.split(".");
    if (version !== VERSION || !keyId || !iv || !data) throw new TokenVaultError("not a sealed token");
    const key = this.byId.get(keyId);
    if (!key) throw new TokenVaultError(`token sealed with key ${keyId}, which is not configured (list it in --cloud-token-previous-keys)`);
    const raw = Buffer.from(data, "base64url");
    const decipher = createDecipheriv("aes-256-gcm", key.bytes, Buffer.from(iv, "base64url"));
    decipher.setAuthTag(raw.subarray(raw.length - 16));
    return Buffer.concat([decipher.update(raw.subarray(0, raw.length - 16)), decipher.final()]).toString("utf8");
  }

  /** True when `sealed` was made with a key other than the current one. */
  isStale(sealed: string): boolean {
    return sealed.split(".")[1] !== this.current.id;
  }
}
