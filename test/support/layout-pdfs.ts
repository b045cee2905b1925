/**
 * Generated PDFs whose layout is known exactly, with their truth: every element drawn is recorded
 * (type, normalized box, text, and a table's cells), and so is the reading order of the words.
 * The tests check single constructs on them; scripts/bench/digitization.ts scores whole pages.
 *
 * Constructs: a full-width title and abstract over two columns, numbered bold headings of body size,
 * paragraphs that end on a short line and start indented, bulleted / checkbox / numbered lists with
 * wrapped items, a footnote "1) ...", a running header and page number on every page, a ruled table
 * with a spanning header, an unruled table, a vector drawing with its caption, form rows, a table
 * ruled across only (booktabs) with narrow columns, an Arabic line with a lam-alef ligature glyph, and
 * landscape content printed sideways on portrait pages (sidewaysPdf; not among the bench's fixtures).
 */
import { beginText, degrees, endText, moveText, PDFDocument, PDFHexString, PDFName, rgb, setFontAndSize, showText, StandardFonts, type PDFFont, type PDFPage } from "pdf-lib";
import { A4, wrap } from "./documents.ts";

export type TruthType = "heading" | "paragraph" | "list" | "table" | "figure" | "key_value";

export interface TruthElement {
  page: number;
  type: TruthType;
  /** Normalized 0-1, origin top-left. */
  box: { x: number; y: number; w: number; h: number };
  text: string;
  /** Tables: dense rows of cell text ("" under a spanning cell). */
  rows?: string[][];
}

export interface LayoutFixture {
  name: string;
  bytes: Uint8Array;
  pages: number;
  elements: TruthElement[];
  /** The words of each page in reading order (running headers and page numbers left out). */
  order: string[][];
}

const W = 595;
const H = 842;
const WORDS =
  "pump valve turbine inspection pressure quarry conveyor crusher bearing seal gasket flange boiler compressor filter motor gearbox sensor relay breaker cable drum hopper screen feeder chute silo pallet".split(" ");

interface Ink {
  x0: number;
  x1: number;
  top: number;
  bottom: number;
}

/** Draws pages and records what it drew. Coordinates here are top-left, in points. */
class Sheet {
  elements: TruthElement[] = [];
  order: string[][] = [];
  page!: PDFPage;
  n = 0;
  private seed = 11;
  constructor(
    readonly pdf: PDFDocument,
    readonly font: PDFFont,
    readonly bold: PDFFont,
    readonly dingbats: PDFFont,
  ) {}

  newPage(header?: string) {
    this.page = this.pdf.addPage([W, H]);
    this.n++;
    this.order.push([]);
    if (header) {
      this.page.drawText(header, { x: 50, y: H - 30, size: 8, font: this.font, color: rgb(0.3, 0.3, 0.3) });
      this.page.drawText(String(this.n), { x: W / 2, y: 25, size: 8, font: this.font });
    }
  }

  words(n: number): string {
    return Array.from({ length: n }, () => WORDS[((this.seed = (this.seed * 1103515245 + 12345) >>> 0) >>> 16) % WORDS.length]!).join(" ");
  }

  /** One line of text with its baseline at `y` (from the top); returns its ink box. */
  text(s: string, x: number, y: number, size: number, font = this.font, inOrder = true): Ink {
    this.page.drawText(s, { x, y: H - y, size, font, color: rgb(0, 0, 0) });
    if (inOrder) this.order.at(-1)!.push(...s.split(/\s+/).filter(Boolean));
    return { x0: x, x1: x + font.widthOfTextAtSize(s, size), top: y - size * 0.72, bottom: y + size * 0.21 };
  }

  record(type: TruthType, inks: Ink[], text: string, rows?: string[][]) {
    const x0 = Math.min(...inks.map((i) => i.x0));
    const x1 = Math.max(...inks.map((i) => i.x1));
    const top = Math.min(...inks.map((i) => i.top));
    const bottom = Math.max(...inks.map((i) => i.bottom));
    this.elements.push({ page: this.n, type, box: { x: x0 / W, y: top / H, w: (x1 - x0) / W, h: (bottom - top) / H }, text, ...(rows ? { rows } : {}) });
  }

