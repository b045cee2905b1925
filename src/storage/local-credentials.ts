/**
 * The secret local presigned URLs are signed with (the local S3 endpoint verifies them with it).
 * Generated on a data directory's first start and kept in its secrets file, so URLs handed out
 * before a restart stay valid after it.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";

export interface LocalCredentials {
  accessKeyId: string;
  secretAccessKey: string;
}

/** Reads the secret at `file` (DataDir's localS3Secret), creating it once if it does not exist. */
export function loadLocalCredentials(file: string): LocalCredentials {
  if (existsSync(file)) return JSON.parse(readFileSync(file, "utf8")) as LocalCredentials;
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  const credentials: LocalCredentials = {
    accessKeyId: `MBX${Buffer.from(crypto.getRandomValues(new Uint8Array(10))).toString("hex").toUpperCase()}`,
    secretAccessKey: Buffer.from(crypto.getRandomValues(new Uint8Array(30))).toString("base64url"),
  };
  // wx: never replace a secret that handed-out URLs are already signed with.
  writeFileSync(file, JSON.stringify(credentials), { mode: 0o600, flag: "wx" });
  return credentials;
}
