/**
 * Extractive summaries and keyphrases of document text (src/text/summary.ts): plain functions,
 * tested on their own; the document pipeline stores what they return.
 */
import { describe, expect, test } from "bun:test";
import { extractiveSummary, keyphrases, sentences } from "../src/text/summary.ts";

const LEASE = [
  "RESIDENTIAL LEASE",
  "",
  "RENT",
  "The tenant pays the monthly rent on the first day of each month by bank transfer.",
  "",
  "TERMINATION",
  "Either party may end this lease with sixty days written notice. The tenant may cancel the lease early when the landlord fails to repair the heating.",
  "",
  "MAINTENANCE",
  "The landlord keeps the roof, the plumbing and the heating in good repair. Pets are welcome.",
].join("\n");

describe("extractive summaries", () => {
  test("sentences split at end punctuation, blank lines and headings", () => {
    expect(sentences(LEASE)).toEqual([
      "RESIDENTIAL LEASE",
      "RENT",
      "The tenant pays the monthly rent on the first day of each month by bank transfer.",
      "TERMINATION",
      "Either party may end this lease with sixty days written notice.",
      "The tenant may cancel the lease early when the landlord fails to repair the heating.",
      "MAINTENANCE",
      "The landlord keeps the roof, the plumbing and the heating in good repair.",
      "Pets are welcome.",
    ]);
  });

  test("the most central sentences, in document order, within the length limit; headings and short lines never", () => {
    const summary = extractiveSummary(LEASE, { maxSentences: 2 })!;
    expect(summary).toBe(
      "The tenant may cancel the lease early when the landlord fails to repair the heating. The landlord keeps the roof, the plumbing and the heating in good repair.",
    );
    expect(extractiveSummary(LEASE, { maxSentences: 3, maxChars: 90 })!.length).toBeLessThanOrEqual(90);
    expect(extractiveSummary("Hello.")).toBeNull();
    expect(extractiveSummary("")).toBeNull();
  });
});

describe("keyphrases", () => {
  test("runs of content words, best connected first, no duplicates or contained phrases, at most max", () => {
    const phrases = keyphrases(LEASE, { max: 5 });
    expect(phrases).toHaveLength(5);
    expect(phrases).toContain("sixty days written");
    expect(phrases.every((p) => p === p.toLowerCase() && p.length <= 50)).toBe(true);
    for (const p of phrases) expect(phrases.filter((q) => q !== p && q.includes(p))).toEqual([]);
    expect(keyphrases("the of and")).toEqual([]);
  });
});
