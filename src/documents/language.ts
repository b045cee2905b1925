/**
 * A document's language by counting frequent function words: enough to tell the common European
 * languages apart in a page of text, with no model. Returns an ISO 639-1 code, or null when the
 * text is too short or no language clearly leads.
 */
const STOPWORDS: Record<string, string[]> = {
  en: ["the", "and", "of", "to", "in", "is", "that", "for", "with", "was", "on", "are", "this", "be", "by"],
  de: ["der", "die", "und", "das", "ist", "nicht", "mit", "den", "ein", "eine", "zu", "auf", "für", "von", "sich"],
  fr: ["le", "la", "les", "et", "des", "est", "une", "dans", "pour", "que", "qui", "pas", "sur", "du", "au"],
  es: ["el", "la", "los", "las", "y", "de", "que", "en", "por", "con", "para", "una", "es", "del", "se"],
  it: ["il", "di", "che", "e", "la", "per", "non", "una", "sono", "della", "con", "gli", "del", "nel", "le"],
  pt: ["o", "a", "os", "as", "de", "que", "e", "do", "da", "em", "para", "com", "uma", "não", "por"],
  nl: ["de", "het", "een", "en", "van", "is", "dat", "niet", "op", "te", "met", "voor", "zijn", "er", "ook"],
};

/** Enough text for 5,000 words; the rest of a long document is never scanned (it would only cost time on the event loop). */
const SAMPLE_CHARS = 100_000;

export function detectLanguage(text: string): string | null {
  const words = text.slice(0, SAMPLE_CHARS).toLowerCase().match(/\p{L}+/gu)?.slice(0, 5000) ?? [];
  if (words.length < 20) return null;
  const scores = Object.entries(STOPWORDS).map(([lang, list]) => {
    const set = new Set(list);
    return [lang, words.filter((w) => set.has(w)).length] as const;
  });
  scores.sort((a, b) => b[1] - a[1]);
  const [best, second] = scores;
  if (!best || best[1] < words.length * 0.05 || (second && best[1] < second[1] * 1.3)) return null;
  return best[0];
}
