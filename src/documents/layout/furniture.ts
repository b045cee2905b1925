/**
 * Running headers and footers: lines in a page's top or bottom margin band whose text (digits
 * aside, so "Page 3 of 9" matches "Page 4 of 9") comes back on many pages, and lone page numbers
 * in those bands. They are marked and kept out of the page's reading order.
 */
import type { Line, Run } from "../page-layout.ts";

/** The margin bands: this share of the page height at the top and at the bottom. */
const BAND = 0.1;
const PAGE_NUMBER = /^(?:page|seite|página|pagina|p\.)?\s*[-–—]?\s*(?:\d{1,4}|[ivxlc]{1,6})\s*[-–—]?(?:\s*(?:of|\/|von|de|di|sur)\s*\d{1,4})?$/i;

const key = (text: string) => text.toLowerCase().replace(/\d+/g, "#").replace(/\s+/g, " ").trim();

interface FurniturePage {
  lines: Line[];
  height: number;
}

/** Per page, the runs of its running headers, footers and page numbers. */
export function findFurniture(pages: FurniturePage[]): Set<Run>[] {
  // Running heads are set no larger than the text: a large title at the top of every page is the page's own heading.
  const usual = (() => {
    const sizes = pages.flatMap((p) => p.lines.map((l) => l.size)).sort((a, b) => a - b);
    return sizes[Math.floor(sizes.length / 2)] ?? 10;
  })();
  const inBand = (l: Line, height: number) => (l.bottom < height * BAND || l.top > height * (1 - BAND)) && l.size <= usual * 1.1;
  const counts = new Map<string, Set<number>>();
  pages.forEach((p, i) => {
    for (const l of p.lines) {
      if (!inBand(l, p.height)) continue;
      const k = `${l.top < p.height / 2 ? "top" : "bottom"} ${key(l.text)}`;
      const seen = counts.get(k) ?? new Set<number>();
      seen.add(i);
      counts.set(k, seen);
    }
  });
  // Alternating headers (left and right pages) each come back on about half the pages.
  const needed = Math.max(2, Math.ceil(pages.length * 0.4));
  return pages.map((p) => {
    const runs = new Set<Run>();
    for (const l of p.lines) {
      if (!inBand(l, p.height)) continue;
      const k = `${l.top < p.height / 2 ? "top" : "bottom"} ${key(l.text)}`;
      const repeated = (counts.get(k)?.size ?? 0) >= needed && l.text.length <= 200;
      if (repeated || PAGE_NUMBER.test(l.text.trim())) for (const c of l.cells) for (const r of c.runs) runs.add(r);
    }
    return runs;
  });
}
