/**
 * Auto matching (rules' predicted_tags / predicted_folder_id): precision and recall of the
 * tags the learned classifier assigns, against the labels people gave.
 *
 *   bun scripts/bench/auto-match.ts          (or: npm run bench:auto-match)
 *
 * Data: Reuters-21578 (ModApte) as Weka's examples carry it in Debian's `weka` package
 * (ReutersCorn-*.arff and ReutersGrain-*.arff: the same 2,158 news stories, labelled "corn" and
 * "grain"; 69 and 160 of them). Looked for in MEDIABOX_BENCH_REUTERS_DIR, then
 * /usr/share/doc/weka/examples, then a cache the bench fills with `apt-get download weka`.
 * The stories are split into a tuning and a held-out half (splits.ts). Within a half, 5-fold
 * cross-validation plays a library: the classifier learns from the stories of four folds (the
 * files a user already tagged) and tags those of the fifth (new files); every story is tagged
 * once. Printed per half: micro precision / recall / F1 over both tags, per tag, against the rule
 * a user would otherwise write (text contains "corn" / "grain") in the same run; the threshold
 * and training settings were chosen on the tuning half only (MEDIABOX_BENCH_GRID=1 prints the
 * grid they were chosen from).
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, readdirSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { DEFAULT_MIN_EXAMPLES, DEFAULT_TRAINING, scoreText, termIndex, trainClassifier, type LabelledText, type TrainingOptions } from "../../src/rules/text-classifier.ts";
import { DEFAULT_AUTO_MATCH_THRESHOLD } from "../../src/rules/auto-match-settings.ts";
import { HALVES, splitItems } from "./splits.ts";

const LABELS = ["corn", "grain"] as const;

function reutersDir(): string {
  const candidates = [process.env.MEDIABOX_BENCH_REUTERS_DIR, "/usr/share/doc/weka/examples", join(homedir(), ".cache/mediabox-bench/weka/usr/share/doc/weka/examples")].filter(Boolean) as string[];
  const found = candidates.find((d) => existsSync(join(d, "ReutersGrain-train.arff")));
  if (found) return found;
  const cache = join(homedir(), ".cache/mediabox-bench/weka");
  mkdirSync(cache, { recursive: true });
  console.log("fetching Debian's weka package for its Reuters examples (apt-get download weka)");
  execFileSync("apt-get", ["download", "weka"], { cwd: cache, stdio: "inherit" });
  const deb = readdirSync(cache).find((f) => f.startsWith("weka_") && f.endsWith(".deb"));
  if (!deb) throw new Error("apt-get download weka gave no package");
  execFileSync("dpkg", ["-x", deb, "."], { cwd: cache });
  return join(cache, "usr/share/doc/weka/examples");
}

/** The rows of a Weka ARFF file with one quoted string attribute and a 0/1 class. */
function readArff(path: string): { text: string; positive: boolean }[] {
  const data = readFileSync(path, "latin1").split("@data")[1]!;
  const rows: { text: string; positive: boolean }[] = [];
  const row = /'((?:[^'\\]|\\.)*)',([01])/g;
  for (let m = row.exec(data); m; m = row.exec(data)) {
    rows.push({ text: m[1]!.replace(/\\(.)/g, (_, c: string) => (c === "n" ? "\n" : c === "t" ? "\t" : c)), positive: m[2] === "1" });
  }
  return rows;
}

interface Story {
  id: string;
  text: string;
  labels: string[];
}

function stories(): Story[] {
  const dir = reutersDir();
  const out: Story[] = [];
  for (const part of ["train", "test"]) {
    const corn = readArff(join(dir, `ReutersCorn-${part}.arff`));
    const grain = readArff(join(dir, `ReutersGrain-${part}.arff`));
    if (corn.length !== grain.length) throw new Error(`ReutersCorn-${part} and ReutersGrain-${part} differ in length`);
    corn.forEach((c, i) => {
      if (c.text !== grain[i]!.text) throw new Error(`story ${part}-${i} differs between the two files`);
      out.push({ id: `${part}-${i}`, text: c.text, labels: [...(c.positive ? ["corn"] : []), ...(grain[i]!.positive ? ["grain"] : [])] });
    });
  }
  return out;
}

interface Counts {
  tp: number;
  fp: number;
  fn: number;
}

const empty = (): Record<string, Counts> => Object.fromEntries(LABELS.map((l) => [l, { tp: 0, fp: 0, fn: 0 }]));

function add(counts: Record<string, Counts>, truth: string[], predicted: string[]): void {
  for (const l of LABELS) {
    const t = truth.includes(l);
    const p = predicted.includes(l);
    if (t && p) counts[l]!.tp++;
    else if (p) counts[l]!.fp++;
    else if (t) counts[l]!.fn++;
  }
}

