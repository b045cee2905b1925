/**
 * Right-to-left lines in logical order, with the Unicode bidirectional algorithm (bidi-js).
 *
 * pdf.js gives each text item in logical order already, but a line's items arrive in visual
 * order (left to right on the page). An Arabic or Hebrew line is read right to left, except for
 * runs of Latin words and numbers inside it, which keep their left-to-right order. That is what
 * the algorithm does to a visual string: each item becomes one character of its direction
 * (strong RTL, strong LTR, number, neutral), the algorithm reorders those characters as a
 * right-to-left paragraph, and the items follow. Presentation forms (Arabic ligatures such as
 * lam-alef) are folded to their letters once they are in place. A ligature glyph that a font maps
 * to two letters is reversed inside pdf.js's item along with the rest: the glyphs of the page's
 * operator list tell those words apart, and put their letters back (ligatureFixes).
 */
import bidiFactory from "bidi-js";

const bidi = bidiFactory();

const RTL_CHAR = /[\u0590-\u08FF\uFB1D-\uFDFF\uFE70-\uFEFF]/u;
const LTR_CHAR = /[\p{L}]/u;

/**
 * Whether a line reads right to left: more of its letters are Arabic, Hebrew... than not. (The
 * first strong character, the algorithm's own rule, is the leftmost word in visual order, which
 * is the end of an RTL line.)
 */
export function rightToLeft(text: string): boolean {
  let rtl = 0;
  let ltr = 0;
  for (const ch of text) {
    if (RTL_CHAR.test(ch)) rtl++;
    else if (LTR_CHAR.test(ch)) ltr++;
  }
  return rtl > ltr;
}

interface Item {
  text: string;
  rtl?: boolean;
  x0: number;
  x1: number;
  size: number;
}

/** Items of one line, in visual order left to right → the line's text in logical order. */
export function logicalText(items: Item[]): string {
  const visual = [...items].sort((a, b) => a.x0 - b.x0);
  const classes = visual
    .map((item) => {
      if (item.rtl || RTL_CHAR.test(item.text)) return "\u05d0";
      if (LTR_CHAR.test(item.text)) return "a";
      if (/\d/.test(item.text)) return "1";
      return " ";
    })
    .join("");
  const levels = bidi.getEmbeddingLevels(classes, "rtl");
  const order = visual.map((_, i) => i);
  for (const [start, end] of bidi.getReorderSegments(classes, levels)) {
    const flipped = order.slice(start, end + 1).reverse();
    order.splice(start, flipped.length, ...flipped);
  }
  // A space where the page had a gap, or where items that were apart now meet.
  let out = "";
  order.forEach((index, k) => {
    const item = visual[index]!;
    if (k > 0) {
      const prev = order[k - 1]!;
      const [a, b] = prev < index ? [visual[prev]!, item] : [item, visual[prev]!];
      const gap = b.x0 - a.x1;
      if (Math.abs(prev - index) !== 1 || gap > Math.min(a.size, b.size) * 0.15) out += " ";
    }
    out += item.text;
  });
  return foldPresentationForms(out);
}

/** Arabic presentation forms (contextual shapes and ligatures such as ﻻ) → their letters. */
export function foldPresentationForms(text: string): string {
  return text.replace(/[\uFB50-\uFDFF\uFE70-\uFEFF]+/gu, (s) => s.normalize("NFKC"));
}

/** Letters and digits that read left to right: a word holding any is not a right-to-left word. */
const LTR_OR_DIGIT = /[\p{L}\p{N}]/u;

/**
 * pdf.js reverses a right-to-left text item character by character, so a glyph that stands for
 * two letters (a lam-alef ligature whose font maps it to "لا") comes out with its letters swapped
 * ("سالم" for "سلام"), while the same letters drawn as two glyphs come out right: only the glyphs
 * tell them apart. `shown` is each text-showing operation's glyphs as drawn (visual order, each
 * glyph's Unicode as pdf.js maps it); every right-to-left word with a glyph of several characters
 * gives the word as pdf.js reads it → the word read glyph by glyph.
 */
export function ligatureFixes(shown: string[][]): Map<string, string> {
  const fixes = new Map<string, string>();
  for (const glyphs of shown) {
    let word: string[] = [];
    const end = () => {
      const text = word.join("");
      if (word.some((g) => [...g].length > 1) && RTL_CHAR.test(text) && ![...text].some((ch) => !RTL_CHAR.test(ch) && LTR_OR_DIGIT.test(ch))) {
        const asRead = [...text].reverse().join("");
        const right = [...word].reverse().join("");
        if (asRead !== right) fixes.set(asRead, right);
      }
      word = [];
    };
    for (const glyph of glyphs) {
      if (!glyph.trim()) end();
      else word.push(glyph);
    }
    end();
  }
  return fixes;
}

/** A right-to-left item's words with their ligatures' letters put back in order (see ligatureFixes). */
export function fixLigatures(text: string, fixes: Map<string, string>): string {
  if (!fixes.size) return text;
  return text
    .split(/(\s+)/)
    .map((word) => fixes.get(word) ?? word)
    .join("");
}
