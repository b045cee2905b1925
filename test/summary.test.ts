/**
 * Extractive summaries and keyphrases of document text (src/text/summary.ts): plain functions,
 * tested on their own; the document pipeline stores what they return.
 */
import { describe, expect, test } from "bun:test";
import { extractiveSummary, isProse, keyphrases, sentences } from "../src/text/summary.ts";

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

  test("a description is prose: table rows, runs of cells and figures never make it, and a text of tables has none", () => {
    const invoice = [
      "| Item | Quantity | Price |",
      "|---|---|---|",
      "| Extraction hood without filter | 2 | 1,240.00 EUR |",
      "| Late payments incur interest of 8 % per year | | |",
      "",
      "Total 2,480.00 EUR excluding charges 12 % VAT 297.60 EUR due 30 days",
      "",
      "Thank you for your order of two extraction hoods for the harbour kitchen.",
      "The hoods will be delivered to the quay entrance on the first Monday of March.",
    ].join("\n");
    const summary = extractiveSummary(invoice)!;
    expect(summary).toBe("Thank you for your order of two extraction hoods for the harbour kitchen. The hoods will be delivered to the quay entrance on the first Monday of March.");
    expect(extractiveSummary("| Part | State | Next check |\n|---|---|---|\n| Hook | worn | May |\n| Cable | good | June |")).toBeNull();
    expect(isProse("The tenant pays the rent on the first day of each month.")).toBe(true);
    expect(isProse("| Hook | worn | May |")).toBe(false);
    expect(isProse("Total 2,480.00 EUR excluding charges 12 % VAT 297.60 EUR due 30 days")).toBe(false);
    expect(isProse("Invoice number 2026-0042 dated 2026-03-01 for 2 items 240 EUR.")).toBe(false);
  });
});

describe("keyphrases", () => {
  test("runs of content words, best connected first, no duplicates or contained phrases, at most max", () => {
    const phrases = keyphrases(LEASE, { max: 5 });
    expect(phrases).toHaveLength(5);
    expect(phrases).toContain("days written notice");
    expect(phrases.every((p) => p === p.toLowerCase() && p.length <= 50)).toBe(true);
    for (const p of phrases) expect(phrases.filter((q) => q !== p && q.includes(p))).toEqual([]);
    expect(keyphrases("the of and")).toEqual([]);
    // Number words and other function words beyond the search's list break phrases too.
    const fragments = keyphrases("The facility exceeds at least one of the capacity thresholds. Almost every facility reports using the register, and at least one reports twice.");
    expect(fragments.filter((p) => /\b(least|one|almost|using)\b/.test(p))).toEqual([]);
    expect(fragments).toContain("capacity thresholds");
  });
});
