/**
 * OCR accuracy and speed of every engine Mediabox has, against the `tesseract` command line, in
 * the same run, on a fixed tuning half and held-out half of each set (splits.ts).
 *
 *   bun scripts/bench/ocr.ts [datasets/ocr dir]        (or: npm run bench:ocr)
 *
 * Sets: `uw3/` (English text lines, `*.png` + `*.gt.txt`) and `sroie/` (scanned receipts, `*.jpg`
 * + `*.gt.txt`) from ../shared/datasets/ocr/ (MEDIABOX_OCR_DATASET or the argument overrides),
 * and "scene": storefront words painted on generated photo-like backgrounds (scene-text.ts), as
 * no public photo set with scene text is at hand.
 *
 * Engines: tesseract.js (Mediabox's built-in OcrEngine, as the image pipeline calls it), the
 * tesseract CLI (Debian: apt-get install tesseract-ocr; the bench says so and goes on without it
 * when it is absent), PP-OCR from the model folder (MEDIABOX_PPOCR_DIR, else `<models>/ppocr`;
 * skipped with a line saying so when absent), and "mediabox": what the server reads each kind of
 * input with (ocr-router.ts) on its own.
 *
 * Prints per set and half: CER and WER (edit distance over the truth's length, summed over the
 * set; text case-folded with whitespace collapsed, as SOURCE.md advises for the receipts), mean
 * time per image, and each engine's CER as a ratio of the CLI's. Target (issue 35): PP-OCR's CER
 * on SROIE and UW-III at most 0.8x the CLI's.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { OcrEngine } from "../../src/ocr/ocr.ts";
import { PpOcrEngine } from "../../src/ocr/ppocr/ppocr-engine.ts";
import { HALVES, splitItems, type Half } from "./splits.ts";
import { sceneTextImages } from "./scene-text.ts";
import { renderImage } from "../../src/images/variants.ts";
import { textLikelihoodOf } from "../../src/images/text-gate.ts";
import { photo } from "../../test/support/images.ts";

const root = resolve(import.meta.dir, "..", "..");
const dataset = process.argv[2] ?? process.env.MEDIABOX_OCR_DATASET ?? join(root, "..", "shared", "datasets", "ocr");
const ppocrDir = process.env.MEDIABOX_PPOCR_DIR ?? join(process.env.MEDIABOX_MODELS_DIR ?? join(root, "models"), "ppocr");

const normalize = (text: string) => text.toLowerCase().replace(/\s+/g, " ").trim();

function editDistance<T>(a: ArrayLike<T>, b: ArrayLike<T>): number {
  let previous = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    previous = current;
  }
  return previous[b.length]!;
}

interface Score {
  charErrors: number;
  chars: number;
  wordErrors: number;
  words: number;
  ms: number[];
}

const empty = (): Score => ({ charErrors: 0, chars: 0, wordErrors: 0, words: 0, ms: [] });

function add(score: Score, predicted: string, truth: string, ms: number) {
  const p = normalize(predicted);
  const t = normalize(truth);
  score.charErrors += editDistance(p, t);
  score.chars += t.length;
  const pw = p ? p.split(" ") : [];
  const tw = t ? t.split(" ") : [];
  score.wordErrors += editDistance(pw, tw);
  score.words += tw.length;
  score.ms.push(ms);
}

interface Item {
  id: string;
  image: Buffer;
  truth: string;
  /** A file the CLI can read. */
  path?: string;
}

interface Engine {
  name: string;
  read(item: Item): Promise<string>;
}

async function tesseractCli(item: Item): Promise<string> {
  const child = Bun.spawn(["tesseract", item.path ?? "-", "stdout"], { stdin: item.path ? "ignore" : item.image, stdout: "pipe", stderr: "ignore" });
  const text = await new Response(child.stdout).text();
  await child.exited;
  return text;
}

const engines: Engine[] = [];
const notes: string[] = [];
const tesseractJs = new OcrEngine();
engines.push({ name: "tesseract.js", read: async (item) => (await tesseractJs.recognize(item.image)).text });
const cliVersion = Bun.spawnSync(["tesseract", "--version"], { stdout: "pipe", stderr: "ignore" });
if (cliVersion.exitCode === 0) {
  engines.push({ name: "tesseract CLI", read: tesseractCli });
  notes.push(`tesseract CLI: ${cliVersion.stdout.toString().split("\n")[0]}`);
} else {
  notes.push("tesseract CLI: ABSENT (apt-get install -y tesseract-ocr); no CLI column, no ratios");
}
let ppocr: PpOcrEngine | null = null;
if (existsSync(join(ppocrDir, "det.onnx"))) {
  ppocr = new PpOcrEngine({ folder: ppocrDir });
  engines.push({ name: "PP-OCR", read: async (item) => (await ppocr!.recognize(item.image)).text });
  notes.push(`PP-OCR: ${ppocrDir}`);
} else {
  notes.push(`PP-OCR: ABSENT (no ${join(ppocrDir, "det.onnx")}; set MEDIABOX_PPOCR_DIR or fetch the models)`);
}

