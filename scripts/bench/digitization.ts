/**
 * Digitization figures: how well the PDF reader's elements match layout ground truth.
 *
 *   bun scripts/bench/digitization.ts          (or: npm run bench:digitization)
 *
 * Prints numbers; it is not a test. Sets that are absent are skipped with a note.
 *  1. Generated PDFs with known structure (test/support/layout-pdfs.ts: two columns under a
 *     full-width title, ruled and unruled tables, lists, checkbox lists, form rows, figures):
 *     per-class precision / recall / F1 with boxes matched at IoU >= 0.5, and with text matched at
 *     word overlap >= 0.5; table cell F1; word-order F1.
 *  2. DocBank (../shared/datasets/layout/docbank): DocBank's own token-level metric (each truth
 *     token takes the class of the element whose box holds its centre) per class; figures
 *     against pdfminer's figure objects at IoU >= 0.5; word-order F1.
 *  3. ICDAR 2013 (../shared/datasets/tables/icdar2013): table detection (IoU >= 0.5 with the truth
 *     region) and cell F1: cell texts, and adjacency relations (each non-empty cell with its
 *     next non-empty neighbour right and down, the ICDAR 2013 measure), against the best-overlapping
 *     table found on the page.
 *  4. Camelot's fixtures (../shared/datasets/tables/camelot): cell-text F1 against the table of the
 *     page that shares most cells (they carry no regions).
 *  6. Speed: median pages/s per document over every PDF read, and `pdftotext` on the same files.
 * Every dataset of ../shared/datasets is scored on its fixed tuning half and held-out half apart
 * (splits.ts); rules are tuned on the first, and a change is kept only when the second improves too.
 * Word-order F1 is the F1 of consecutive word pairs (bigrams) against the truth's order, for
 * Mediabox's page text and for `pdftotext` (poppler-utils; skipped with a note when absent).
 *  5. Scans: DocBank's 200 dpi page images read as scanned PDFs (OCR), scored as in 2; and
 *     PubLayNet (../shared/datasets/layout/publaynet): its 72 dpi page images, each put alone on a PDF
 *     page of the image's size (a scanned PDF: no text layer), read with the real OCR engine;
 *     per-class precision / recall / F1 at IoU >= 0.5 (title → heading, text → paragraph, one
 *     list box per whole list). Slow (OCR of each page): MEDIABOX_BENCH_ONLY=publaynet runs it alone.
 */
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { PDFDocument } from "pdf-lib";
import { readDocument, type OcrLike } from "../../src/documents/read-document.ts";
import { OcrEngine } from "../../src/ocr/ocr.ts";
import type { DocElement, DocumentContent } from "../../src/documents/types.ts";
import { layoutFixtures, type TruthElement } from "../../test/support/layout-pdfs.ts";
import { run } from "../../test/support/process.ts";
import { HALVES, splitItems, type Half } from "./splits.ts";
import { LayoutDetector } from "../../src/documents/layout-model/layout-detector.ts";
import { DEFAULT_LAYOUT_MODEL } from "../../src/documents/layout-model/layout-models.ts";

const DATA = resolve(process.env.MEDIABOX_DATASETS ?? join(import.meta.dir, "../../../shared/datasets"));
const ONLY = process.env.MEDIABOX_BENCH_ONLY;
const tmp = mkdtempSync(join(tmpdir(), "mediabox-bench-digit-"));
const noOcr: OcrLike = { recognize: () => Promise.reject(new Error("no OCR in this bench")) };

/**
 * The layout model, when its folder is in MEDIABOX_MODELS_DIR (default models/): every set is then
 * read twice in one run, by the rules alone and with the model, so the two compare on the same
 * machine load (MEDIABOX_BENCH_VARIANT=rules or =model reads once).
 */
const MODELS_DIR = resolve(process.env.MEDIABOX_MODELS_DIR ?? join(import.meta.dir, "../../models"));
const LAYOUT_MODEL = process.env.MEDIABOX_LAYOUT_MODEL ?? DEFAULT_LAYOUT_MODEL;
const detector = process.env.MEDIABOX_BENCH_VARIANT === "rules" ? null : await LayoutDetector.open(MODELS_DIR, LAYOUT_MODEL);
const variants: { name: string; layout: LayoutDetector | null }[] =
  process.env.MEDIABOX_BENCH_VARIANT === "model" && detector ? [{ name: `model ${LAYOUT_MODEL}`, layout: detector }] : [{ name: "rules", layout: null }, ...(detector ? [{ name: `model ${LAYOUT_MODEL}`, layout: detector }] : [])];
