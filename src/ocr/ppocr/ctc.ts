/**
 * Greedy CTC decoding of a recognition model's output, as PaddleOCR's CTCLabelDecode: the most
 * probable class at each time step, repeats collapsed, the blank (class 0) dropped. Each kept
 * character also remembers the time steps it spans, from which the caller places words on the
 * line (the steps are evenly spread over the input's width).
 */

export interface DecodedChar {
  char: string;
  /** First and last time step (inclusive) where this character was the most probable class. */
  first: number;
  last: number;
  probability: number;
}

export interface DecodedLine {
  text: string;
  /** Mean probability of the kept characters; 0 when nothing was read. */
  confidence: number;
  chars: DecodedChar[];
  /** Time steps in the model's output. */
  steps: number;
}

/**
 * Decodes item `index` of a [batch, steps, classes] probability tensor. `alphabet[c]` is class
 * c's character; alphabet[0] is the blank.
 */
export function ctcDecode(probabilities: Float32Array, steps: number, classes: number, alphabet: readonly string[], index = 0): DecodedLine {
  const base = index * steps * classes;
  const chars: DecodedChar[] = [];
  let previous = -1;
  for (let t = 0; t < steps; t++) {
    const row = base + t * classes;
    let best = 0;
    let bestP = probabilities[row]!;
    for (let c = 1; c < classes; c++) {
      const p = probabilities[row + c]!;
      if (p > bestP) {
        bestP = p;
        best = c;
      }
    }
    if (best === previous && best !== 0) {
      chars[chars.length - 1]!.last = t;
    } else if (best !== 0) {
      chars.push({ char: alphabet[best] ?? "", first: t, last: t, probability: bestP });
    }
    previous = best;
  }
  const text = chars.map((c) => c.char).join("");
  const confidence = chars.length ? chars.reduce((n, c) => n + c.probability, 0) / chars.length : 0;
  return { text, confidence, chars, steps };
}

export interface DecodedWord {
  text: string;
  /** Fraction of the line's width (0-1) where the word starts and ends. */
  start: number;
  end: number;
}

/**
 * The line's words (split at spaces) with where each lies along the line, given the fraction of
 * the model's input width the line itself filled (the rest was padding). A word starts half a
 * step before its first character's first step and ends half a step after its last's.
 */
export function wordsOf(line: DecodedLine, filled = 1): DecodedWord[] {
  const words: DecodedWord[] = [];
  let current: DecodedChar[] = [];
  const flush = () => {
    if (!current.length) return;
    const step = 1 / line.steps / filled;
    const start = Math.min(1, Math.max(0, (current[0]!.first - 0.5) * step));
    const end = Math.min(1, (current[current.length - 1]!.last + 1.5) * step);
    words.push({ text: current.map((c) => c.char).join(""), start, end: Math.max(start, end) });
    current = [];
  };
  for (const c of line.chars) {
    if (/\s/.test(c.char)) flush();
    else current.push(c);
  }
  flush();
  return words;
}