function scores(c: Counts): { p: number; r: number; f1: number } {
  const p = c.tp + c.fp ? c.tp / (c.tp + c.fp) : 0;
  const r = c.tp + c.fn ? c.tp / (c.tp + c.fn) : 0;
  return { p, r, f1: p + r ? (2 * p * r) / (p + r) : 0 };
}

function micro(counts: Record<string, Counts>): Counts {
  return Object.values(counts).reduce((a, c) => ({ tp: a.tp + c.tp, fp: a.fp + c.fp, fn: a.fn + c.fn }), { tp: 0, fp: 0, fn: 0 });
}

const FOLDS = 5;

/** Every story's probabilities, from a classifier trained on the other folds of its half. */
async function crossValidated(half: Story[], training: TrainingOptions, minExamples: number): Promise<Map<string, number>[]> {
  const out: Map<string, number>[] = new Array(half.length);
  for (let fold = 0; fold < FOLDS; fold++) {
    const train: LabelledText[] = half.filter((_, i) => i % FOLDS !== fold).map((s) => ({ text: s.text, labels: s.labels }));
    const classifier = await trainClassifier(train, { training, minExamples });
    const index = termIndex(classifier.vocabulary);
    half.forEach((s, i) => {
      if (i % FOLDS === fold) out[i] = scoreText(classifier, s.text, index);
    });
  }
  return out;
}

function evaluate(half: Story[], probabilities: Map<string, number>[], threshold: number): Record<string, Counts> {
  const counts = empty();
  half.forEach((s, i) => add(counts, s.labels, LABELS.filter((l) => (probabilities[i]!.get(l) ?? 0) >= threshold)));
  return counts;
}

function keywordRule(half: Story[]): Record<string, Counts> {
  const counts = empty();
  for (const s of half) add(counts, s.labels, LABELS.filter((l) => s.text.toLowerCase().includes(l)));
  return counts;
}

const f = (n: number) => n.toFixed(3);
const line = (name: string, c: Counts) => {
  const s = scores(c);
  return `${name.padEnd(30)} P ${f(s.p)}  R ${f(s.r)}  F1 ${f(s.f1)}  (tp ${c.tp}, fp ${c.fp}, fn ${c.fn})`;
};

async function main(): Promise<void> {
  const all = stories();
  const halves = splitItems("reuters-21578-corn-grain", all, (s) => s.id);
  console.log(`Reuters-21578 corn/grain: ${all.length} stories (corn ${all.filter((s) => s.labels.includes("corn")).length}, grain ${all.filter((s) => s.labels.includes("grain")).length}); ${FOLDS}-fold cross-validation within each half\n`);

  // The grid the defaults were chosen from, on the tuning half only.
  if (process.env.MEDIABOX_BENCH_GRID === "1") {
    const tuning = halves.tuning;
    for (const l2 of [1e-4, 1e-3, 3e-3, 1e-2, 3e-2, 1e-1]) {
      for (const maxPositiveWeight of [1, 3, 5, 10, 20]) {
        const training = { ...DEFAULT_TRAINING, l2, maxPositiveWeight };
        const probabilities = await crossValidated(tuning, training, DEFAULT_MIN_EXAMPLES);
        for (const threshold of [0.2, 0.25, 0.3, 0.35, 0.4, 0.5, 0.6]) {
          console.log(line(`l2 ${l2} w+ ${maxPositiveWeight} t ${threshold}`, micro(evaluate(tuning, probabilities, threshold))));
        }
      }
    }
    console.log("");
  }

  const summary: string[] = [];
  for (const name of HALVES) {
    const half = halves[name];
    const started = performance.now();
    const probabilities = await crossValidated(half, DEFAULT_TRAINING, DEFAULT_MIN_EXAMPLES);
    const ms = (performance.now() - started) / FOLDS;
    const learned = evaluate(half, probabilities, DEFAULT_AUTO_MATCH_THRESHOLD);
    const rule = keywordRule(half);
    console.log(`${name}: ${half.length} stories, training ${Math.round(ms)} ms per fold (${Math.round((half.length * (FOLDS - 1)) / FOLDS)} stories)`);
    console.log(line(`  learned (threshold ${DEFAULT_AUTO_MATCH_THRESHOLD})`, micro(learned)));
    for (const l of LABELS) console.log(line(`    ${l}`, learned[l]!));
    console.log(line('  rule: text contains "<tag>"', micro(rule)));
    for (const l of LABELS) console.log(line(`    ${l}`, rule[l]!));
    for (const threshold of [0.3, 0.5, 0.7, 0.9]) console.log(line(`  learned at threshold ${threshold}`, micro(evaluate(half, probabilities, threshold))));
    console.log("");
    const s = scores(micro(learned));
    const r = scores(micro(rule));
    summary.push(`${name} P ${f(s.p)} R ${f(s.r)} F1 ${f(s.f1)} (rule F1 ${f(r.f1)})`);
  }
  console.log(`auto-match: ${summary.join("; ")}`);
}

await main();