if (!detector) console.log(`No layout model at ${join(MODELS_DIR, LAYOUT_MODEL)}: the rules alone are measured.`);
/** The layout model of the variant being measured. */
let layout: LayoutDetector | null = null;
/** Overall figures per set, half and variant, printed side by side at the end. */
const summary: { set: string; half: Half; variant: string; figure: number }[] = [];
const note = (set: string, half: Half, figure: number) => summary.push({ set, half, variant: variants.find((v) => v.layout === layout)!.name, figure });

let ocrEngine: OcrEngine | null = null;
let ocrShared: OcrLike | null = null;
/** The real OCR engine (started on first use, closed at the end), its answers kept by image. */
function scanOcr(): OcrLike {
  if (!ocrShared) ocrShared = cachedOcr((ocrEngine = new OcrEngine({ workers: 2 })));
  return ocrShared;
}

const overallF1 = (counts: Record<string, Counts>) => f1(Object.values(counts).reduce(add, zero()));

/**
 * OCR answers kept by image: the second variant reads the same renderings, so OCR runs once per
 * page. MEDIABOX_BENCH_OCR_CACHE=DIR keeps them on disk too, for runs after this one (tesseract is
 * deterministic; the speed lines then leave OCR out).
 */
function cachedOcr(ocr: OcrLike): OcrLike {
  const answers = new Map<string, ReturnType<OcrLike["recognize"]>>();
  const dir = process.env.MEDIABOX_BENCH_OCR_CACHE;
  if (dir) mkdirSync(dir, { recursive: true });
  return {
    recognize(image, options) {
      const key = `${options?.segmentation ?? "auto"}-${createHash("sha256").update(image).digest("hex")}`;
      let answer = answers.get(key);
      if (!answer) {
        const file = dir ? join(dir, `${key}.json`) : null;
        answer = file && existsSync(file) ? Promise.resolve(JSON.parse(readFileSync(file, "utf8"))) : ocr.recognize(image, options);
        if (file && !existsSync(file)) void answer.then((a) => writeFileSync(file, JSON.stringify(a)));
        answers.set(key, answer);
      }
      return answer;
    },
  };
}

type Box = { x: number; y: number; w: number; h: number };
interface Counts {
  tp: number;
  fp: number;
  fn: number;
}
const CLASSES = ["heading", "paragraph", "list", "table", "figure", "key_value"] as const;

const f1 = ({ tp, fp, fn }: Counts) => (tp ? (2 * tp) / (2 * tp + fp + fn) : 0);
const prec = ({ tp, fp }: Counts) => (tp + fp ? tp / (tp + fp) : 0);
const rec = ({ tp, fn }: Counts) => (tp + fn ? tp / (tp + fn) : 0);
const pct = (n: number) => n.toFixed(2);
const add = (a: Counts, b: Counts) => ({ tp: a.tp + b.tp, fp: a.fp + b.fp, fn: a.fn + b.fn });
const zero = (): Counts => ({ tp: 0, fp: 0, fn: 0 });

function iou(a: Box, b: Box): number {
  const ix = Math.max(0, Math.min(a.x + a.w, b.x + b.w) - Math.max(a.x, b.x));
  const iy = Math.max(0, Math.min(a.y + a.h, b.y + b.h) - Math.max(a.y, b.y));
  const inter = ix * iy;
  const union = a.w * a.h + b.w * b.h - inter;
  return union > 0 ? inter / union : 0;
}

const words = (s: string) =>
  s
    .toLowerCase()
    .normalize("NFKC")
    .split(/[^\p{L}\p{N}]+/u)
    .filter(Boolean);

/** Shared words over the larger of the two word counts (multisets). */
function textOverlap(a: string, b: string): number {
  const wa = words(a);
  const wb = words(b);
  if (!wa.length || !wb.length) return 0;
  const counts = new Map<string, number>();
  for (const w of wa) counts.set(w, (counts.get(w) ?? 0) + 1);
  let common = 0;
  for (const w of wb) {
    const n = counts.get(w) ?? 0;
    if (n > 0) {
      common++;
      counts.set(w, n - 1);
    }
  }
  return common / Math.max(wa.length, wb.length);
}

