import { describe, expect, test } from "bun:test";
import path from "node:path";
import { chunkDocument } from "../src/documents/chunking.ts";
import { TextEmbedder } from "../src/embeddings/text-embedder.ts";
import type { Chunk, DocElement, ElementType, DocumentContent } from "../src/documents/types.ts";
import { SHARED_TOKENIZER, realTokenizerAvailable } from "./support/embedding-model.ts";

/** Word count: additive over whitespace like a WordPiece tokenizer, and easy to reason about. */
const words = (text: string) => text.split(/\s+/).filter(Boolean).length;

const box = { x: 0.1, y: 0.1, w: 0.8, h: 0.05 };
const el = (type: ElementType, content: string, metadata?: Record<string, unknown>): DocElement => ({
  type,
  content,
  bounding_box: box,
  ...(metadata ? { metadata } : {}),
});
const h = (level: number, text: string) => el("heading", text, { level });
const p = (text: string) => el("paragraph", text);

/** A document whose page N (1-indexed) holds pages[N-1]. */
function doc(...pages: DocElement[][]): DocumentContent {
  const docPages = pages.map((elements, i) => ({
    page_number: i + 1,
    status: "completed" as const,
    error_message: null,
    ocr: false,
    text: elements.map((e) => e.content).join("\n"),
    elements,
  }));
  return {
    document_type: "pdf",
    page_count: pages.length,
    pages: docPages,
    text: docPages.map((pg) => pg.text).join("\n\n"),
    metadata: { title: null, author: null },
  };
}

/** `n` distinct words: prefix1 prefix2 ... */
const wordRun = (prefix: string, n: number, from = 1) => Array.from({ length: n }, (_, i) => `${prefix}${i + from}`).join(" ");
/** `n` sentences of 5 distinct words each. */
const sentences = (prefix: string, n: number) =>
  Array.from({ length: n }, (_, i) => `${wordRun(`${prefix}${i + 1}w`, 5)}.`).join(" ");

function expectWellFormed(chunks: Chunk[], maxTokens: number, count = words) {
  chunks.forEach((c, i) => {
    expect(c.chunk_index).toBe(i);
    expect(c.token_count).toBe(count(c.content));
    expect(c.token_count).toBeLessThanOrEqual(maxTokens);
    expect(c.content.trim().length).toBeGreaterThan(0);
    expect(c.page_numbers.length).toBeGreaterThan(0);
    expect([...c.page_numbers].sort((a, b) => a - b)).toEqual(c.page_numbers);
    expect(new Set(c.page_numbers).size).toBe(c.page_numbers.length);
  });
}

