/**
 * Every worker thread the server starts is an entry point of the compiled binary
 * (scripts/build.ts): one left out cannot start there, and its work falls back to the event loop
 * (the vision models did so for months, hundreds of milliseconds of every request's time an image).
 */
import { expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

const root = join(import.meta.dir, "..");

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? sourceFiles(join(dir, entry.name)) : entry.name.endsWith(".ts") ? [join(dir, entry.name)] : [],
  );
}

test("every worker entry the server names is built into the binary", () => {
  const named = new Set<string>();
  for (const file of sourceFiles(join(root, "src"))) {
    for (const match of readFileSync(file, "utf8").matchAll(/\bnew (?:WorkerThread|BudgetedThread)\b[^(]*\(\s*"([\w/.-]+\.ts)"/g)) named.add(match[1]!);
  }
  const built = new Set([...readFileSync(join(root, "scripts", "build.ts"), "utf8").matchAll(/resolve\(root, "src\/([\w/.-]+-worker\.ts)"\)/g)].map((m) => m[1]!));
  expect(named.size).toBeGreaterThan(5);
  expect([...named].filter((entry) => !built.has(entry)).sort()).toEqual([]);
});