/** F1 of consecutive word pairs. */
function orderF1(predicted: string[], truth: string[]): number {
  const pairs = (ws: string[]) => {
    const m = new Map<string, number>();
    for (let i = 1; i < ws.length; i++) m.set(`${ws[i - 1]} ${ws[i]}`, (m.get(`${ws[i - 1]} ${ws[i]}`) ?? 0) + 1);
    return m;
  };
  const p = pairs(predicted);
  const t = pairs(truth);
  let tp = 0;
  for (const [k, n] of p) tp += Math.min(n, t.get(k) ?? 0);
  const np = Math.max(0, predicted.length - 1);
  const nt = Math.max(0, truth.length - 1);
  return np + nt ? (2 * tp) / (np + nt) : 1;
}

interface Scored {
  page: number;
  type: string;
  box: Box;
  text: string;
}

/** Greedy one-to-one matching of same-class elements per page; `ok` says whether a pair matches. */
function matchCounts(pred: Scored[], truth: Scored[], ok: (p: Scored, t: Scored) => number): Record<string, Counts> {
  const out: Record<string, Counts> = {};
  for (const c of CLASSES) out[c] = zero();
  const used = new Set<number>();
  for (const t of truth) {
    let best = -1;
    let score = 0;
    pred.forEach((p, i) => {
      if (used.has(i) || p.page !== t.page || p.type !== t.type) return;
      const s = ok(p, t);
      if (s > score) [best, score] = [i, s];
    });
    if (best >= 0) {
      used.add(best);
      out[t.type]!.tp++;
    } else out[t.type]!.fn++;
  }
  pred.forEach((p, i) => {
    if (!used.has(i) && out[p.type]) out[p.type]!.fp++;
  });
  return out;
}

/** Rows of a Markdown table element. */
function tableRows(e: DocElement): string[][] {
  return e.content
    .split("\n")
    .filter((l, i) => i !== 1 && l.startsWith("|"))
    .map((l) =>
      l
        .slice(1, -1)
        .split(/(?<!\\)\|/)
        .map((c) => c.replace(/\\\|/g, "|").trim()),
    );
}

const norm = (s: string) => s.toLowerCase().normalize("NFKC").replace(/\s+/g, "");

function cellSet(rows: string[][]): string[] {
  return rows.flat().map(norm).filter(Boolean);
}

/** Adjacency relations: each non-empty cell with the next non-empty cell to its right and below. */
function adjacency(rows: string[][]): string[] {
  const out: string[] = [];
  const cols = Math.max(0, ...rows.map((r) => r.length));
  for (let r = 0; r < rows.length; r++) {
    for (let c = 0; c < cols; c++) {
      const a = norm(rows[r]?.[c] ?? "");
      if (!a) continue;
      for (let c2 = c + 1; c2 < cols; c2++) {
        const b = norm(rows[r]?.[c2] ?? "");
        if (b) {
          out.push(`${a}→${b}`);
          break;
        }
      }
      for (let r2 = r + 1; r2 < rows.length; r2++) {
        const b = norm(rows[r2]?.[c] ?? "");
        if (b) {
          out.push(`${a}↓${b}`);
          break;
        }
      }
    }
  }
  return out;
}

function multisetCounts(pred: string[], truth: string[]): Counts {
  const m = new Map<string, number>();
  for (const t of truth) m.set(t, (m.get(t) ?? 0) + 1);
  let tp = 0;
  for (const p of pred) {
    const n = m.get(p) ?? 0;
    if (n > 0) {
      tp++;
      m.set(p, n - 1);
    }
  }
  return { tp, fp: pred.length - tp, fn: truth.length - tp };
}

const timings: { pages: number; ms: number; file: string; variant: string }[] = [];
let havePdftotext: boolean | null = null;
const popplerMs: number[] = [];

async function read(bytes: Uint8Array, file: string): Promise<DocumentContent> {
  const started = performance.now();
  const doc = await readDocument(bytes, "pdf", { ocr: noOcr, layout });
  timings.push({ pages: doc.pages.length, ms: performance.now() - started, file, variant: variants.find((v) => v.layout === layout)!.name });
  return doc;
}

/** pdftotext's words per page (reading order, no -layout), or null when it is not installed. */
async function popplerPages(path: string, pages: number): Promise<string[][] | null> {
  if (havePdftotext === null) havePdftotext = (await run(["sh", "-c", "command -v pdftotext"]).catch(() => ({ exitCode: 1 }))).exitCode === 0;
  if (!havePdftotext) return null;
  const started = performance.now();
  const result = await run(["pdftotext", "-l", String(pages), path, "-"]);
  popplerMs.push(performance.now() - started);
  if (result.exitCode !== 0) return null;
  return result.stdout.split("\f").map(words);
}

