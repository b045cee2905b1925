/**
 * Headings that are not set in large type: a short block wholly in bold (not a bold lead-in
 * followed by plain text on its line), or a lone short line numbered like a section
 * ("1 Introduction", "2.3 Results", "IV. RESULTS", "A. Setup", "1 들어가며") or in capitals.
 * Their level comes from the numbering depth.
 */
import { keyValue } from "../reader-common.ts";

interface HeadingLine {
  text: string;
  bold: boolean;
  size: number;
  cells?: { runs: { text: string; bold?: boolean }[] }[];
}

/**
 * A run-in heading: a bold lead ending in a full stop or colon, then plain text on the same line
 * ("Mathematics Subject Classification. 35K08", "Keywords: ..."): the start of a paragraph.
 */
function runIn(line: HeadingLine): boolean {
  const runs = (line.cells ?? []).flatMap((c) => c.runs).filter((r) => r.text.trim());
  const plain = runs.findIndex((r) => !r.bold);
  return plain > 0 && /[.:]\s*$/.test(runs[plain - 1]!.text) && runs.slice(plain).every((r) => !r.bold) && /[\p{L}\p{N}]/u.test(runs.slice(plain).map((r) => r.text).join(""));
}

/** "Figure 2:", "Table 1." start captions, which are not headings even in bold. */
const CAPTION = /^(?:fig(?:ure)?\.?|table|tab\.|abbildung|tabelle)\s*[\p{N}IVX]+/iu;

/** Section numbering: "2.3", "2.3.", "2)" is not one (a list). */
const NUMBERED = /^\d{1,2}(?:\.\d{1,2})*\.?\s+[\p{Lu}\p{Lo}]/u;
const ROMAN_OR_LETTER = /^(?:[IVX]{1,5}|[A-H])\.\s+[\p{Lu}\p{Lo}]/u;

/** How deep a heading's number is: "2" → 1, "2.3" → 2, "2.3.1" → 3; "A." (a subsection letter) → 2; none → 1. */
export function numberingDepth(text: string): number {
  const number = /^(\d{1,2}(?:\.\d{1,2})*)\.?\s/.exec(text);
  if (number) return number[1]!.split(".").length;
  if (/^[A-H]\.\s/.test(text)) return 2;
  return 1;
}

/** A short line on its own that reads like a section title even at body size. */
export function looksLikeTitle(text: string): boolean {
  // A title has a word after its number: "0 B" is a piece of a formula.
  if (text.length > 80 || /[.,;:!?]$/.test(text) || keyValue(text) || CAPTION.test(text) || (/^[\d(]/.test(text) && !/\p{L}{2}/u.test(text.replace(/^\S+\s*/, "")))) return false;
  const words = text.split(" ").length;
  if (/^\d{1,2}(?:\.\d{1,2})+\.?\s+[\p{Lu}\p{Lo}]/u.test(text)) return words <= 12;
  // "3 Results", "1. Introduction": a single number, the rest without digits (so "12 March 2026" stays text).
  if (NUMBERED.test(text)) return words <= 8 && !/\d/.test(text.replace(/^\d{1,2}\.?\s+/, ""));
  if (ROMAN_OR_LETTER.test(text)) return words <= 8;
  // Capitals: two words or more, or one long word ("INTRODUCTION"), so code keywords like BEGIN stay text.
  const letters = text.replace(/[^\p{L}]/gu, "");
  return (words >= 2 ? letters.length >= 4 : letters.length >= 6) && letters === letters.toUpperCase() && letters !== letters.toLowerCase() && words <= 8;
}

/** A block of at most two lines, all bold, short, of at least body size, that is not a sentence or a caption. */
export function boldHeading(block: HeadingLine[], text: string, body: number): boolean {
  if (block.length > 2 || !block.every((l) => l.bold) || text.length > 150 || !/\p{L}.*\p{L}/u.test(text)) return false;
  if (block[0]!.size < body * 0.9 || CAPTION.test(text) || /[,;]$/.test(text) || keyValue(text) || block.some(runIn)) return false;
  // Words, not formulas: bold symbols and vectors in an equation are no heading.
  const visible = text.replace(/\s/g, "");
  if ((visible.match(/\p{L}/gu)?.length ?? 0) < visible.length * 0.6 || !/\p{L}{3}/u.test(text)) return false;
  // A sentence in bold (an emphasised remark) ends with a full stop after several words.
  if (/[.!?]$/.test(text) && text.split(" ").length > 4 && !NUMBERED.test(text)) return false;
  return true;
}