function fileSet(dir: string, ext: string): Item[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((f) => f.endsWith(ext))
    .sort()
    .map((f) => {
      const path = join(dir, f);
      return { id: f, image: readFileSync(path), truth: readFileSync(path.slice(0, -ext.length) + ".gt.txt", "utf8"), path };
    });
}

const sets: { name: string; split: string; items: Item[] }[] = [
  { name: "uw3 lines", split: "ocr/uw3", items: fileSet(join(dataset, "uw3"), ".png") },
  { name: "sroie receipts", split: "ocr/sroie", items: fileSet(join(dataset, "sroie"), ".jpg") },
  { name: "scene words", split: "ocr/scene", items: await sceneTextImages() },
].filter((s) => s.items.length);
if (!existsSync(dataset)) notes.push(`no OCR dataset at ${dataset} (pass its directory): only the generated scene set`);

// Each engine's first call starts its workers and loads its models: not part of any image's time.
for (const engine of engines) await engine.read(sets[0]!.items[0]!);

const verbose = process.env.MEDIABOX_OCR_VERBOSE === "1";
const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / Math.max(1, values.length);
const rate = (errors: number, total: number) => errors / Math.max(1, total);
const rows: string[] = [];
for (const set of sets) {
  const halves = splitItems(set.split, set.items, (item) => item.id);
  for (const half of HALVES) {
    const scores = new Map(engines.map((e) => [e.name, empty()]));
    for (const item of halves[half]) {
      const lines = [`${set.name} ${item.id}\n  truth:         ${normalize(item.truth).slice(0, 160)}`];
      for (const engine of engines) {
        const started = performance.now();
        const text = await engine.read(item);
        add(scores.get(engine.name)!, text, item.truth, performance.now() - started);
        lines.push(`  ${engine.name.padEnd(14)} ${normalize(text).slice(0, 160)}`);
      }
      if (verbose) console.log(lines.join("\n"));
    }
    rows.push(row(set.name, half, halves[half].length, scores));
  }
}
await tesseractJs.close();
ppocr?.close();

/**
 * The image pipeline's text gate (images/text-gate.ts) on the same items, decoded as the pipeline
 * decodes them: how many images with text it lets through to OCR (any it stops loses their text)
 * and how many generated photos without text it spares OCR, with its time per image.
 */
async function gatePasses(images: Buffer[]): Promise<{ passed: number; ms: number }> {
  let passed = 0;
  let ms = 0;
  for (const image of images) {
    const { pixels } = await renderImage(image);
    const started = performance.now();
    if ((await textLikelihoodOf(pixels)).lines > 0) passed++;
    ms += performance.now() - started;
  }
  return { passed, ms: ms / Math.max(1, images.length) };
}
const gateRows: string[] = [];
for (const set of sets) {
  const halves = splitItems(set.split, set.items, (item) => item.id);
  for (const half of HALVES) {
    const { passed, ms } = await gatePasses(halves[half].map((item) => item.image));
    gateRows.push(`${set.name.padEnd(15)} ${half.padEnd(8)} text let through ${passed}/${halves[half].length}   ${ms.toFixed(1)} ms`);
  }
}
const photoSizes: [number, number, "jpeg" | "png" | "webp"][] = [[2400, 1600, "jpeg"], [1600, 1200, "jpeg"], [2048, 1536, "webp"], [1200, 900, "png"]];
const photos = await Promise.all(Array.from({ length: 40 }, (_, i) => photo(i, ...photoSizes[i % photoSizes.length]!)));
const photoGate = await gatePasses(photos);
gateRows.push(`${"photos, no text".padEnd(15)} ${"-".padEnd(8)} OCR spared ${photos.length - photoGate.passed}/${photos.length}   ${photoGate.ms.toFixed(1)} ms`);

function row(set: string, half: Half, n: number, scores: Map<string, Score>): string {
  const cli = scores.get("tesseract CLI");
  const cells = [...scores].map(([name, s]) => {
    const cer = rate(s.charErrors, s.chars);
    const ratio = cli && name !== "tesseract CLI" ? ` (${(cer / Math.max(1e-9, rate(cli.charErrors, cli.chars))).toFixed(2)}x)` : "";
    return `${name} CER ${cer.toFixed(3)}${ratio} WER ${rate(s.wordErrors, s.words).toFixed(3)} ${mean(s.ms).toFixed(0)} ms`;
  });
  return `${set.padEnd(15)} ${half.padEnd(8)} n=${String(n).padStart(2)}  ${cells.join(" | ")}`;
}

console.log(`OCR benchmark on ${dataset}`);
for (const note of notes) console.log(`  ${note}`);
for (const line of rows) console.log(line);
console.log("\ntext gate before OCR in the image pipeline (images/text-gate.ts):");
for (const line of gateRows) console.log(`  ${line}`);