function printClasses(title: string, byIou: Record<string, Counts>, byText: Record<string, Counts>) {
  console.log(`\n${title}`);
  console.log("class        truth  found  P(IoU)  R(IoU)  F1(IoU)  F1(text)");
  let all = zero();
  let allText = zero();
  for (const c of CLASSES) {
    const a = byIou[c]!;
    const t = byText[c]!;
    if (!a.tp && !a.fp && !a.fn) continue;
    all = add(all, a);
    allText = add(allText, t);
    console.log(`${c.padEnd(12)} ${String(a.tp + a.fn).padStart(5)}  ${String(a.tp + a.fp).padStart(5)}  ${pct(prec(a)).padStart(6)}  ${pct(rec(a)).padStart(6)}  ${pct(f1(a)).padStart(7)}  ${pct(f1(t)).padStart(8)}`);
  }
  console.log(`${"overall".padEnd(12)} ${String(all.tp + all.fn).padStart(5)}  ${String(all.tp + all.fp).padStart(5)}  ${pct(prec(all)).padStart(6)}  ${pct(rec(all)).padStart(6)}  ${pct(f1(all)).padStart(7)}  ${pct(f1(allText)).padStart(8)}`);
}

const scored = (doc: DocumentContent): Scored[] =>
  doc.pages.flatMap((p) => p.elements.filter((e) => !e.metadata?.furniture).map((e) => ({ page: p.page_number, type: e.type, box: e.bounding_box, text: e.content })));

async function generated() {
  let byIou: Record<string, Counts> = {};
  let byText: Record<string, Counts> = {};
  for (const c of CLASSES) [byIou[c], byText[c]] = [zero(), zero()];
  let cells = zero();
  const orders: string[] = [];
  for (const fx of await layoutFixtures()) {
    const doc = await read(fx.bytes, fx.name);
    const pred = scored(doc);
    const truth: Scored[] = fx.elements.map((e: TruthElement) => ({ page: e.page, type: e.type, box: e.box, text: e.text }));
    const a = matchCounts(pred, truth, (p, t) => (iou(p.box, t.box) >= 0.5 ? iou(p.box, t.box) : 0));
    const b = matchCounts(pred, truth, (p, t) => {
      if (!t.text) return iou(p.box, t.box) >= 0.5 ? 1 : 0;
      const o = textOverlap(p.text, t.text);
      return o >= 0.5 ? o : 0;
    });
    for (const c of CLASSES) [byIou[c], byText[c]] = [add(byIou[c]!, a[c]!), add(byText[c]!, b[c]!)];
    for (const t of fx.elements.filter((e) => e.type === "table")) {
      const page = doc.pages[t.page - 1]!;
      const best = page.elements.filter((e) => e.type === "table").sort((x, y) => iou(y.bounding_box, t.box) - iou(x.bounding_box, t.box))[0];
      cells = add(cells, multisetCounts(best && iou(best.bounding_box, t.box) > 0.1 ? adjacency(tableRows(best)) : [], adjacency(t.rows!)));
    }
    const path = join(tmp, "fixture.pdf");
    await Bun.write(path, fx.bytes);
    const poppler = await popplerPages(path, fx.pages);
    const ours = fx.order.map((truthWords, i) => orderF1(words(doc.pages[i]?.text ?? ""), words(truthWords.join(" "))));
    const theirs = poppler ? fx.order.map((truthWords, i) => orderF1(poppler[i] ?? [], words(truthWords.join(" ")))) : null;
    const mean = (xs: number[]) => xs.reduce((s, x) => s + x, 0) / xs.length;
    orders.push(`  ${fx.name.padEnd(22)} Mediabox ${pct(mean(ours))}   pdftotext ${theirs ? pct(mean(theirs)) : "n/a"}`);
  }
  printClasses("Generated PDFs (test/support/layout-pdfs.ts): elements", byIou, byText);
  note("Generated PDFs: element F1, IoU >= 0.5", "tuning", overallF1(byIou));
  console.log(`table adjacency F1: ${pct(f1(cells))} (P ${pct(prec(cells))}, R ${pct(rec(cells))})`);
  console.log("word-order F1 (bigrams):");
  for (const o of orders) console.log(o);
}

