/**
 * Machine-made document descriptions without a language model: an extractive summary (the
 * document's most central sentences, in their original order) and keyphrases (RAKE: runs of
 * content words between stop words and punctuation, scored by how connected their words are).
 * Plain functions over the extracted text. They run where the text is read (the document reader's
 * thread or process: tens of milliseconds for a long document); the document pipeline decides
 * where to store them (upload_description, suggested tags), labelled as machine-made.
 */
import { STOP_WORDS, words } from "./stop-words.ts";
import isoStopWords from "stopwords-iso/stopwords-iso.json" with { type: "json" };

export interface SummaryOptions {
  /** Most sentences kept (default 3). */
  maxSentences?: number;
  /** Longest summary in characters (default 600); sentences that would pass it are skipped. */
  maxChars?: number;
}

/** Only this much of a long document is read: summaries of the first ~40 pages are representative enough and stay cheap. */
const READ_CHARS = 100_000;
const MIN_SENTENCE_WORDS = 5;
const MAX_SENTENCE_CHARS = 400;

/**
 * Sentences of `text`: split after . ! ? and whitespace (abbreviations like "e.g." cut a sentence
 * short now and then, which only costs that sentence its chance), at blank lines, and around
 * short lines without end punctuation (headings, list labels).
 */
export function sentences(text: string): string[] {
  const out: string[] = [];
  for (const block of text.slice(0, READ_CHARS).split(/\n\s*\n/)) {
    let paragraph = "";
    for (const line of block.split("\n")) {
      const trimmed = line.trim();
      if (trimmed.length < 60 && !/[.!?:;,]$/.test(trimmed)) {
        out.push(paragraph, trimmed);
        paragraph = "";
      } else paragraph += ` ${trimmed}`;
    }
    out.push(paragraph);
  }
  return out
    .flatMap((p) => p.split(/(?<=[.!?])\s+(?=\S)/u))
    .map((s) => s.replace(/\s+/g, " ").replace(/\s+([.!?,;:])/g, "$1").trim())
    .filter(Boolean);
}

/**
 * A sentence a person wrote as prose, fit to describe the document: it ends as a sentence ends,
 * starts with a letter, digit or quote, is mostly letters, and is no table row (a pipe between
 * cells, or the cells of a row run together: mostly numbers). A table row or a list of labels
 * made the description of invoices and data sheets before.
 */
