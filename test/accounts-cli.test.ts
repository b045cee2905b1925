/**
 * `mediabox users` and `mediabox support` as an administrator runs them, as child processes on
 * a data directory: the first owner bootstrapped with a password read from stdin, lists, roles,
 * printed links when no SMTP server is configured, and refusals with their exit codes.
 */
import { afterAll, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { run } from "./support/process.ts";
import { tempDir } from "./support/server.ts";

const dataDir = tempDir("mediabox-users-cli-");
const MAIN = join(import.meta.dir, "..", "src", "main.ts");
const cli = (...args: string[]) => run([process.execPath, MAIN, ...args, "--data-dir", dataDir, "--public-url", "https://media.example.com"]);
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

async function withStdin(input: string, ...args: string[]): Promise<{ exitCode: number; stdout: string; stderr: string }> {
  const child = Bun.spawn([process.execPath, MAIN, ...args, "--data-dir", dataDir], { stdin: "pipe", stdout: "pipe", stderr: "pipe" });
  child.stdin.write(input);
  await child.stdin.end();
  const [stdout, stderr, exitCode] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
  return { exitCode, stdout, stderr };
}

test("the first owner is made by the CLI; users are listed with their roles; links are printed without SMTP", async () => {
  expect((await cli("orgs", "create", "Studio")).exitCode).toBe(0);
  const weak = await withStdin("password1\n", "users", "create", "boss@example.com", "--org", "Studio", "--role", "owner", "--password-stdin");
  expect(weak.exitCode).toBe(1);
  expect(weak.stderr).toContain("password");
  const created = await withStdin("a sturdy passphrase\n", "users", "create", "boss@example.com", "--org", "Studio", "--role", "owner", "--password-stdin");
  expect(created.exitCode).toBe(0);
  expect(created.stdout).toMatch(/^[0-9a-f-]{36}\tboss@example\.com\tStudio\towner\n$/);
  const duplicate = await withStdin("a sturdy passphrase\n", "users", "create", "Boss@Example.com", "--org", "Studio", "--password-stdin");
  expect(duplicate.exitCode).toBe(1);
  expect(duplicate.stderr).toContain("already exists");

  const noPassword = await cli("users", "create", "editor@example.com", "--org", "Studio", "--role", "member");
  expect(noPassword.exitCode).toBe(0);
  expect(noPassword.stderr).toMatch(/https:\/\/media\.example\.com\/auth\/reset-password\?token=[\w-]{43}/);
  expect((await cli("users", "set-role", "editor@example.com", "--org", "Studio", "--role", "viewer")).stdout).toContain("\tviewer");
  const badRole = await cli("users", "set-role", "editor@example.com", "--org", "Studio", "--role", "god");
  expect(badRole.exitCode).toBe(1);
  const lastOwner = await cli("users", "set-role", "boss@example.com", "--org", "Studio", "--role", "member");
  expect(lastOwner.exitCode).toBe(1);
  expect(lastOwner.stderr).toContain("last owner");

  const list = await cli("users", "list", "--org", "Studio");
  expect(list.stdout).toContain("boss@example.com\t-\tverified\tStudio:owner");
  expect(list.stdout).toContain("editor@example.com\t-\tverified\tStudio:viewer");
  const invite = await cli("users", "invite", "guest@example.com", "--org", "Studio", "--role", "viewer");
  expect(invite.stdout.trim()).toMatch(/^https:\/\/media\.example\.com\/auth\/accept-invite\?token=[\w-]{43}$/);
  const reset = await cli("users", "reset-password", "boss@example.com");
  expect(reset.stdout.trim()).toMatch(/\/auth\/reset-password\?token=/);
  const unknown = await cli("users", "reset-password", "nobody@example.com");
  expect(unknown.exitCode).toBe(1);
  expect((await cli("users", "explode")).exitCode).toBe(2);
  expect((await cli("support", "list")).exitCode).toBe(0);
});