const DOCBANK_CLASS: Record<string, string | undefined> = {
  section: "heading",
  title: "heading",
  paragraph: "paragraph",
  abstract: "paragraph",
  caption: "paragraph",
  author: "paragraph",
  date: "paragraph",
  list: "list",
  table: "table",
  figure: "figure",
};

/** A page image alone on a PDF page of `size` points: a scanned PDF, no text layer. */
async function scanPdf(jpeg: Uint8Array, size: [number, number]): Promise<Uint8Array> {
  const pdf = await PDFDocument.create();
  const image = await pdf.embedJpg(jpeg);
  pdf.addPage(size).drawImage(image, { x: 0, y: 0, width: size[0], height: size[1] });
  return pdf.save();
}

/** `scanned`: each page's 200 dpi image read as a scan (OCR) instead of the PDF's text layer. */
async function docbank(scanned = false) {
  const dir = join(DATA, "layout/docbank");
  if (!existsSync(join(dir, "manifest.json"))) return console.log("\nDocBank: absent, skipped");
  const manifest = JSON.parse(readFileSync(join(dir, "manifest.json"), "utf8")) as { pages: { id: string; pdf: string; image: string; page_size_pt: [number, number]; truth_json: string }[] };
  const ocr = scanned ? scanOcr() : null;
  const halves = splitItems("docbank", manifest.pages, (p) => p.id);
  for (const half of HALVES) {
    const counts: Record<string, Counts> = {};
    for (const c of CLASSES) counts[c] = zero();
    const ours: number[] = [];
    const theirs: number[] = [];
    const figures = zero();
    const started = performance.now();
    for (const page of halves[half]) {
      const doc = ocr
        ? await readDocument(await scanPdf(new Uint8Array(readFileSync(join(dir, page.image))), page.page_size_pt), "pdf", { ocr, layout })
        : await read(new Uint8Array(readFileSync(join(dir, page.pdf))), page.id);
      const elements = doc.pages[0]?.elements.filter((e) => !e.metadata?.furniture) ?? [];
      const all = (JSON.parse(readFileSync(join(dir, page.truth_json), "utf8")) as { tokens: { text: string; bbox: number[]; label: string }[] }).tokens;
      const tokens = all.filter((t) => !t.text.startsWith("##LT"));
      // Figures: pdfminer's figure objects (##LTFigure) of at least 1% of the page, against Mediabox's figures at IoU >= 0.5.
      const truthFigures = all
        .filter((t) => t.text === "##LTFigure##")
        .map((t) => ({ x: t.bbox[0]! / 1000, y: t.bbox[1]! / 1000, w: (t.bbox[2]! - t.bbox[0]!) / 1000, h: (t.bbox[3]! - t.bbox[1]!) / 1000 }))
        .filter((b) => b.w * b.h >= 0.01)
        // pdfminer lists some figures twice (nested objects of one box).
        .filter((b, i, list) => list.findIndex((o) => iou(o, b) > 0.95) === i);
      const found = elements.filter((e) => e.type === "figure").map((e) => e.bounding_box);
      const used = new Set<number>();
      for (const t of truthFigures) {
        const i = found.findIndex((f, k) => !used.has(k) && iou(f, t) >= 0.5);
        if (i >= 0) {
          used.add(i);
          figures.tp++;
        } else figures.fn++;
      }
      figures.fp += found.length - used.size;
      for (const t of tokens) {
        const truth = DOCBANK_CLASS[t.label];
        if (!truth) continue;
        const cx = (t.bbox[0]! + t.bbox[2]!) / 2000;
        const cy = (t.bbox[1]! + t.bbox[3]! + 0) / 2000;
        const holder = elements
          .filter((e) => e.bounding_box.x <= cx && cx <= e.bounding_box.x + e.bounding_box.w && e.bounding_box.y <= cy && cy <= e.bounding_box.y + e.bounding_box.h)
          .sort((a, b) => a.bounding_box.w * a.bounding_box.h - b.bounding_box.w * b.bounding_box.h)[0];
        const predicted = holder?.type === "key_value" ? "paragraph" : holder?.type;
        if (predicted === truth) counts[truth]!.tp++;
        else {
          counts[truth]!.fn++;
          if (predicted && counts[predicted]) counts[predicted]!.fp++;
        }
      }
      const truthWords = words(tokens.filter((t) => t.label !== "footer").map((t) => t.text).join(" "));
      ours.push(orderF1(words(doc.pages[0]?.text ?? ""), truthWords));
      const poppler = scanned ? null : await popplerPages(join(dir, page.pdf), 1);
      if (poppler) theirs.push(orderF1(poppler[0] ?? [], truthWords));
      if (process.env.MEDIABOX_BENCH_VERBOSE) console.log(`  ${page.id.slice(0, 48).padEnd(48)} order ${pct(ours.at(-1)!)} vs pdftotext ${poppler ? pct(theirs.at(-1)!) : "n/a"}`);
    }
    const seconds = (performance.now() - started) / 1000;
    console.log(`\nDocBank, ${half} half (${halves[half].length} pages${scanned ? ", their 200 dpi images read as scans" : ""}, ${pct(halves[half].length / seconds)} pages/s): token-level label F1 (DocBank's metric)`);
    console.log("class        tokens   P      R      F1");
    let all = zero();
    for (const c of CLASSES) {
      const k = counts[c]!;
      if (!k.tp && !k.fn) continue;
      all = add(all, k);
      console.log(`${c.padEnd(12)} ${String(k.tp + k.fn).padStart(6)}  ${pct(prec(k))}   ${pct(rec(k))}   ${pct(f1(k))}`);
    }
    console.log(`${"overall".padEnd(12)} ${String(all.tp + all.fn).padStart(6)}  ${pct(prec(all))}   ${pct(rec(all))}   ${pct(f1(all))}`);
    note(`DocBank (${scanned ? "scans" : "text layer"}): token label F1`, half, f1(all));
    console.log(`figures (pdfminer's figure objects, IoU >= 0.5): ${figures.tp + figures.fn} in the truth, ${figures.tp + figures.fp} found, P ${pct(prec(figures))} R ${pct(rec(figures))} F1 ${pct(f1(figures))}`);
    const mean = (xs: number[]) => (xs.length ? xs.reduce((s, x) => s + x, 0) / xs.length : NaN);
    console.log(`word-order F1 (bigrams, truth token order): Mediabox ${pct(mean(ours))}   pdftotext ${theirs.length ? pct(mean(theirs)) : "n/a (pdftotext not installed)"}`);
  }
}

