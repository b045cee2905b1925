/**
 * The error table of docs/errors.md, generated from the catalogue in src/errors.ts.
 *
 *   bun scripts/error-table.ts           prints the Markdown table
 *   bun scripts/error-table.ts --write   replaces the table between the markers in docs/errors.md
 *
 * test/errors-catalogue.test.ts fails when the documented table differs from this output.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ERRORS, type ErrorCode } from "../src/errors.ts";

export const TABLE_BEGIN = "<!-- error-table:begin (generated from src/errors.ts by `bun scripts/error-table.ts --write`) -->";
export const TABLE_END = "<!-- error-table:end -->";
export const ERROR_TABLE_PATH = join(import.meta.dir, "..", "docs", "errors.md");

/** One row per code, in the catalogue's order (grouped by status). */
export function errorTable(): string {
  const rows = (Object.keys(ERRORS) as ErrorCode[]).map((code) => `| ${ERRORS[code].status} | \`${code}\` | ${ERRORS[code].meaning} |`);
  return ["| Status | Code | Meaning |", "|---|---|---|", ...rows].join("\n");
}

/** The table between the markers of a Markdown text, or null when the markers are missing. */
export function documentedTable(readme: string): string | null {
  const begin = readme.indexOf(TABLE_BEGIN);
  const end = readme.indexOf(TABLE_END);
  if (begin < 0 || end < begin) return null;
  return readme.slice(begin + TABLE_BEGIN.length, end).trim();
}

if (import.meta.main) {
  if (process.argv.includes("--write")) {
    const readme = readFileSync(ERROR_TABLE_PATH, "utf8");
    if (documentedTable(readme) === null) throw new Error(`docs/errors.md has no ${TABLE_BEGIN} … ${TABLE_END} markers`);
    const begin = readme.indexOf(TABLE_BEGIN) + TABLE_BEGIN.length;
    const end = readme.indexOf(TABLE_END);
    writeFileSync(ERROR_TABLE_PATH, `${readme.slice(0, begin)}\n${errorTable()}\n${readme.slice(end)}`);
  } else {
    console.log(errorTable());
  }
}