describe("chunkDocument", () => {
  test("empty documents give no chunks", () => {
    expect(chunkDocument(doc(), words)).toEqual([]);
    expect(chunkDocument(doc([], []), words)).toEqual([]);
    expect(chunkDocument(doc([p("   "), el("figure", ""), el("table", "\n")]), words)).toEqual([]);
  });

  test("heading hierarchy follows levels; a new H2 drops the H3", () => {
    const chunks = chunkDocument(
      doc([
        h(1, "Service Manual"),
        p("intro words here"),
        h(2, "Installation"),
        p("install words here"),
        h(3, "Prerequisites"),
        p("prereq words here"),
        h(2, "Operation"),
        p("operate words here"),
        h(1, "Appendix"),
        p("appendix words here"),
      ]),
      words,
    );
    expect(chunks.map((c) => c.heading_hierarchy)).toEqual([
      ["Service Manual"],
      ["Service Manual", "Installation"],
      ["Service Manual", "Installation", "Prerequisites"],
      ["Service Manual", "Operation"],
      ["Appendix"],
    ]);
    // The heading's text starts the first chunk of its section.
    expect(chunks.map((c) => c.content.split("\n\n")[0])).toEqual(["Service Manual", "Installation", "Prerequisites", "Operation", "Appendix"]);
    expect(chunks[1]!.content).toBe("Installation\n\ninstall words here");
    expectWellFormed(chunks, 256);
  });

  test("a heading without level is level 1; skipped levels still nest", () => {
    const chunks = chunkDocument(doc([el("heading", "Top"), p("a"), h(3, "Deep"), p("b"), h(2, "Mid"), p("c")]), words);
    expect(chunks.map((c) => c.heading_hierarchy)).toEqual([["Top"], ["Top", "Deep"], ["Top", "Mid"]]);
  });

  test("a heading directly followed by a subsection carries into it; an empty section is its own chunk", () => {
    const chunks = chunkDocument(doc([h(1, "Report"), h(2, "Summary"), p("summary text"), h(2, "Empty section"), h(2, "Findings"), p("findings text")]), words);
    expect(chunks.map((c) => c.content)).toEqual(["Report\n\nSummary\n\nsummary text", "Empty section", "Findings\n\nfindings text"]);
    expect(chunks.map((c) => c.heading_hierarchy)).toEqual([["Report", "Summary"], ["Report", "Empty section"], ["Report", "Findings"]]);
    // A document that is only a title still has a chunk.
    expect(chunkDocument(doc([h(1, "Only a title")]), words).map((c) => c.content)).toEqual(["Only a title"]);
  });

  test("chunks never cross headings, and pack paragraphs up to maxTokens", () => {
    const elements: DocElement[] = [];
    for (let s = 1; s <= 4; s++) {
      elements.push(h(2, `Section ${s}`));
      for (let k = 1; k <= 7; k++) elements.push(p(wordRun(`s${s}p${k}w`, 6)));
    }
    const chunks = chunkDocument(doc(elements), words, { maxTokens: 20 });
    expectWellFormed(chunks, 20);
    for (const chunk of chunks) {
      const sections = new Set(chunk.content.match(/\bs\d+(?=p)/g));
      expect(sections.size).toBe(1);
      const section = [...sections][0]!.slice(1);
      expect(chunk.heading_hierarchy).toEqual([`Section ${section}`]);
    }
    // Heading (2 words) + 3 paragraphs of 6 = 20; then 3 more; then the last one.
    const first = chunks.filter((c) => c.heading_hierarchy[0] === "Section 1");
    expect(first.map((c) => c.token_count)).toEqual([20, 18, 6]);
    expect(first[0]!.content.startsWith("Section 1\n\n")).toBe(true);
    expect(first.slice(1).every((c) => !c.content.includes("Section 1"))).toBe(true);
  });

  test("a paragraph over maxTokens is split at sentence ends with overlap", () => {
    const long = sentences("s", 30); // 150 words, 30 sentences
    const chunks = chunkDocument(doc([p(long)]), words, { maxTokens: 40, overlapTokens: 8 });
    expect(chunks.length).toBeGreaterThan(3);
    expectWellFormed(chunks, 40);
    for (let i = 0; i + 1 < chunks.length; i++) {
      const prev = chunks[i]!.content.split(" ");
      const next = chunks[i + 1]!.content.split(" ");
      // Pieces end at a sentence end…
      expect(chunks[i]!.content.endsWith(".")).toBe(true);
      // …and the next piece starts with the previous one's last words (at most 8 of them).
      let k = 8;
      while (k > 0 && prev.slice(-k).join(" ") !== next.slice(0, k).join(" ")) k--;
      expect(k).toBeGreaterThan(0);
      expect(k).toBeLessThanOrEqual(8);
    }
    // Nothing is lost: every word of the paragraph is in some chunk, in order.
    const seen = new Set(chunks.flatMap((c) => c.content.split(/\s+/)));
    for (const w of long.split(" ")) expect(seen.has(w)).toBe(true);
  });

  test("overlap words appear in both pieces; one endless sentence is split between words", () => {
    const endless = wordRun("w", 100); // no punctuation at all
    const chunks = chunkDocument(doc([p(endless)]), words, { maxTokens: 30, overlapTokens: 5 });
    expectWellFormed(chunks, 30);
    expect(chunks[0]!.content).toBe(wordRun("w", 30));
    expect(chunks[1]!.content).toBe(wordRun("w", 30, 26)); // w26..w30 in both
    expect(chunks.at(-1)!.content.endsWith("w100")).toBe(true);
    // Without overlap the pieces partition the words.
    const plain = chunkDocument(doc([p(endless)]), words, { maxTokens: 30, overlapTokens: 0 });
    expect(plain.map((c) => c.content).join(" ")).toBe(endless);
  });

  test("a word longer than maxTokens (by the counter) is cut between characters", () => {
    const chars = (t: string) => t.replace(/\s+/g, "").length; // one token per character
    const blob = "x".repeat(95);
    const chunks = chunkDocument(doc([p(`short ${blob} tail`)]), chars, { maxTokens: 40, overlapTokens: 0 });
    expectWellFormed(chunks, 40, chars);
    expect(chunks.map((c) => c.content.replace(/\s+/g, "")).join("")).toBe(`short${blob}tail`);
  });

  test("a table too large is split between rows, repeating the header", () => {
    const header = "| Part | Qty | Location |\n| --- | --- | --- |";
    const rows = Array.from({ length: 40 }, (_, i) => `| P-${i + 1} | ${i + 1} | Bay ${i + 1} |`);
    const table = el("table", `${header}\n${rows.join("\n")}`, { rows: 41, columns: 3 });
    const chunks = chunkDocument(doc([h(1, "Inventory"), table]), words, { maxTokens: 60 });
    expect(chunks.length).toBeGreaterThan(2);
    expectWellFormed(chunks, 60);
    expect(chunks[0]!.content.startsWith(`Inventory\n\n${header}\n| P-1 |`)).toBe(true);
    for (const c of chunks.slice(1)) expect(c.content.startsWith(`${header}\n| P-`)).toBe(true);
    for (const c of chunks) {
      expect(c.chunk_type).toBe("table");
      expect(c.heading_hierarchy).toEqual(["Inventory"]);
    }
    // Each row exactly once, in order.
    const seen = chunks.flatMap((c) => c.content.split("\n").filter((l) => l.startsWith("| P-")));
    expect(seen).toEqual(rows);
  });

  test("page_numbers follow elements across a page boundary", () => {
    const chunks = chunkDocument(
      doc([h(1, "Chapter"), p("end of page one")], [p("start of page two")], [p(wordRun("big", 30))], [p("last page")]),
      words,
      { maxTokens: 20, overlapTokens: 0 },
    );
    expect(chunks.map((c) => c.page_numbers)).toEqual([[1, 2], [3], [3, 4]]);
    expect(chunks.every((c) => c.heading_hierarchy[0] === "Chapter")).toBe(true);
  });

  test("chunk_type is the kind holding at least 60% of the tokens, else mixed", () => {
    const table = el("table", "| a | b |\n| --- | --- |\n| 1 | 2 |\n| 3 | 4 |"); // 22 words
    const list = el("list", "- one item\n- two item\n- three item"); // 9 words
    const kv = el("key_value", "Invoice: 42\nDate: today"); // 4 words
    const typeOf = (...elements: DocElement[]) => chunkDocument(doc(elements), words)[0]!.chunk_type;
    expect(typeOf(p("plain text here"))).toBe("text");
    expect(typeOf(table, p("a note"))).toBe("table");
    expect(typeOf(list, p("one"))).toBe("list");
    expect(typeOf(kv)).toBe("key_value");
    expect(typeOf(h(1, "Title"), p("words of body"))).toBe("text");
    expect(typeOf(list, p(wordRun("w", 9)))).toBe("mixed"); // 50/50
    expect(typeOf(list, p(wordRun("w", 6)))).toBe("list"); // exactly 60%
  });

  test("figures are skipped unless they have a caption", () => {
    const chunks = chunkDocument(doc([p("before"), el("figure", ""), el("figure", "Figure 2: pump cross-section"), p("after")]), words);
    expect(chunks).toHaveLength(1);
    expect(chunks[0]!.content).toBe("before\n\nFigure 2: pump cross-section\n\nafter");
  });

  test("mixed documents respect maxTokens and lose no text", () => {
    const elements: DocElement[][] = [];
    let all = "";
    for (let pg = 1; pg <= 6; pg++) {
      const page: DocElement[] = [h(pg % 2 ? 1 : 2, `Heading ${pg}`)];
      page.push(p(sentences(`g${pg}a`, pg * 3)));
      page.push(el("list", Array.from({ length: pg * 4 }, (_, i) => `- item${pg}x${i} does things`).join("\n")));
      page.push(el("key_value", `Key${pg}: value${pg}\nOther${pg}: thing${pg}`));
      page.push(el("table", `| c${pg} | d${pg} |\n| --- | --- |\n${Array.from({ length: pg * 5 }, (_, i) => `| r${pg}x${i} | v |`).join("\n")}`));
      page.push(p(wordRun(`solo${pg}x`, 5)));
      elements.push(page);
      all += page.map((e) => e.content).join(" ") + " ";
    }
    for (const maxTokens of [12, 25, 64, 254]) {
      const chunks = chunkDocument(doc(...elements), words, { maxTokens, overlapTokens: 4 });
      expectWellFormed(chunks, maxTokens);
      const seen = new Set(chunks.flatMap((c) => c.content.split(/\s+/)));
      for (const w of all.split(/\s+/).filter(Boolean)) expect(seen.has(w)).toBe(true);
    }
  });

  test("text without words is still cut: at most maxTokens * minCharsPerToken characters a chunk, nothing lost", () => {
    const word = "a".repeat(1_000_000); // one "word": a single token to a WordPiece tokenizer
    const one = () => 1;
    const chunks = chunkDocument(doc([p(word)]), one, { maxTokens: 50, overlapTokens: 0, minCharsPerToken: 10 });
    expect(chunks.every((c) => c.content.length <= 500)).toBe(true);
    expect(chunks.map((c) => c.content).join("")).toBe(word);
    // A word of emoji is never cut inside a character.
    const emoji = "\u{1F600}".repeat(10_000);
    const cut = chunkDocument(doc([p(emoji)]), one, { maxTokens: 50, overlapTokens: 0, minCharsPerToken: 10 });
    expect(cut.map((c) => c.content).join("")).toBe(emoji);
    expect(cut.every((c) => !/[\uD800-\uDBFF]$/.test(c.content))).toBe(true);
  });

  test("a heading of a megabyte of spaces is its words; headings repeated on chunks are at most 300 characters", () => {
    const spaced = chunkDocument(doc([h(1, `a${" ".repeat(1_000_000)}x`), p("body")]), words);
    expect(spaced.map((c) => c.content)).toEqual(["a x\n\nbody"]);
    const long = wordRun("t", 400);
    const chunks = chunkDocument(doc([h(1, long), p(wordRun("b", 600))]), words);
    expect(chunks.length).toBeGreaterThan(2);
    for (const c of chunks) expect(c.heading_hierarchy).toEqual([`${long.slice(0, 299)}…`]);
  });

  test("rejects impossible sizes", () => {
    expect(() => chunkDocument(doc([p("x")]), words, { maxTokens: 0 })).toThrow(/maxTokens/);
    expect(() => chunkDocument(doc([p("x")]), words, { overlapTokens: -1 })).toThrow(/overlapTokens/);
  });

  test("100 pages chunk well under a second, counting each text about once", () => {
    const pages: DocElement[][] = [];
    for (let pg = 0; pg < 100; pg++) {
      const page: DocElement[] = [h(2, `Part ${pg}`)];
      for (let k = 0; k < 12; k++) page.push(p(sentences(`p${pg}k${k}s`, 6)));
      page.push(p(sentences(`long${pg}s`, 80))); // 400 words: split
      pages.push(page);
    }
    const document = doc(...pages);
    let counted = 0;
    const counting = (t: string) => {
      counted += t.length;
      return words(t);
    };
    const started = performance.now();
    const chunks = chunkDocument(document, counting);
    const elapsed = performance.now() - started;
    expect(elapsed).toBeLessThan(1000);
    expectWellFormed(chunks, 254);
    // Each element or sentence once, plus the words carried as overlap: little more than one pass.
    console.log(`chunked 100 pages (${document.text.length} chars) in ${elapsed.toFixed(0)} ms; count() read ${(counted / document.text.length).toFixed(2)}× the text`);
    expect(counted).toBeLessThan(1.5 * document.text.length);
  });
});