  /** A paragraph: wrapped to `chars` characters a line, the first line indented when asked. Returns the next baseline. */
  paragraph(words: string, x: number, y: number, chars: number, size = 10, indent = 0, lead = 1.25): number {
    const inks: Ink[] = [];
    wrap(words, chars).forEach((line, i) => inks.push(this.text(line, x + (i === 0 ? indent : 0), y + i * size * lead, size)));
    this.record("paragraph", inks, words);
    return y + inks.length * size * lead;
  }

  heading(s: string, x: number, y: number, size: number, bold = true): number {
    this.record("heading", [this.text(s, x, y, size, bold ? this.bold : this.font)], s);
    return y;
  }

  /** List items, each wrapped; continuation lines are indented under the item's text. */
  list(items: string[], marker: (i: number) => string, x: number, y: number, chars: number, size = 10, glyph = false): number {
    const inks: Ink[] = [];
    items.forEach((item, i) => {
      const m = marker(i);
      if (glyph) {
        this.page.drawText(m, { x, y: H - y, size, font: this.dingbats });
        inks.push({ x0: x, x1: x + size * 0.8, top: y - size * 0.72, bottom: y + size * 0.21 });
      } else inks.push(this.text(m, x, y, size));
      wrap(item, chars).forEach((line, j) => {
        inks.push(this.text(line, x + 14, y, size));
        y += size * 1.25;
        void j;
      });
      y += size * 0.3;
    });
    this.record("list", inks, items.join(" "));
    return y;
  }

  /**
   * A table: rows of cells at column x positions. Ruled draws the grid (a box around every cell,
   * a spanning cell `span` over the first row's columns 1..n). Returns the y under the table.
   */
  table(rows: string[][], xs: number[], right: number, y: number, ruled: boolean, size = 9, spanHeader = false): number {
    const rowH = size * 2;
    const inks: Ink[] = [];
    const top = y;
    rows.forEach((row, r) => {
      const base = y + rowH * 0.65;
      row.forEach((cell, c) => {
        if (!cell) return;
        inks.push(this.text(cell, xs[c]! + 4, base, size, r === 0 ? this.bold : this.font));
      });
      y += rowH;
    });
    if (ruled) {
      const line = (x0: number, y0: number, x1: number, y1: number) => this.page.drawLine({ start: { x: x0, y: H - y0 }, end: { x: x1, y: H - y1 }, thickness: 0.6, color: rgb(0, 0, 0) });
      for (let r = 0; r <= rows.length; r++) {
        const yy = top + r * rowH;
        // Under a spanning header the rule between its columns is left out.
        line(xs[0]!, yy, right, yy);
      }
      for (let c = 0; c <= xs.length; c++) {
        const xx = c < xs.length ? xs[c]! : right;
        const from = spanHeader && c === 2 ? top + rowH : top;
        line(xx, from, xx, top + rows.length * rowH);
      }
      inks.push({ x0: xs[0]!, x1: right, top, bottom: y });
    } else {
      inks.push({ x0: xs[0]!, x1: Math.max(...inks.map((i) => i.x1)), top: inks[0]!.top, bottom: inks.at(-1)!.bottom });
    }
    const text = rows.flat().filter(Boolean).join(" ");
    this.record("table", inks, text, rows);
    return y;
  }

  /** A vector drawing (filled bars and axes), no text in it. */
  drawing(x: number, y: number, w: number, h: number) {
    this.page.drawLine({ start: { x, y: H - y - h }, end: { x: x + w, y: H - y - h }, thickness: 1 });
    this.page.drawLine({ start: { x, y: H - y - h }, end: { x, y: H - y }, thickness: 1 });
    for (let i = 0; i < 5; i++) {
      const bh = h * (0.3 + 0.13 * i);
      this.page.drawRectangle({ x: x + 8 + i * (w / 5.5), y: H - y - h, width: w / 8, height: bh, color: rgb(0.2 + i * 0.1, 0.4, 0.7) });
    }
    this.record("figure", [{ x0: x, x1: x + w, top: y, bottom: y + h }], "");
  }
}

async function sheet(): Promise<Sheet> {
  const pdf = await PDFDocument.create();
  return new Sheet(pdf, await pdf.embedFont(StandardFonts.TimesRoman), await pdf.embedFont(StandardFonts.TimesRomanBold), await pdf.embedFont(StandardFonts.ZapfDingbats));
}

