/**
 * OCR accuracy and speed against the `tesseract` command line, in the same run.
 *
 *   bun scripts/bench/ocr.ts [datasets/ocr dir]        (or: npm run bench:ocr)
 *
 * Reads the development sets in ../shared/datasets/ocr/ (MEDIABOX_OCR_DATASET or the argument
 * overrides): `uw3/` (English text lines, `*.png` + `*.gt.txt`) and `sroie/` (scanned receipts,
 * `*.jpg` + `*.gt.txt`). Each image goes through Mediabox's OcrEngine (as the image pipeline
 * calls it) and through `tesseract IMAGE stdout` (Debian: apt-get install tesseract-ocr).
 * Prints per set: CER and WER (edit distance over the truth's length, summed over the set;
 * text case-folded with whitespace collapsed, as SOURCE.md advises for the receipts), and the
 * mean time per image with Mediabox's as a ratio of the CLI's. Targets: CER and WER at or below
 * the CLI's on both sets, time <= 1.5x.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { OcrEngine } from "../../src/ocr/ocr.ts";

const dataset = process.argv[2] ?? process.env.MEDIABOX_OCR_DATASET ?? join(import.meta.dir, "..", "..", "..", "shared", "datasets", "ocr");
if (!existsSync(dataset)) {
  console.error(`no OCR dataset at ${dataset}; pass its directory`);
  process.exit(2);
}
if (Bun.spawnSync(["tesseract", "--version"], { stdout: "ignore", stderr: "ignore" }).exitCode !== 0) {
  console.error("the tesseract CLI is missing: apt-get install -y tesseract-ocr");
  process.exit(2);
}

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

async function tesseractCli(path: string): Promise<string> {
  const child = Bun.spawn(["tesseract", path, "stdout"], { stdout: "pipe", stderr: "ignore" });
  const text = await new Response(child.stdout).text();
  await child.exited;
  return text;
}

const engine = new OcrEngine();
// The first call starts the worker and loads the model: not part of any image's time.
await engine.recognize(readFileSync(join(dataset, "uw3", readdirSync(join(dataset, "uw3")).find((f) => f.endsWith(".png"))!)));

const sets = [
  { name: "uw3 lines", dir: "uw3", ext: ".png" },
  { name: "sroie receipts", dir: "sroie", ext: ".jpg" },
];
const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / Math.max(1, values.length);
const pct = (errors: number, total: number) => (errors / Math.max(1, total)).toFixed(3);
const rows: string[] = [];
const verbose = process.env.MEDIABOX_OCR_VERBOSE === "1";
for (const set of sets) {
  const dir = join(dataset, set.dir);
  if (!existsSync(dir)) continue;
  const images = readdirSync(dir).filter((f) => f.endsWith(set.ext)).sort();
  const mediabox = empty();
  const cli = empty();
  for (const image of images) {
    const path = join(dir, image);
    const truth = readFileSync(path.slice(0, -set.ext.length) + ".gt.txt", "utf8");
    let started = performance.now();
    const ours = (await engine.recognize(readFileSync(path))).text;
    add(mediabox, ours, truth, performance.now() - started);
    started = performance.now();
    const theirs = await tesseractCli(path);
    add(cli, theirs, truth, performance.now() - started);
    if (verbose) console.log(`${image}\n  truth:    ${normalize(truth).slice(0, 160)}\n  mediabox: ${normalize(ours).slice(0, 160)}\n  cli:      ${normalize(theirs).slice(0, 160)}`);
  }
  rows.push(
    `${set.name.padEnd(16)} n=${String(images.length).padStart(3)}  ` +
      `mediabox CER ${pct(mediabox.charErrors, mediabox.chars)} WER ${pct(mediabox.wordErrors, mediabox.words)} ${mean(mediabox.ms).toFixed(0).padStart(5)} ms/image   ` +
      `tesseract CLI CER ${pct(cli.charErrors, cli.chars)} WER ${pct(cli.wordErrors, cli.words)} ${mean(cli.ms).toFixed(0).padStart(5)} ms/image   ` +
      `time ratio ${(mean(mediabox.ms) / mean(cli.ms)).toFixed(2)}x`,
  );
}
await engine.close();
const version = Bun.spawnSync(["tesseract", "--version"]).stdout.toString().split("\n")[0];
console.log(`OCR benchmark on ${dataset} (${engine.modelDescription} vs ${version})`);
for (const row of rows) console.log(row);
