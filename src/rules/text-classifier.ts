/**
 * The model behind "auto" matching: TF-IDF features of a file's text and one L2-regularized
 * logistic regression per label (a tag, a folder), trained on the files that already carry the
 * label against those that do not. Pure functions over strings and arrays, no I/O: auto-match.ts
 * feeds it a library, scripts/bench/auto-match.ts a labelled corpus.
 *
 * Why this model: it learns from a handful of examples, trains in well under a second on a few
 * thousand documents, gives a probability a user can set a threshold on, and needs no model
 * files (the text embedding model is optional on an appliance; words are always there). The
 * settings below were chosen on the tuning half of Reuters-21578 (docs/benchmarks.md).
 */
import { STOP_WORDS, words } from "../text/stop-words.ts";

/** Characters of a text read for features: the start of a long document says what it is. */
export const MAX_FEATURE_CHARS = 100_000;
/** Terms kept: the most frequent across the training files (each in at least MIN_DF of them). */
const MAX_VOCABULARY = 30_000;
const MIN_DF = 2;

export interface TrainingOptions {
  /** L2 penalty per example; larger keeps weights small (fewer, surer matches). */
  l2: number;
  epochs: number;
  /** Weight of a positive example relative to a negative one, at most: (negatives / positives) capped here. */
  maxPositiveWeight: number;
}

export const DEFAULT_TRAINING: TrainingOptions = { l2: 0.01, epochs: 12, maxPositiveWeight: 5 };

/** A sparse vector: ascending term indexes and their values. */
export interface SparseVector {
  indexes: Uint32Array;
  values: Float32Array;
}

export interface Vocabulary {
  terms: string[];
  /** Inverse document frequency per term, as the training files gave it. */
  idf: Float32Array;
}

export interface LabelModel {
  label: string;
  /** Files that carried the label when it was trained. */
  positives: number;
  weights: Float32Array;
  bias: number;
}

/** The terms of a text: lower-case words of two or more characters, neither stop words nor bare numbers. */
export function terms(text: string): string[] {
  return words(text.slice(0, MAX_FEATURE_CHARS)).filter((w) => w.length > 1 && !STOP_WORDS.has(w) && !/^\d+$/.test(w));
}

function counts(tokens: string[]): Map<string, number> {
  const out = new Map<string, number>();
  for (const t of tokens) out.set(t, (out.get(t) ?? 0) + 1);
  return out;
}

/** The vocabulary of a set of texts (already split into terms). */
export function buildVocabulary(documents: string[][]): Vocabulary {
  const df = new Map<string, number>();
  for (const doc of documents) for (const t of new Set(doc)) df.set(t, (df.get(t) ?? 0) + 1);
  const kept = [...df].filter(([, n]) => n >= MIN_DF).sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).slice(0, MAX_VOCABULARY);
  kept.sort((a, b) => (a[0] < b[0] ? -1 : 1));
  const n = documents.length;
  return { terms: kept.map(([t]) => t), idf: Float32Array.from(kept, ([, d]) => Math.log((1 + n) / (1 + d)) + 1) };
}

/** Term index lookup for a vocabulary (built once per model). */
export function termIndex(vocabulary: Vocabulary): Map<string, number> {
  return new Map(vocabulary.terms.map((t, i) => [t, i]));
}

/** Sublinear TF-IDF of a document's terms, L2-normalized; terms outside the vocabulary are dropped. */
export function vectorize(tokens: string[], vocabulary: Vocabulary, index: Map<string, number>): SparseVector {
  const entries: [number, number][] = [];
  for (const [term, tf] of counts(tokens)) {
    const i = index.get(term);
    if (i !== undefined) entries.push([i, (1 + Math.log(tf)) * vocabulary.idf[i]!]);
  }
  entries.sort((a, b) => a[0] - b[0]);
  const norm = Math.sqrt(entries.reduce((s, [, v]) => s + v * v, 0)) || 1;
  return { indexes: Uint32Array.from(entries, ([i]) => i), values: Float32Array.from(entries, ([, v]) => v / norm) };
}

function dot(weights: Float32Array, x: SparseVector): number {
  let s = 0;
  for (let k = 0; k < x.indexes.length; k++) s += weights[x.indexes[k]!]! * x.values[k]!;
  return s;
}

const sigmoid = (z: number) => 1 / (1 + Math.exp(-z));