/** Two pages of a two-column article: title and abstract full width, columns below, header and page numbers. */
export async function articlePdf(): Promise<LayoutFixture> {
  const s = await sheet();
  const header = "Journal of Quarry Engineering 12 (2026)";
  s.newPage(header);
  s.heading("Wear of Conveyor Idlers in Hard Rock Quarries", 50, 80, 18);
  s.paragraph(`Abstract. ${s.words(60)}.`, 50, 115, 110, 9);
  const L = 50;
  const R = 312;
  const C = 50;
  // Left column.
  let y = 185;
  s.heading("1 Introduction", L, y, 10);
  y = s.paragraph(`${s.words(70)}.`, L, y + 16, C, 10, 10);
  y = s.paragraph(`${s.words(50)}.`, L, y, C, 10, 10);
  y = s.list([`${s.words(14)}.`, `${s.words(6)}.`, `${s.words(16)}.`], () => "•", L, y + 6, C - 4);
  s.heading("2 Method", L, y + 12, 10);
  y = s.paragraph(`${s.words(60)}.`, L, y + 28, C, 10, 10);
  y = s.list([`${s.words(10)}.`, `${s.words(12)}.`], (i) => `${i + 1}.`, L, y + 6, C - 4);
  s.paragraph(`1) ${s.words(18)}.`, L, 770, C + 10, 8);
  // Right column.
  y = 185;
  s.heading("2.1 Sampling", R, y, 10);
  y = s.paragraph(`${s.words(80)}.`, R, y + 16, C, 10, 10);
  y = s.list([`${s.words(9)}.`, `${s.words(13)}.`, `${s.words(7)}.`], () => "❑", R, y + 6, C - 4, 10, true);
  s.heading("2.2 Measurements", R, y + 12, 10);
  y = s.paragraph(`${s.words(90)}.`, R, y + 28, C, 10, 10);
  s.paragraph(`${s.words(40)}.`, R, y, C, 10, 10);

  s.newPage(header);
  s.heading("3 Results", L, 70, 10);
  y = s.paragraph(`${s.words(60)}.`, L, 86, 110, 10, 10);
  s.paragraph("Table 1: Idler wear by site and belt speed.", L, y + 8, 110, 9);
  y = s.table(
    [
      ["Site", "Belt speed", "", "Wear"],
      ["", "m/s", "ft/min", "mm/yr"],
      ["North pit", "2.5", "492", "0.8"],
      ["South pit", "3.1", "610", "1.1"],
      ["Harbour", "4.0", "787", "1.9"],
    ],
    [50, 200, 300, 400],
    545,
    y + 16,
    true,
    9,
    true,
  );
  s.drawing(L, y + 20, 220, 150);
  s.paragraph("Figure 1: Wear against belt speed for the three sites.", L, y + 188, 50, 9);
  s.heading("4 Discussion", R, y + 28, 10);
  let r = s.paragraph(`${s.words(55)}.`, R, y + 44, C, 10, 10);
  r = s.paragraph(`${s.words(45)}.`, R, r, C, 10, 10);
  y = Math.max(y + 205, r) + 20;
  s.paragraph("Table 2: Spare parts held per site.", L, y, 110, 9);
  s.table(
    [
      ["Part", "North", "South", "Harbour"],
      ["Idler", "120", "80", "45"],
      ["Belt splice kit", "6", "4", "9"],
      ["Pulley lagging", "2", "2", "1"],
    ],
    [50, 220, 330, 440],
    545,
    y + 10,
    false,
    9,
  );
  return { name: "two-column article", bytes: await s.pdf.save(), pages: 2, elements: s.elements, order: s.order };
}

