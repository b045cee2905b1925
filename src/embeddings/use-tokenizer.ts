/**
 * The word-piece tokenizer of Universal Sentence Encoder lite: a SentencePiece unigram vocabulary
 * (vocab.json: [piece, log-probability] pairs, the first six reserved) cut by Viterbi, the most
 * probable segmentation of the text into pieces. Ported from the Apache-2.0 tokenizer of
 * @tensorflow-models/universal-sentence-encoder (and @energetic-ai/embeddings), so ids match
 * what the model was trained on; that package is not imported because it drags in a second copy
 * of tfjs-core.
 */

/** SentencePiece's word boundary marker: a piece starting with it starts a word. */
export const WORD_START = "\u2581";
const RESERVED_PIECES = 6;
/** Id of the unknown piece (reserved id 0). */
export const UNKNOWN_ID = 0;

interface TrieNode {
  children: Map<string, TrieNode>;
  /** Vocabulary id of the piece ending here, or -1. */
  id: number;
  score: number;
}

export type UseVocabulary = [string, number][];

export class UseTokenizer {
  private readonly root: TrieNode = { children: new Map(), id: -1, score: 0 };
  /** Length (in code points) of each piece, by id. */
  private readonly lengths: number[];

  constructor(readonly vocabulary: UseVocabulary) {
    this.lengths = vocabulary.map(([piece]) => [...piece].length);
    for (let id = RESERVED_PIECES; id < vocabulary.length; id++) {
      const [piece, score] = vocabulary[id]!;
      let node = this.root;
      for (const symbol of piece) {
        let next = node.children.get(symbol);
        if (!next) node.children.set(symbol, (next = { children: new Map(), id: -1, score: 0 }));
        node = next;
      }
      node.id = id;
      node.score = score;
    }
  }

  /** Piece ids of `text` (NFKC, spaces as word marks), runs of unknown symbols merged into one. */
  encode(text: string): number[] {
    const normalized = text.normalize("NFKC");
    if (!normalized) return [];
    const symbols = [...(WORD_START + normalized.replace(/ /g, WORD_START))];
    const n = symbols.length;
    // best[end]: score of the best segmentation of symbols[0, end); word[end]: its last piece.
    // Scores are log-probabilities (< 0), so 0 doubles as "not reached" exactly as upstream does.
    const best = new Float64Array(n + 1);
    const word = new Int32Array(n + 1);
    const edges: { end: number; id: number; score: number }[][] = Array.from({ length: n + 1 }, () => []);
    for (let start = 0; start < n; start++) {
      let node = this.root.children.get(symbols[start]!);
      let matched = false;
      for (let i = start; node; ) {
        if (node.id >= 0) {
          edges[i + 1]!.push({ end: i + 1, id: node.id, score: node.score });
          matched = true;
        }
        i++;
        if (i >= n) break;
        node = node.children.get(symbols[i]!);
      }
      // A symbol no piece covers is one unknown piece (score 0), as upstream.
      if (!matched) edges[start + 1]!.push({ end: start + 1, id: UNKNOWN_ID, score: 0 });
    }
    // Upstream visits the edges ending at each position grouped by start position in ascending
    // order and keeps the last best (>=), which decides ties; the same order is kept here.
    const startOf = (e: { end: number; id: number }) => e.end - (e.id === UNKNOWN_ID ? 1 : this.lengths[e.id]!);
    for (let end = 1; end <= n; end++) {
      const list = edges[end]!.sort((a, b) => startOf(a) - startOf(b));
      for (const e of list) {
        const score = e.score + best[startOf(e)]!;
        if (best[end] === 0 || score >= best[end]!) {
          best[end] = score;
          word[end] = e.id;
        }
      }
    }
    const ids: number[] = [];
    for (let end = n; end > 0; ) {
      const id = word[end]!;
      ids.push(id);
      end -= id === UNKNOWN_ID ? 1 : this.lengths[id]!;
    }
    ids.reverse();
    const merged: number[] = [];
    for (const id of ids) if (!(id === UNKNOWN_ID && merged.at(-1) === UNKNOWN_ID)) merged.push(id);
    return merged;
  }
}
