/**
 * The defaults of auto matching, chosen on the tuning half of bench:auto-match
 * (docs/benchmarks.md): a label is predicted when its probability reaches the threshold, and
 * learned only once this many files carry it.
 */
export const DEFAULT_AUTO_MATCH_THRESHOLD = 0.3;