/** One page of an inspection form: a heading, form rows, `label: value` lines, a checkbox list, a ruled table. */
export async function formPdf(): Promise<LayoutFixture> {
  const s = await sheet();
  s.newPage();
  s.heading("Site Inspection Form", 50, 70, 16);
  const rows: [string, string][] = [
    ["Inspector", "Dana Whitfield"],
    ["Site", "North pit, bench 4"],
    ["Date of visit", "12 March 2026"],
  ];
  const inks = rows.map(([k, v], i) => {
    const a = s.text(k, 50, 110 + i * 16, 10, s.bold);
    const b = s.text(v, 170, 110 + i * 16, 10);
    return { ...a, x1: b.x1 };
  });
  s.record("key_value", inks, rows.flat().join(" "));
  const lines = ["Weather: dry, 14 degrees", "Shift supervisor: Omar Haddad", "Permit number: QP-2291"];
  s.record("key_value", lines.map((l, i) => s.text(l, 50, 175 + i * 14, 10)), lines.join(" "));
  s.heading("Checks", 50, 240, 12);
  s.list(["Guards fitted on all tail pulleys", "Emergency stop cords tested along the full length of the belt", "Walkways clear of spillage"], () => "❏", 50, 260, 80, 10, true);
  s.heading("Readings", 50, 330, 12);
  s.table(
    [
      ["Point", "Vibration mm/s", "Temperature C", "Status"],
      ["Head pulley", "2.1", "48", "OK"],
      ["Tail pulley", "4.7", "61", "Watch"],
      ["Drive motor", "1.2", "55", "OK"],
    ],
    [50, 180, 310, 430],
    545,
    345,
    true,
  );
  s.paragraph(`Notes. ${s.words(45)}.`, 50, 450, 100, 10);
  return { name: "inspection form", bytes: await s.pdf.save(), pages: 1, elements: s.elements, order: s.order };
}

export async function layoutFixtures(): Promise<LayoutFixture[]> {
  return [await articlePdf(), await formPdf(), await booktabsPdf()];
}

/**
 * An Arabic line drawn the way word processors draw it: glyphs left to right on the page, the
 * lam-alef ligature one glyph whose ToUnicode entry is its two letters "لا". The font is
 * Helvetica with a ToUnicode map that gives its letters Arabic meanings (no font with Arabic glyphs
 * can be embedded here): what is checked is the text layer, not the shapes. The line reads
 * "سلام الم" (salaam, then alef-lam-meem drawn as three glyphs, whose alef-lam must stay as it is).
 */
export async function lamAlefPdf(): Promise<Uint8Array> {
  const pdf = await PDFDocument.create();
  const page = pdf.addPage([A4.width, A4.height]);
  // A meem, B lam-alef (one glyph, two letters), C seen, D alef, E lam.
  const cmap = [
    "/CIDInit /ProcSet findresource begin 12 dict begin begincmap",
    "/CIDSystemInfo << /Registry (Adobe) /Ordering (UCS) /Supplement 0 >> def",
    "/CMapName /Adobe-Identity-UCS def /CMapType 2 def",
    "1 begincodespacerange <00> <FF> endcodespacerange",
    "6 beginbfchar <20> <0020> <41> <0645> <42> <06440627> <43> <0633> <44> <0627> <45> <0644> endbfchar",
    "endcmap CMapName currentdict /CMap defineresource pop end end",
  ].join("\n");
  const toUnicode = pdf.context.register(pdf.context.stream(cmap));
  const font = pdf.context.register(pdf.context.obj({ Type: "Font", Subtype: "Type1", BaseFont: "Helvetica", ToUnicode: toUnicode }));
  page.node.setFontDictionary(PDFName.of("FAr"), font);
  // Visual order, left to right, "AED ABC": the second word (meem, lam, alef) then the first (meem, lam-alef, seen).
  page.pushOperators(beginText(), setFontAndSize("FAr", 14), moveText(100, 700), showText(PDFHexString.of("41454420414243")), endText());
  return pdf.save();
}

/** The rows of booktabsPdf's table, header first. */
export const BOOKTABS_ROWS = [
  ["Model", "Params", "Top-1", "Latency"],
  ["ResNet-50", "25.6M", "76.1", "4.1 ms"],
  ["ViT-B/16", "86.6M", "81.8", "7.9 ms"],
  ["ConvNeXt-T", "28.6M", "82.1", "4.5 ms"],
  ["Swin-T", "28.3M", "81.3", "5.2 ms"],
];

/**
 * A table ruled the booktabs way (a rule over the header, one under it, one at the end; no vertical
 * rules) whose columns stand only 7 pt (0.7 em) apart, closer than the 0.9 em that splits a line
 * into cells, between two paragraphs, with no caption.
 */
