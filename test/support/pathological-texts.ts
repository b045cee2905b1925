/**
 * Texts shaped to find what is not linear in the text readers, chunking and summaries: one line
 * without a space, runs of one character, markup that opens and never closes, thousands of
 * headings in a row, a table of a million rows, runs of characters outside the Basic Multilingual
 * Plane. Made on the fly, for test/pathological-texts.test.ts and scripts/bench/bombs.ts. Each was
 * a stall once (see docs/robustness.md).
 */
const MiB = 1024 * 1024;
const enc = new TextEncoder();

/** `unit` repeated to exactly `bytes` characters (ASCII units: bytes). */
const repeated = (unit: string, length: number) => unit.repeat(Math.ceil(length / unit.length)).slice(0, length);

export interface PathologicalText {
  name: string;
  filename: string;
  make(): Uint8Array;
}

/** 10 MB of "a" on one line: the file of issue 36 that never left the chunks stage. */
export const oneLineText = (bytes = 10 * MiB): Uint8Array => new Uint8Array(bytes).fill(0x61);

export const PATHOLOGICAL_TEXTS: PathologicalText[] = [
  { name: "10 MB on one line, no space", filename: "one-line.txt", make: () => oneLineText() },
  { name: "10 MB of one-letter words", filename: "letters.txt", make: () => enc.encode(repeated("a ", 10 * MiB)) },
  { name: "5 MB of '[' (Markdown)", filename: "brackets.md", make: () => enc.encode("[".repeat(5 * MiB)) },
  { name: "5 MB of '**a ' (Markdown)", filename: "stars.md", make: () => enc.encode(repeated("**a ", 5 * MiB)) },
  { name: "a heading line of 1 MB of spaces (Markdown)", filename: "heading.md", make: () => enc.encode(`# a${" ".repeat(MiB)}x\n`) },
  { name: "200,000 ALL-CAPS lines in one block", filename: "caps.txt", make: () => enc.encode(repeated("ABCD\n", 1_000_000)) },
  { name: "200,000 lines ending with '-'", filename: "dashes.txt", make: () => enc.encode(repeated("<!--\n", 1_000_000)) },
  { name: "a pipe table of 900,000 rows (Markdown)", filename: "rows.md", make: () => enc.encode(repeated("|a|b|\n", 5_400_000)) },
  { name: "5 MB of emoji on one line", filename: "emoji.txt", make: () => enc.encode("\u{1F600}".repeat(5 * MiB / 4)) },
  { name: "3 MB of CJK without spaces", filename: "cjk.txt", make: () => enc.encode(repeated("日本語の文章です", MiB)) },
  { name: "5 MB of one letter under 50 combining accents each", filename: "accents.txt", make: () => enc.encode(repeated(`a${"\u0301".repeat(50)}`, 2.5 * MiB)) },
];