interface IcdarTable {
  page: number;
  bbox_pdf: number[];
  rows: string[][];
}

async function icdar() {
  const dir = join(DATA, "tables/icdar2013");
  if (!existsSync(join(dir, "manifest.json"))) return console.log("\nICDAR 2013: absent, skipped");
  const manifest = JSON.parse(readFileSync(join(dir, "manifest.json"), "utf8")) as { documents: { file: string; tables: IcdarTable[] }[] };
  const halves = splitItems("icdar2013", manifest.documents, (d) => d.file);
  for (const half of HALVES) await icdarHalf(dir, half, halves[half]);
}

async function icdarHalf(dir: string, half: Half, documents: { file: string; tables: IcdarTable[] }[]) {
  let detection = zero();
  let content = zero();
  let adjacent = zero();
  let truthTables = 0;
  for (const d of documents) {
    const bytes = new Uint8Array(readFileSync(join(dir, d.file)));
    const doc = await read(bytes, d.file);
    const sizes = (await PDFDocument.load(bytes, { ignoreEncryption: true })).getPages().map((p) => ({ ...p.getMediaBox(), rotate: ((p.getRotation().angle % 360) + 360) % 360 }));
    const pages = new Set(d.tables.map((t) => t.page));
    for (const n of pages) {
      const mb = sizes[n - 1]!;
      const truth = d.tables.filter((t) => t.page === n);
      const found = doc.pages[n - 1]?.elements.filter((e) => e.type === "table") ?? [];
      const used = new Set<number>();
      for (const t of truth) {
        truthTables++;
        const [x1, y1, x2, y2] = t.bbox_pdf as [number, number, number, number];
        // On a page turned a quarter by /Rotate (eu-015), ICDAR's boxes are in the page as shown
        // (x from its left edge), with y counted up from the unturned page's height: the table
        // regions line up with their cells' text only read so (checked on the set's one such page, turned 90°).
        // Mediabox's boxes are of the page as shown.
        const quarter = mb.rotate === 90 || mb.rotate === 270;
        const box = quarter
          ? { x: (x1 - mb.y) / mb.height, y: (mb.y + mb.height - y2) / mb.width, w: (x2 - x1) / mb.height, h: (y2 - y1) / mb.width }
          : { x: (x1 - mb.x) / mb.width, y: (mb.y + mb.height - y2) / mb.height, w: (x2 - x1) / mb.width, h: (y2 - y1) / mb.height };
        let best = -1;
        let score = 0;
        found.forEach((e, i) => {
          const s = iou(e.bounding_box, box);
          if (s > score) [best, score] = [i, s];
        });
        if (best >= 0 && score >= 0.5 && !used.has(best)) {
          used.add(best);
          detection.tp++;
        } else detection.fn++;
        const rows = best >= 0 && score > 0.1 ? tableRows(found[best]!) : [];
        content = add(content, multisetCounts(cellSet(rows), cellSet(t.rows)));
        adjacent = add(adjacent, multisetCounts(adjacency(rows), adjacency(t.rows)));
      }
      detection.fp += found.length - used.size;
    }
  }
  console.log(`\nICDAR 2013, ${half} half (${documents.length} PDFs, ${truthTables} tables on their pages)`);
  console.log(`table detection (IoU >= 0.5): P ${pct(prec(detection))}  R ${pct(rec(detection))}  F1 ${pct(f1(detection))}`);
  console.log(`cell text F1: ${pct(f1(content))} (P ${pct(prec(content))}, R ${pct(rec(content))})`);
  console.log(`cell adjacency F1: ${pct(f1(adjacent))} (P ${pct(prec(adjacent))}, R ${pct(rec(adjacent))})`);
  note("ICDAR 2013: cell adjacency F1", half, f1(adjacent));
}