export async function booktabsPdf(): Promise<LayoutFixture> {
  const s = await sheet();
  s.newPage();
  const size = 10;
  let y = s.paragraph("The measurements below were taken on one machine with the same batch size for every model, and each figure is the median of five runs.", 72, 100, 80, size, 0, 1.3);
  const widths = BOOKTABS_ROWS[0]!.map((_, c) => Math.max(...BOOKTABS_ROWS.map((r) => s.font.widthOfTextAtSize(r[c]!, size))));
  const xs = widths.reduce<number[]>((acc, _, c) => [...acc, c === 0 ? 72 : acc[c - 1]! + widths[c - 1]! + 7], []);
  const right = xs.at(-1)! + widths.at(-1)!;
  const rule = (at: number, thickness: number) => s.page.drawLine({ start: { x: 70, y: H - at }, end: { x: right + 2, y: H - at }, thickness, color: rgb(0, 0, 0) });
  const top = y + 2;
  rule(top, 0.8);
  const inks = BOOKTABS_ROWS.flatMap((row, r) => row.map((cell, c) => s.text(cell, xs[c]!, top + 13 + r * 14 + (r ? 4 : 0), size)));
  rule(top + 18, 0.5);
  y = top + 13 + (BOOKTABS_ROWS.length - 1) * 14 + 4 + 6;
  rule(y, 0.8);
  s.record("table", inks, BOOKTABS_ROWS.flat().join(" "), BOOKTABS_ROWS);
  s.paragraph("Latency is measured per image on the CPU, after a warm-up run that is not counted in the figures.", 72, y + 24, 80, size, 0, 1.3);
  return { name: "booktabs table", bytes: await s.pdf.save(), pages: 1, elements: s.elements, order: s.order };
}

/** How sidewaysPdf's pages carry their landscape content. */
export type Sideways = "up" | "down" | "rotated page";

/** The rows of sidewaysPdf's table, header first. */
export const SIDEWAYS_ROWS = [
  ["Site", "Tonnes", "Hours", "Crews", "Stoppages"],
  ["North pit", "12,480", "1,920", "4", "3"],
  ["South pit", "9,310", "1,644", "3", "7"],
  ["Harbour quarry", "15,022", "2,210", "5", "2"],
  ["East bench", "4,875", "880", "2", "11"],
  ["Crusher yard", "7,640", "1,302", "3", "5"],
];

/**
 * Writes landscape content on the sheet's current page, sideways as `way` says: content is placed
 * in the landscape frame (842 x 595, top-left origin) and mapped onto the page; truth boxes are of
 * the page as shown (portrait, or landscape for a page turned by /Rotate 90).
 */
