/**
 * The README's error table, generated from the catalogue in src/errors.ts.
 *
 *   bun scripts/error-table.ts           prints the Markdown table
 *   bun scripts/error-table.ts --write   replaces the table between the markers in README.md
 *
 * test/errors-catalogue.test.ts fails when the README's table differs from this output.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ERRORS, type ErrorCode } from "../src/errors.ts";

export const TABLE_BEGIN = "<!-- error-table:begin (generated from src/errors.ts by `bun scripts/error-table.ts --write`) -->";
export const TABLE_END = "<!-- error-table:end -->";
export const README_PATH = join(import.meta.dir, "..", "README.md");

/** One row per code, in the catalogue's order (grouped by status). */
export function errorTable(): string {
  const rows = (Object.keys(ERRORS) as ErrorCode[]).map((code) => `| ${ERRORS[code].status} | \`${code}\` | ${ERRORS[code].meaning} |`);
  return ["| Status | Code | Meaning |", "|---|---|---|", ...rows].join("\n");
}

/** The table between the markers of a README text, or null when the markers are missing. */
export function readmeTable(readme: string): string | null {
  const begin = readme.indexOf(TABLE_BEGIN);
  const end = readme.indexOf(TABLE_END);
  if (begin < 0 || end < begin) return null;
  return readme.slice(begin + TABLE_BEGIN.length, end).trim();
}

if (import.meta.main) {
  if (process.argv.includes("--write")) {
    const readme = readFileSync(README_PATH, "utf8");
    if (readmeTable(readme) === null) throw new Error(`README.md has no ${TABLE_BEGIN} … ${TABLE_END} markers`);
    const begin = readme.indexOf(TABLE_BEGIN) + TABLE_BEGIN.length;
    const end = readme.indexOf(TABLE_END);
    writeFileSync(README_PATH, `${readme.slice(0, begin)}\n${errorTable()}\n${readme.slice(end)}`);
  } else {
    console.log(errorTable());
  }
}