async function camelot() {
  const dir = join(DATA, "tables/camelot");
  if (!existsSync(join(dir, "manifest.json"))) return console.log("\nCamelot fixtures: absent, skipped");
  const manifest = JSON.parse(readFileSync(join(dir, "manifest.json"), "utf8")) as { documents: { file: string; camelot_flavor: string; tables: { page: number; rows: string[][] }[] }[] };
  const halves = splitItems("camelot", manifest.documents, (d) => d.file);
  for (const half of HALVES) {
    const byFlavor: Record<string, Counts> = {};
    for (const d of halves[half]) {
      const doc = await read(new Uint8Array(readFileSync(join(dir, d.file))), d.file);
      for (const t of d.tables) {
        const truth = cellSet(t.rows);
        const found = doc.pages[t.page - 1]?.elements.filter((e) => e.type === "table") ?? [];
        const best = found.map((e) => multisetCounts(cellSet(tableRows(e)), truth)).sort((a, b) => b.tp - a.tp)[0] ?? { tp: 0, fp: 0, fn: truth.length };
        const flavor = d.camelot_flavor === "lattice" ? "ruled (lattice)" : "unruled (stream/network)";
        byFlavor[flavor] = add(byFlavor[flavor] ?? zero(), best);
      }
    }
    console.log(`\nCamelot fixtures, ${half} half (${halves[half].length} PDFs): cell text F1`);
    for (const [k, v] of Object.entries(byFlavor)) console.log(`  ${k.padEnd(26)} ${pct(f1(v))} (P ${pct(prec(v))}, R ${pct(rec(v))})`);
    note("Camelot: cell text F1", half, f1(Object.values(byFlavor).reduce(add, zero())));
  }
}

const PUBLAYNET_CLASS: Record<string, string> = { text: "paragraph", title: "heading", list: "list", table: "table", figure: "figure" };