function sidewaysWriter(s: Sheet, way: Sideways) {
  // Frame point (x along the text, y down its lines) → PDF user space.
  const pdfPoint = (fx: number, fy: number): [number, number] => (way === "down" ? [W - fy, H - fx] : [fy, fx]);
  // PDF user space → the page as shown (top-left origin), normalized.
  const shown = ([px, py]: [number, number]): [number, number] => (way === "rotated page" ? [py / H, px / W] : [px / W, (H - py) / H]);
  const text = (str: string, fx: number, fy: number, size: number, font = s.font): Ink => {
    const [x, y] = pdfPoint(fx, fy);
    s.page.drawText(str, { x, y, size, font, rotate: degrees(way === "down" ? 270 : 90) });
    s.order.at(-1)!.push(...str.split(/\s+/).filter(Boolean));
    return { x0: fx, x1: fx + font.widthOfTextAtSize(str, size), top: fy - size * 0.72, bottom: fy + size * 0.21 };
  };
  const record = (type: TruthType, inks: Ink[], str: string, rows?: string[][]) => {
    const [a, b] = [shown(pdfPoint(Math.min(...inks.map((i) => i.x0)), Math.min(...inks.map((i) => i.top)))), shown(pdfPoint(Math.max(...inks.map((i) => i.x1)), Math.max(...inks.map((i) => i.bottom))))];
    const box = { x: Math.min(a[0], b[0]), y: Math.min(a[1], b[1]), w: Math.abs(a[0] - b[0]), h: Math.abs(a[1] - b[1]) };
    s.elements.push({ page: s.n, type, box, text: str, ...(rows ? { rows } : {}) });
  };
  return {
    heading: (str: string, fx: number, fy: number) => record("heading", [text(str, fx, fy, 16, s.bold)], str),
    paragraph: (words: string, fx: number, fy: number, chars = 130): number => {
      const inks = wrap(words, chars).map((line, i) => text(line, fx, fy + i * 12.5, 10));
      record("paragraph", inks, words);
      return fy + inks.length * 12.5;
    },
    /** SIDEWAYS_ROWS at column positions `xs` (the last is the right edge), rows 18 pt apart, the header bold. Returns the y under it. */
    table: (xs: number[], top: number, ruled: boolean): number => {
      const inks = SIDEWAYS_ROWS.flatMap((row, r) => row.map((cell, c) => text(cell, xs[c]! + 4, top + 12 + r * 18, 9, r === 0 ? s.bold : s.font)));
      const bottom = top + SIDEWAYS_ROWS.length * 18;
      if (ruled) {
        const line = (fx0: number, fy0: number, fx1: number, fy1: number) => {
          const [[x0, y0], [x1, y1]] = [pdfPoint(fx0, fy0), pdfPoint(fx1, fy1)];
          s.page.drawLine({ start: { x: x0, y: y0 }, end: { x: x1, y: y1 }, thickness: 0.6, color: rgb(0, 0, 0) });
        };
        for (let r = 0; r <= SIDEWAYS_ROWS.length; r++) line(xs[0]!, top + r * 18, xs.at(-1)!, top + r * 18);
        for (const fx of xs) line(fx, top, fx, bottom);
        inks.push({ x0: xs[0]!, x1: xs.at(-1)!, top, bottom });
      }
      record("table", inks, SIDEWAYS_ROWS.flat().join(" "), SIDEWAYS_ROWS);
      return bottom;
    },
  };
}

/**
 * Landscape content (a heading, a paragraph, a table, a closing paragraph) on portrait A4 pages
 * printed sideways, one page per way of doing it: text running up the page ("up", an unruled
 * table), text running down it ("down", the table ruled), and a page turned by /Rotate 90 whose
 * text, drawn running up, shows upright in a landscape viewer ("rotated page", unruled).
 */
export async function sidewaysPdf(): Promise<LayoutFixture> {
  const s = await sheet();
  const ways: Sideways[] = ["up", "down", "rotated page"];
  for (const way of ways) {
    s.newPage();
    if (way === "rotated page") s.page.setRotation(degrees(90));
    const w = sidewaysWriter(s, way);
    w.heading(`Quarterly output by site (${way})`, 60, 60);
    const y = w.paragraph(`${s.words(60)}.`, 60, 92);
    const bottom = w.table([60, 220, 320, 420, 520, 640], y + 10, way === "down");
    w.paragraph(`${s.words(40)}.`, 60, bottom + 24);
  }
  return { name: "sideways pages", bytes: await s.pdf.save(), pages: ways.length, elements: s.elements, order: s.order };
}

/**
 * Pages that mix directions. First: an upright heading and paragraph over a table printed
 * sideways (running up) in the lower half of the page. Second: a page printed sideways (running
 * up: heading, paragraph, table) under an upright running header, with an upright page number.
 */
export async function mixedPdf(): Promise<LayoutFixture> {
  const s = await sheet();
  s.newPage();
  s.heading("Site report", 60, 70, 16);
  s.paragraph(`${s.words(70)}.`, 60, 100, 95);
  // The frame's x runs up the page: the table stands between 40 and 440 pt from the page's foot.
  sidewaysWriter(s, "up").table([40, 150, 220, 290, 360, 440], 60, false);
  s.newPage();
  s.record("paragraph", [s.text("Annual report 2025, appendix B, output tables", 60, 30, 9)], "Annual report 2025, appendix B, output tables");
  const w = sidewaysWriter(s, "up");
  w.heading("Quarterly output by site", 80, 90);
  const y = w.paragraph(`${s.words(50)}.`, 80, 122, 110);
  w.table([80, 240, 340, 440, 540, 660], y + 10, false);
  s.record("paragraph", [s.text("17", W / 2, H - 25, 9)], "17");
  return { name: "mixed directions", bytes: await s.pdf.save(), pages: 2, elements: s.elements, order: s.order };
}
