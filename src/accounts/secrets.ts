/**
 * The random values accounts hand out (session ids, CSRF tokens, mailed tokens, OIDC state) and
 * how they are kept: 256 random bits, base64url, stored only as a SHA-256 hash. A hash is enough
 * (no slow KDF) because nothing about 256 random bits can be guessed from it; a database copy
 * therefore holds no usable session or token.
 */
import { timingSafeEqual } from "node:crypto";

export function randomToken(bytes = 32): string {
  return Buffer.from(crypto.getRandomValues(new Uint8Array(bytes))).toString("base64url");
}

export function sha256Hex(value: string): string {
  return new Bun.CryptoHasher("sha256").update(value).digest("hex");
}

/**
 * Compares two secrets in time that does not depend on where they differ. Both sides are hashed
 * first so their lengths are equal (timingSafeEqual needs that) and the length of the expected
 * value leaks nothing either.
 */
export function sameSecret(presented: string, expected: string): boolean {
  const a = new Bun.CryptoHasher("sha256").update(presented).digest();
  const b = new Bun.CryptoHasher("sha256").update(expected).digest();
  return timingSafeEqual(a, b);
}

/** Compares a presented secret with a stored SHA-256 hex digest of the real one, in constant time. */
export function matchesHash(presented: string, storedHashHex: string): boolean {
  const a = Buffer.from(sha256Hex(presented), "hex");
  const b = Buffer.from(storedHashHex, "hex");
  return a.length === b.length && timingSafeEqual(a, b);
}