describe("chunkDocument with the real all-MiniLM-L6-v2 tokenizer", () => {
  const available = realTokenizerAvailable();
  if (!available) console.warn(`skipping real-tokenizer chunking test: ${SHARED_TOKENIZER} is missing`);

  test.skipIf(!available)("token counts are the tokenizer's and every chunk fits the model window", async () => {
    const embedder = new TextEmbedder({ modelsDir: path.dirname(SHARED_TOKENIZER), model: path.basename(SHARED_TOKENIZER) });
    const tokenizer = await embedder.tokenizer();
    expect(tokenizer.maxTokens).toBe(256);
    expect(tokenizer.count("")).toBe(0);
    expect(tokenizer.count("Hello, world!")).toBe(4); // hello , world !

    const sentence = (i: number) =>
      `Inspection #${i}: the pressure-relief valve (VX-${4400 + i}) was re-torqued to ${12 + (i % 7)}.5 N·m, and its seals — replaced in 2019 — showed “minor” wear.`;
    const elements: DocElement[] = [
      h(1, "Maintenance Report for Pumping Station Nº 7"),
      p(Array.from({ length: 40 }, (_, i) => sentence(i)).join(" ")),
      h(2, "Parts replaced"),
      el("table", `| Part | Serial | Qty |\n| --- | --- | --- |\n${Array.from({ length: 80 }, (_, i) => `| Gasket type ${i} | SN-${(i * 7919) % 100000} | ${i % 5} |`).join("\n")}`),
      el("list", Array.from({ length: 30 }, (_, i) => `- Step ${i}: verify torque on flange bolt ${i} (spec ${20 + i} N·m)`).join("\n")),
      el("key_value", "Inspector: Zoë Ångström\nDate: 2024-03-01\nSite: Ålesund"),
      p(`Unpunctuated run ${Array.from({ length: 400 }, (_, i) => `token${i}`).join(" ")}`),
    ];
    const maxTokens = tokenizer.maxTokens - 2; // room for [CLS] and [SEP]
    const chunks = chunkDocument(doc(elements.slice(0, 3), elements.slice(3)), tokenizer.count, { maxTokens });
    expect(chunks.length).toBeGreaterThan(5);
    expectWellFormed(chunks, maxTokens, tokenizer.count);
    expect(chunks.some((c) => c.chunk_type === "table")).toBe(true);
    expect(chunks.some((c) => c.token_count > maxTokens * 0.8)).toBe(true); // packed, not tiny
  });
});
