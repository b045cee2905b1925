/**
 * How often a document's suggested tags (RAKE keyphrases, src/text/summary.ts) name what the
 * document is about, on the Cranfield collection's 1,400 abstracts, with each document's title as
 * its label: a phrase counts as right when every one of its words (stemmed) is in the title. The
 * abstract is read without its title (Cranfield's text repeats it first). Titles name a topic in
 * a dozen words, so a good phrase absent from the title counts as wrong: the figures are a lower
 * bound, fit to compare ways of choosing, not an absolute quality. Prints per half (tuning,
 * held-out) the precision of the tags each way of choosing would apply, and how many it applies.
 *
 *   bun scripts/bench/keyphrases.ts            (or: npm run bench:keyphrases)
 *
 * The bar for applying a suggestion as a tag without asking: 80 % precision on both halves (four
 * in five right by this strict label).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { keyphrases } from "../../src/text/summary.ts";
import { STOP_WORDS, words } from "../../src/text/stop-words.ts";
import { HALVES, splitItems } from "./splits.ts";

const BAR = 0.8;
/** As bench:retrieval finds it: MEDIABOX_BENCH_CRANFIELD, or ../shared/datasets beside the checkout. */
const CORPUS = join(process.env.MEDIABOX_BENCH_CRANFIELD ?? join(import.meta.dir, "..", "..", "..", "shared", "datasets", "retrieval", "cranfield"), "corpus.jsonl");

type Doc = { id: string; title: string; body: string };

/** A crude English stem (plural and -ing/-ed endings): "slipstreams" and "slipstream" match. */
function stem(word: string): string {
  if (word.length > 4 && word.endsWith("ies")) return `${word.slice(0, -3)}y`;
  if (word.length > 5 && word.endsWith("ing")) return word.slice(0, -3);
  if (word.length > 4 && word.endsWith("ed")) return word.slice(0, -2);
  if (word.length > 3 && word.endsWith("es") && /(ss|sh|ch|x|z)es$/.test(word)) return word.slice(0, -2);
  if (word.length > 3 && word.endsWith("s") && !word.endsWith("ss")) return word.slice(0, -1);
  return word;
}

function load(): Doc[] {
  return readFileSync(CORPUS, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line) as { id: string; title: string; text: string })
    .map((d) => {
      const title = d.title.replace(/\s*\.\s*$/, "").trim();
      const body = d.text.startsWith(d.title) ? d.text.slice(d.title.length).trim() : d.text;
      return { id: d.id, title, body };
    })
    .filter((d) => d.title && d.body.length >= 200);
}

type Way = { name: string; choose: (phrases: string[], body: string) => string[] };

const occurrences = (phrase: string, body: string) => {
  const text = ` ${words(body).join(" ")} `;
  return text.split(` ${phrase} `).length - 1;
};

const WAYS: Way[] = [
  { name: "the five suggested (shipped)", choose: (p) => p },
  { name: "the best three", choose: (p) => p.slice(0, 3) },
  { name: "the best one", choose: (p) => p.slice(0, 1) },
  { name: "of the five, those of 2-3 words", choose: (p) => p.filter((x) => x.includes(" ")) },
  { name: "of the five, those said 2+ times", choose: (p, body) => p.filter((x) => occurrences(x, body) >= 2) },
  { name: "the best one, if said 2+ times", choose: (p, body) => p.slice(0, 1).filter((x) => occurrences(x, body) >= 2) },
];

function main(): void {
  const docs = load();
  const split = splitItems("cranfield-keyphrases", docs, (d) => d.id);
  console.log(`Cranfield abstracts with their titles as labels: ${docs.length} documents (tuning ${split.tuning.length}, held-out ${split["held-out"].length})`);
  console.log(`a tag is right when all its words are in the title (stemmed); bar for applying without asking: ${BAR * 100} % on both halves\n`);
  const suggested = new Map(docs.map((d) => [d.id, keyphrases(d.body, { max: 5 })]));
  const titleStems = new Map(docs.map((d) => [d.id, new Set(words(d.title).filter((w) => !STOP_WORDS.has(w)).map(stem))]));
  const right = (doc: Doc, phrase: string) => words(phrase).every((w) => titleStems.get(doc.id)!.has(stem(w)));
  console.log(`${"way of choosing".padEnd(38)} ${HALVES.map((h) => `${h}: precision, tags/doc, docs with one`.padEnd(44)).join(" ")}`);
  const verdicts: string[] = [];
  for (const way of WAYS) {
    const cells = HALVES.map((half) => {
      let applied = 0;
      let correct = 0;
      let covered = 0;
      for (const doc of split[half]) {
        const chosen = way.choose(suggested.get(doc.id)!, doc.body);
        applied += chosen.length;
        correct += chosen.filter((p) => right(doc, p)).length;
        if (chosen.length) covered++;
      }
      return { precision: applied ? correct / applied : 0, perDoc: applied / split[half].length, covered: covered / split[half].length };
    });
    console.log(
      `${way.name.padEnd(38)} ${cells.map((c) => `${(c.precision * 100).toFixed(1).padStart(5)} %, ${c.perDoc.toFixed(2)}, ${(c.covered * 100).toFixed(0).padStart(3)} %`.padEnd(44)).join(" ")}`,
    );
    if (cells.every((c) => c.precision >= BAR)) verdicts.push(way.name);
  }
  console.log(`\nmeets the bar on both halves: ${verdicts.length ? verdicts.join("; ") : "none"}`);
  const sample = split.tuning.slice(0, 5);
  console.log("\nexamples (tuning): title | suggested, right ones marked *");
  for (const doc of sample) console.log(`  ${doc.title} | ${suggested.get(doc.id)!.map((p) => (right(doc, p) ? `*${p}` : p)).join(", ")}`);
}

main();