export function isProse(sentence: string): boolean {
  if (sentence.includes("|") || /\t/.test(sentence)) return false;
  if (!/[.!?]["'”’)\]]?$/u.test(sentence) || !/^["'“‘(]?[\p{L}\p{N}]/u.test(sentence)) return false;
  const visible = sentence.replace(/\s+/g, "");
  const letters = (visible.match(/\p{L}/gu) ?? []).length;
  if (letters < visible.length * 0.7) return false;
  const tokens = sentence.split(/\s+/);
  return tokens.filter((t) => /\d/.test(t)).length <= tokens.length * 0.3;
}

const contentWords = (text: string) => words(text).filter((w) => w.length > 2 && !STOP_WORDS.has(w) && !/^\d+$/.test(w));

/**
 * The most central sentences: each sentence's bag of content words is compared (cosine) with
 * the whole document's, so sentences about what the document is mostly about win; ties go to the
 * earlier sentence. Null when the text has no sentence of at least five words.
 */
export function extractiveSummary(text: string, options: SummaryOptions = {}): string | null {
  const maxSentences = options.maxSentences ?? 3;
  const maxChars = options.maxChars ?? 600;
  const all = sentences(text).filter((s) => s.length <= MAX_SENTENCE_CHARS && contentWords(s).length >= MIN_SENTENCE_WORDS - 2 && words(s).length >= MIN_SENTENCE_WORDS && isProse(s));
  if (!all.length) return null;
  const documentCounts = new Map<string, number>();
  const bags = all.map((s) => {
    const bag = new Map<string, number>();
    for (const w of contentWords(s)) bag.set(w, (bag.get(w) ?? 0) + 1);
    for (const [w, n] of bag) documentCounts.set(w, (documentCounts.get(w) ?? 0) + n);
    return bag;
  });
  let documentNorm = 0;
  for (const n of documentCounts.values()) documentNorm += n * n;
  documentNorm = Math.sqrt(documentNorm);
  const scored = bags.map((bag, index) => {
    let dot = 0;
    let norm = 0;
    for (const [w, n] of bag) {
      dot += n * (documentCounts.get(w) ?? 0);
      norm += n * n;
    }
    return { index, score: norm ? dot / (Math.sqrt(norm) * documentNorm) : 0 };
  });
  scored.sort((a, b) => b.score - a.score || a.index - b.index);
  const chosen: number[] = [];
  let length = 0;
  for (const { index } of scored) {
    if (chosen.length >= maxSentences) break;
    const sentence = all[index]!;
    if (length + sentence.length + 1 > maxChars) continue;
    chosen.push(index);
    length += sentence.length + 1;
  }
  // A sentence cut short is no description: none that fits means none.
  if (!chosen.length) return null;
  return chosen
    .sort((a, b) => a - b)
    .map((i) => all[i]!)
    .join(" ");
}

export interface KeyphraseOptions {
  /** Most phrases returned (default 8). */
  max?: number;
  /** Longest phrase in characters (default 50, the longest tag). */
  maxChars?: number;
}

/**
 * Words that end a candidate phrase: the search's function words and the stopwords-iso English
 * list (1,298 words, also "using", "almost", "least", "one"). With the search's list alone, phrases
 * ran across such words ("practical interest wherein", "two streams takes", "least one"):
 * bench:keyphrases precision 7.7 / 8.2 % -> 10.2 / 11.0 % (tuning / held-out).
 */
const PHRASE_BREAKS: ReadonlySet<string> = new Set([...STOP_WORDS, ...isoStopWords.en]);

/**
 * RAKE keyphrases: candidate phrases are runs of up to three content words; a word scores its
 * degree (how many words it co-occurs with in candidates) over its frequency, a phrase the sum
 * of its words' scores, and a phrase seen once counts only if its document is short. Lower case,
 * best first, without duplicates or phrases contained in a better one.
 */
export function keyphrases(text: string, options: KeyphraseOptions = {}): string[] {
  const max = options.max ?? 8;
  const maxChars = options.maxChars ?? 50;
  const source = text.slice(0, READ_CHARS);
  const candidates: string[][] = [];
  for (const fragment of source.split(/[.,;:!?()\[\]{}"“”\n\r\t|/\\]+/u)) {
    let run: string[] = [];
    for (const w of words(fragment)) {
      if (PHRASE_BREAKS.has(w) || w.length < 3 || /^\d+$/.test(w)) {
        if (run.length) candidates.push(run);
        run = [];
      } else {
        run.push(w);
        if (run.length === 3) {
          candidates.push(run);
          run = [];
        }
      }
    }
    if (run.length) candidates.push(run);
  }
  const frequency = new Map<string, number>();
  const degree = new Map<string, number>();
  for (const phrase of candidates) {
    for (const w of phrase) {
      frequency.set(w, (frequency.get(w) ?? 0) + 1);
      degree.set(w, (degree.get(w) ?? 0) + phrase.length);
    }
  }
  const seen = new Map<string, { score: number; count: number }>();
  for (const phrase of candidates) {
    const key = phrase.join(" ");
    if (key.length > maxChars) continue;
    const entry = seen.get(key) ?? { score: phrase.reduce((s, w) => s + degree.get(w)! / frequency.get(w)!, 0), count: 0 };
    entry.count += 1;
    seen.set(key, entry);
  }
  const long = candidates.length > 200;
  const ranked = [...seen.entries()]
    .filter(([, e]) => !long || e.count > 1)
    .sort((a, b) => b[1].score * Math.log2(1 + b[1].count) - a[1].score * Math.log2(1 + a[1].count) || a[0].localeCompare(b[0]));
  const out: string[] = [];
  for (const [phrase] of ranked) {
    if (out.length >= max) break;
    if (out.some((p) => p.includes(phrase) || phrase.includes(p))) continue;
    out.push(phrase);
  }
  return out;
}

/** A document's machine-made summary (null when no sentence qualifies) and suggested tags. */
export interface Summary {
  text: string | null;
  keyphrases: string[];
}

/** A summary, or why it could not be drafted. */
export type SummaryDraft = Summary | { error: string };

/**
 * The summary and up to five keyphrases of `text` (null when it has none); a failure is returned,
 * not thrown (it costs only the summary).
 */
export function draftSummary(text: string): SummaryDraft | null {
  if (!text.trim()) return null;
  try {
    return { text: extractiveSummary(text), keyphrases: keyphrases(text, { max: 5 }) };
  } catch (err) {
    return { error: `the summary could not be drafted: ${err instanceof Error ? err.message : String(err)}` };
  }
}
