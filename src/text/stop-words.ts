/**
 * English function words: left out of keyword queries (they match most chunks and rank nothing)
 * and out of the built-in sentence vectors (they carry no topic). Lower case, unstemmed.
 */
export const STOP_WORDS: ReadonlySet<string> = new Set(
  (
    "a about above after again against all am an and any are aren't as at be because been before being below between both but by " +
    "can cannot could did do does doing don't down during each few for from further had has have having he her here hers herself " +
    "him himself his how i if in into is isn't it its itself just me more most my myself no nor not now of off on once only or " +
    "other our ours ourselves out over own same she should so some such than that the their theirs them themselves then there " +
    "these they this those through to too under until up upon very was we were what when where which while who whom why will " +
    "with would you your yours yourself yourselves may might must shall also however thus therefore"
  ).split(" "),
);

/** Lower-case words of `text` (letters and digits; hyphens and apostrophes split words). */
export function words(text: string): string[] {
  return text.normalize("NFKC").toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
}
