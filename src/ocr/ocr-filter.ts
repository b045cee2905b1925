/**
 * Which of tesseract's lines and words are text and which are noise. Photos without text make
 * tesseract "read" texture (foliage, brick, fabric, faces) as short unsure words of letters and
 * symbols (`a no,`, `top; | | = = : EC`); real text, even on a sign or a poor receipt scan, has
 * at least some confident words. So, with confidences as tesseract gives them (0-100):
 *
 *  - a page holds text only if some word of 3+ letters/digits reads with confidence >= 75, or
 *    some line of 4+ letters/digits averages >= 60; otherwise it yields no text at all;
 *  - on such a page a line is kept if it has such a strong word or averages >= 45, so noise
 *    lines beside a sign go while the faint lines of a receipt stay;
 *  - in a kept line every word with a letter or digit is kept, whatever its confidence (dropping
 *    words or whole lines by confidence lost "THANK YOU, PLEASE COME AGAIN" and raised the
 *    receipts' CER from 0.18 to 0.23); symbol-only words (`|`, `=`) need >= 40.
 *
 * Thresholds were tuned on the development OCR sets and on photos without text; `npm run
 * bench:ocr` prints the resulting CER/WER beside the tesseract CLI's.
 */

export interface OcrWord {
  text: string;
  /** 0-100, as tesseract reports it. */
  confidence: number;
}

export interface FilterOptions {
  strongWordConfidence: number;
  confidentLineMean: number;
  keptLineMean: number;
  symbolConfidence: number;
}

export const DEFAULT_FILTER: FilterOptions = { strongWordConfidence: 75, confidentLineMean: 60, keptLineMean: 45, symbolConfidence: 40 };

const alnumCount = (text: string) => (text.match(/[\p{L}\p{N}]/gu) ?? []).length;
const mean = (words: OcrWord[]) => words.reduce((n, w) => n + w.confidence, 0) / words.length;

/**
 * The kept words of each line (same order and nesting as given; a dropped line is an empty
 * array), or null when the page holds no text.
 */
export function filterLines<W extends OcrWord>(lines: W[][], options: FilterOptions = DEFAULT_FILTER): W[][] | null {
  const strong = (w: OcrWord) => alnumCount(w.text) >= 3 && w.confidence >= options.strongWordConfidence;
  const confident = (line: W[]) => line.length > 0 && mean(line) >= options.confidentLineMean && line.reduce((n, w) => n + alnumCount(w.text), 0) >= 4;
  if (!lines.some((line) => line.some(strong) || confident(line))) return null;
  return lines.map((line) => {
    if (!line.length || !(line.some(strong) || mean(line) >= options.keptLineMean)) return [];
    return line.filter((w) => w.text.trim() && (alnumCount(w.text) > 0 || w.confidence >= options.symbolConfidence));
  });
}
