/**
 * Password rules and hashing. Hashes are argon2id (Bun.password) with OWASP's minimum
 * parameters (19 MiB, 2 passes), so a stolen database costs an attacker real work per guess.
 * Rules follow NIST SP 800-63B: a length floor, no composition rules, and a refusal of
 * passwords known from breaches and of ones built from the account's own email address.
 */
import { ApiError } from "../errors.ts";
import { COMMON_PASSWORDS } from "./common-passwords.ts";

export const MIN_PASSWORD_LENGTH = 10;
export const MAX_PASSWORD_LENGTH = 256;

const ARGON2 = { algorithm: "argon2id", memoryCost: 19_456, timeCost: 2 } as const;

/** Refuses a new password that breaks a rule; the detail says which, so a person can fix it. */
export function checkNewPassword(password: string, email: string): void {
  const length = [...password].length;
  if (length < MIN_PASSWORD_LENGTH) {
    throw new ApiError("PASSWORD_REJECTED", `password: must be at least ${MIN_PASSWORD_LENGTH} characters`);
  }
  if (length > MAX_PASSWORD_LENGTH) {
    throw new ApiError("PASSWORD_REJECTED", `password: must be at most ${MAX_PASSWORD_LENGTH} characters`);
  }
  const folded = password.toLowerCase();
  // Passwords that differ from a common one by trailing digits or punctuation are as weak.
  const stem = folded.replace(/[\d\W_]+$/u, "");
  if (COMMON_PASSWORDS.has(folded) || (stem.length >= 4 && COMMON_PASSWORDS.has(stem))) {
    throw new ApiError("PASSWORD_REJECTED", "password: is one of the most common passwords found in breaches; choose another");
  }
  if (new Set(folded).size < 4) {
    throw new ApiError("PASSWORD_REJECTED", "password: repeats too few different characters");
  }
  const local = email.toLowerCase().split("@")[0] ?? "";
  if (local.length >= 4 && folded.includes(local)) {
    throw new ApiError("PASSWORD_REJECTED", "password: must not contain the email address");
  }
}

export function hashPassword(password: string): Promise<string> {
  return Bun.password.hash(password, ARGON2);
}

export async function verifyPassword(password: string, hash: string): Promise<boolean> {
  try {
    return await Bun.password.verify(password, hash);
  } catch {
    return false;
  }
}