async function publaynet() {
  const dir = join(DATA, "layout/publaynet");
  if (!existsSync(join(dir, "truth.json"))) return console.log("\nPubLayNet: absent, skipped");
  const truth = JSON.parse(readFileSync(join(dir, "truth.json"), "utf8")) as {
    pages: { image: string; width: number; height: number; elements: { type: string; bbox_xywh: number[] }[] }[];
  };
  const ocr = scanOcr();
  const halves = splitItems("publaynet", truth.pages, (p) => p.image);
  {
    for (const half of HALVES) {
      const byIou: Record<string, Counts> = {};
      const byText: Record<string, Counts> = {};
      for (const c of CLASSES) [byIou[c], byText[c]] = [zero(), zero()];
      const started = performance.now();
      await Promise.all(
        halves[half].map(async (page) => {
          const doc = await readDocument(await scanPdf(new Uint8Array(readFileSync(join(dir, page.image))), [page.width, page.height]), "pdf", { ocr, layout });
          const pred = scored(doc);
          const expected: Scored[] = page.elements.map((e) => {
            const [x, y, w, h] = e.bbox_xywh as [number, number, number, number];
            return { page: 1, type: PUBLAYNET_CLASS[e.type]!, box: { x: x / page.width, y: y / page.height, w: w / page.width, h: h / page.height }, text: "" };
          });
          const a = matchCounts(pred, expected, (p, t) => (iou(p.box, t.box) >= 0.5 ? iou(p.box, t.box) : 0));
          // Looser: the predicted box covers most of the truth's and little else (IoU >= 0.3).
          const b = matchCounts(pred, expected, (p, t) => (iou(p.box, t.box) >= 0.3 ? iou(p.box, t.box) : 0));
          for (const c of CLASSES) [byIou[c], byText[c]] = [add(byIou[c]!, a[c]!), add(byText[c]!, b[c]!)];
          if (process.env.MEDIABOX_BENCH_VERBOSE) {
            const n = (xs: Scored[], type: string) => xs.filter((x) => x.type === type).length;
            console.log(`  ${page.image.padEnd(28)} ${CLASSES.slice(0, 5).map((c) => `${c} ${n(pred, c)}/${n(expected, c)}`).join("  ")}`);
          }
        }),
      );
      const seconds = (performance.now() - started) / 1000;
      note("PubLayNet (scans): element F1, IoU >= 0.5", half, overallF1(byIou));
      printClasses(`PubLayNet, ${half} half (${halves[half].length} page images as scanned PDFs, OCR; last column: F1 at IoU >= 0.3 instead of text overlap), ${seconds.toFixed(1)} s, ${pct(halves[half].length / seconds)} pages/s`, byIou, byText);
    }
  }
}

try {
  await readDocument(new Uint8Array(await (await layoutFixtures())[1]!.bytes), "pdf", { ocr: noOcr }); // warm-up: loads pdf.js
  for (const variant of variants) {
    layout = variant.layout;
    console.log(`\n======== ${variant.name} ========`);
    if (!ONLY || ONLY === "generated") await generated();
    if (!ONLY || ONLY === "docbank") await docbank();
    if (!ONLY || ONLY === "icdar") await icdar();
    if (!ONLY || ONLY === "camelot") await camelot();
    if (!ONLY || ONLY === "publaynet") await publaynet();
    if (!ONLY || ONLY === "docbank-scans") await docbank(true);
  }
  console.log(`\nSummary (overall figure per set and half${variants.length > 1 ? "; OCR ran once, in the first variant, its answers reused" : ""})`);
  console.log(`${"set".padEnd(48)} ${"half".padEnd(9)} ${variants.map((v) => v.name.padStart(Math.max(8, v.name.length))).join("  ")}`);
  for (const set of [...new Set(summary.map((s) => s.set))]) {
    for (const half of HALVES) {
      const row = variants.map((v) => summary.find((s) => s.set === set && s.half === half && s.variant === v.name));
      if (row.every((r) => !r)) continue;
      console.log(`${set.padEnd(48)} ${half.padEnd(9)} ${row.map((r, i) => (r ? pct(r.figure) : "-").padStart(Math.max(8, variants[i]!.name.length))).join("  ")}`);
    }
  }
  for (const variant of variants) {
    const own = timings.filter((t) => t.variant === variant.name);
    if (!own.length) continue;
    const rates = own.filter((t) => t.pages).map((t) => (t.pages / t.ms) * 1000).sort((a, b) => a - b);
    const pages = own.reduce((s, t) => s + t.pages, 0);
    const ms = own.reduce((s, t) => s + t.ms, 0);
    console.log(`\nSpeed of text-layer PDFs, ${variant.name}: ${own.length} documents, ${pages} pages in ${(ms / 1000).toFixed(1)} s; median ${pct(rates[Math.floor(rates.length / 2)] ?? 0)} pages/s per document, ${pct((pages / ms) * 1000)} pages/s overall`);
  }
  if (havePdftotext && popplerMs.length) console.log(`pdftotext on the same files: ${(popplerMs.reduce((s, x) => s + x, 0) / 1000).toFixed(1)} s`);
  if (!havePdftotext) console.log("pdftotext is not installed (apt-get install poppler-utils): word-order and speed comparisons with it were skipped");
} finally {
  await (ocrEngine as OcrEngine | null)?.close();
  await detector?.close();
  rmSync(tmp, { recursive: true, force: true });
}