/** A small deterministic generator, so a model trained twice on the same files is the same model. */
function shuffler(seed: number): (n: number) => Uint32Array {
  let state = seed >>> 0 || 1;
  const next = () => ((state ^= state << 13), (state ^= state >>> 17), (state ^= state << 5), (state >>> 0) / 4294967296);
  return (n) => {
    const order = Uint32Array.from({ length: n }, (_, i) => i);
    for (let i = n - 1; i > 0; i--) {
      const j = Math.floor(next() * (i + 1));
      [order[i], order[j]] = [order[j]!, order[i]!];
    }
    return order;
  };
}

/**
 * Trains one label: logistic loss with AdaGrad steps over shuffled examples and an L2 penalty,
 * positives weighted up to balance a rare label (a tag on 3% of the files is still learned).
 */
export function trainLabel(label: string, examples: SparseVector[], positive: boolean[], dimension: number, options: TrainingOptions = DEFAULT_TRAINING): LabelModel {
  const positives = positive.filter(Boolean).length;
  const negatives = examples.length - positives;
  const positiveWeight = positives ? Math.min(options.maxPositiveWeight, Math.max(1, negatives / positives)) : 1;
  const weights = new Float32Array(dimension);
  const squares = new Float32Array(dimension).fill(1e-8);
  let bias = 0;
  let biasSquares = 1e-8;
  const rate = 0.5;
  const order = shuffler(examples.length * 31 + label.length);
  for (let epoch = 0; epoch < options.epochs; epoch++) {
    for (const i of order(examples.length)) {
      const x = examples[i]!;
      const y = positive[i] ? 1 : 0;
      const weight = y ? positiveWeight : 1;
      const g = (sigmoid(dot(weights, x) + bias) - y) * weight;
      for (let k = 0; k < x.indexes.length; k++) {
        const j = x.indexes[k]!;
        const grad = g * x.values[k]! + options.l2 * weights[j]!;
        squares[j]! += grad * grad;
        weights[j]! -= (rate * grad) / Math.sqrt(squares[j]!);
      }
      biasSquares += g * g;
      bias -= (rate * g) / Math.sqrt(biasSquares);
    }
  }
  return { label, positives, weights, bias };
}

/** The probability that a document carries the label. */
export function probability(model: LabelModel, x: SparseVector): number {
  return sigmoid(dot(model.weights, x) + model.bias);
}

export interface Classifier {
  vocabulary: Vocabulary;
  labels: LabelModel[];
}

export interface LabelledText {
  text: string;
  /** The labels the text carries (a file's tags, or its folder). */
  labels: string[];
}

/** Labels learned from fewer carrying texts than this are not learned at all. */
export const DEFAULT_MIN_EXAMPLES = 5;

/**
 * Trains a classifier for every label carried by at least `minExamples` texts (the others are
 * left out: a label seen twice says nothing reliable). Yields to the event loop between labels
 * through `pause`, so a server training a large library keeps answering.
 */
export async function trainClassifier(
  texts: LabelledText[],
  options: { minExamples?: number; training?: TrainingOptions; only?: (label: string) => boolean; pause?: () => Promise<void> } = {},
): Promise<Classifier> {
  const minExamples = options.minExamples ?? DEFAULT_MIN_EXAMPLES;
  const tokens: string[][] = [];
  for (const t of texts) {
    tokens.push(terms(t.text));
    // Reading 100,000 characters of each of thousands of files is seconds of work: let requests through.
    if (tokens.length % 100 === 0) await options.pause?.();
  }
  const vocabulary = buildVocabulary(tokens);
  const index = termIndex(vocabulary);
  const vectors = tokens.map((t) => vectorize(t, vocabulary, index));
  const carried = new Map<string, number>();
  for (const t of texts) for (const l of new Set(t.labels)) carried.set(l, (carried.get(l) ?? 0) + 1);
  const labels: LabelModel[] = [];
  for (const [label, n] of [...carried].sort((a, b) => (a[0] < b[0] ? -1 : 1))) {
    if (n < minExamples || n === texts.length || (options.only && !options.only(label))) continue;
    labels.push(trainLabel(label, vectors, texts.map((t) => t.labels.includes(label)), vocabulary.terms.length, options.training));
    await options.pause?.();
  }
  return { vocabulary, labels };
}

/** Each learned label's probability for a text. */
export function scoreText(classifier: Classifier, text: string, index = termIndex(classifier.vocabulary)): Map<string, number> {
  const x = vectorize(terms(text), classifier.vocabulary, index);
  return new Map(classifier.labels.map((m) => [m.label, probability(m, x)]));
}
