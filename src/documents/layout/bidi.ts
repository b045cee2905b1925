/**
 * Right-to-left lines in logical order, with the Unicode bidirectional algorithm (bidi-js).
 *
 * pdf.js gives each text item in logical order already, but a line's items arrive in visual
 * order (left to right on the page). An Arabic or Hebrew line is read right to left, except for
 * runs of Latin words and numbers inside it, which keep their left-to-right order. That is what
 * the algorithm does to a visual string: each item becomes one character of its direction
 * (strong RTL, strong LTR, number, neutral), the algorithm reorders those characters as a
 * right-to-left paragraph, and the items follow. Presentation forms (Arabic ligatures such as
 * lam-alef) are folded to their letters once they are in place.
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
