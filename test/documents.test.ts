/**
 * The document pipeline through real HTTP: extraction of PDF (text layer and scanned), DOCX, MD
 * and TXT; digitization endpoints; chunks; hybrid search (stemmed keywords, and vectors of the
 * built-in text model by default: paraphrases, the similarity cutoff, paging; a configured folder
 * model with the fixture embedding model, paraphrases with a real folder model when one is
 * installed); analyze (sync and async); the 400/404/409 cases; and the purge of everything
 * derived from a document.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { ManualClock } from "../src/clock.ts";
import { purgeDeletedFiles } from "../src/library/file-edits.ts";
import { corruptPdf, reportDocx, reportPdf, sampleMd, sampleTxt, SCAN_LEFT_COLUMN, SCAN_RIGHT_COLUMN, scannedColumnsBesideDiagram, scannedPdf } from "./support/documents.ts";
import { SHARED_TOKENIZER, buildFixtureEmbeddingModel } from "./support/embedding-model.ts";
import { photo } from "./support/images.ts";
import { jobDone, pollApi, processed } from "./support/polling.ts";
import { ApiClient, startTestServer, type Tenant, type TestServer } from "./support/server.ts";
import { postFile, uploadFile } from "./support/uploads.ts";
import { perTest } from "./support/per-test.ts";
import type { SqlClient } from "../src/db/sql-client.ts";
import { postgresMigrations, splitStatements } from "../src/db/postgres-migrations.ts";

/**
 * Scripts written for SQLite, as the statements to run on `sql`'s engine: translated for
 * PostgreSQL as the migrations are (a trigger becomes a function and a row trigger), in one list so
 * a later script's DROP TRIGGER knows the table an earlier one put it on.
 */
function forEngine(sql: SqlClient, scripts: string[]): string[][] {
  const steps = sql.dialect.name === "postgres" ? postgresMigrations(scripts.map((script, i) => ({ version: i + 1, name: `step ${i + 1}`, sql: script }))).map((m) => m.sql) : scripts;
  return steps.map((step) => splitStatements(step).filter((statement) => statement.trim() !== ""));
}

const SHARED_MINILM = SHARED_TOKENIZER;

let server: TestServer;
let owner: Tenant;
const clock = new ManualClock(Date.now());

beforeAll(async () => {
  server = await startTestServer({ clock });
  owner = await server.tenant({ tier: "CUSTOM" });
});
afterAll(() => server.close());

const { startServer: startExtraServer, dir: scratchDir } = perTest();

const bytesOf = async (b: Uint8Array | string | Promise<Uint8Array | string>) => {
  const v = await b;
  return typeof v === "string" ? new TextEncoder().encode(v) : v;
};

const upload = (tenant: Tenant, bytes: Uint8Array, filename: string, fields: Record<string, string> = {}, path = "/files/upload") => postFile(tenant.api, bytes, filename, fields, { path });
const uploadDoc = (tenant: Tenant, bytes: Uint8Array, filename: string, fields: Record<string, string> = {}) => uploadFile(tenant.api, bytes, filename, fields);

/** Waits until a document's chunks are all embedded (with its processing, or by a job of its own after it). */
async function embedded(tenant: Tenant, id: string): Promise<void> {
  await processed(tenant, id);
  await pollApi(tenant, `/files/${id}/processing-status`, (res) => res.body.embedding_status === "completed", { what: `document ${id}'s chunks to be embedded` });
}

describe("extraction and digitization", () => {
  let pdfId: string;
  beforeAll(async () => {
    pdfId = await uploadDoc(owner, await bytesOf(reportPdf()), "safety-report.pdf");
    await processed(owner, pdfId);
  });

  test("a PDF's text, pages, language and chunks", async () => {
    const file = (await owner.api.get(`/files/${pdfId}`)).body;
    expect([file.document_type, file.text_extraction_status, file.page_count]).toEqual(["pdf", "completed", 2]);
    expect(file.chunk_count).toBeGreaterThan(0);
    expect(file.extracted_text).toContain("Annual Safety Report");
    // processing-status times each stage, as for images.
    const stages = (await owner.api.get(`/files/${pdfId}/processing-status`)).body.stages as { stage: string; status: string; duration_ms: number }[];
    expect(stages.map((s) => s.stage).sort()).toEqual(["chunks", "embeddings", "extraction", "summary"]);
    for (const s of stages) expect(s.duration_ms, s.stage).toBeGreaterThanOrEqual(0);
    expect(stages.find((s) => s.stage === "extraction")?.status).toBe("completed");

    const text = (await owner.api.get(`/files/${pdfId}/text`)).body;
    expect(text).toMatchObject({ document_id: pdfId, filename: "safety-report.pdf", page_count: 2, metadata: { language: "en" } });
    expect(text.text).toContain("VX-4471");
    expect(text.text.indexOf("Introduction")).toBeLessThan(text.text.indexOf("Findings"));

    const chunks = (await owner.api.get(`/files/${pdfId}/chunks`)).body;
    expect(chunks.total_chunks).toBe(file.chunk_count);
    expect(chunks.status_counts).toBeUndefined();
    const findings = chunks.chunks.find((c: { content: string }) => c.content.includes("VX-4471"));
    expect(findings.page_numbers).toEqual([2]);
    expect(findings.heading_hierarchy.at(-1)).toContain("Findings");
    expect(findings).toMatchObject({ document_id: pdfId, document_filename: "safety-report.pdf", similarity_score: null });
    expect(findings.metadata.token_count).toBeGreaterThan(0);
    expect(chunks.chunks.map((c: { chunk_index: number }) => c.chunk_index)).toEqual(chunks.chunks.map((_: unknown, i: number) => i));

    const withEmbeddings = (await owner.api.get(`/files/${pdfId}/chunks?include_embeddings=true`)).body;
    const counts = withEmbeddings.status_counts;
    expect(counts.completed + counts.pending + counts.failed).toBe(file.chunk_count);
    expect(withEmbeddings.chunks[0]).toHaveProperty("embedding");
  });

  test("digitization: typed elements with boxes, per-page status, 404 for a missing page", async () => {
    const digitization = (await owner.api.get(`/files/${pdfId}/digitization`)).body;
    expect(digitization).toMatchObject({ document_id: pdfId, status: "completed", total_pages: 2, completed_pages: 2, failed_pages: 0 });
    const first = digitization.pages[0];
    const types = new Set(first.elements.map((e: { type: string }) => e.type));
    for (const type of ["heading", "paragraph", "list", "key_value", "table", "figure"]) expect(types.has(type), type).toBe(true);
    expect(first.element_count).toBe(first.elements.length);
    for (const e of first.elements) {
      const b = e.bounding_box;
      expect(b.x >= 0 && b.y >= 0 && b.w > 0 && b.h > 0 && b.x + b.w <= 1.001 && b.y + b.h <= 1.001, JSON.stringify(e)).toBe(true);
    }
    const title = first.elements.find((e: { type: string }) => e.type === "heading");
    expect(title.content).toContain("Annual Safety Report");
    expect(title.metadata.level).toBe(1);
    const table = first.elements.find((e: { type: string }) => e.type === "table");
    expect(table.content).toMatch(/\|\s*Item\s*\|\s*Count\s*\|\s*Status\s*\|/);

    const page2 = await owner.api.get(`/files/${pdfId}/digitization/pages/2`);
    expect(page2.status).toBe(200);
    expect(page2.body.page_number).toBe(2);
    expect((await owner.api.get(`/files/${pdfId}/digitization/pages/3`)).status).toBe(404);
    expect((await owner.api.get(`/files/${pdfId}/digitization/pages/0`)).status).toBe(400);
    const status = (await owner.api.get(`/files/${pdfId}/digitization/status`)).body;
    expect(status).toEqual({ document_id: pdfId, status: "completed", total_pages: 2, page_statuses: { "1": "completed", "2": "completed" } });
  });

  test("DOCX, Markdown and text files", async () => {
    const docx = await processed(owner, await uploadDoc(owner, await bytesOf(reportDocx()), "report.docx"));
    const md = await processed(owner, await uploadDoc(owner, await bytesOf(sampleMd()), "notes.md"));
    const txt = await processed(owner, await uploadDoc(owner, await bytesOf(sampleTxt()), "notes.txt"));
    for (const file of [docx, md, txt]) {
      expect([file.media_type, file.text_extraction_status], file.filename).toEqual(["document", "completed"]);
      expect(file.extracted_text.length).toBeGreaterThan(20);
      const pages = (await owner.api.get(`/files/${file.id}/digitization`)).body.pages;
      expect(pages.flatMap((p: { elements: { type: string }[] }) => p.elements.map((e) => e.type))).toContain("heading");
    }
    expect([docx.document_type, md.document_type, txt.document_type]).toEqual(["docx", "md", "txt"]);
    expect(md.page_count).toBe(2); // the form feed starts a second logical page
    const docxElements = (await owner.api.get(`/files/${docx.id}/digitization`)).body.pages[0].elements.map((e: { type: string }) => e.type);
    expect(docxElements).toContain("table");
    expect(docxElements).toContain("list");
  });

  test("a document gets a machine-made summary as its description; its keyphrases are suggestions, not tags, accepted or dismissed", async () => {
    const form = new FormData();
    form.append("file", new File([sampleMd()], "guide.md"));
    form.append("tags", "mine");
    const id = (await owner.api.form("/files/upload", form)).body.image_id;
    const file = await processed(owner, id);
    // Its sentences come from the text itself, never invented.
    const sentences = String(file.upload_description).split(/(?<=[.!?])\s+/).filter(Boolean);
    expect(sentences.length).toBeGreaterThan(0);
    for (const sentence of sentences) expect(file.extracted_text.replace(/\s+/g, " ")).toContain(sentence.replace(/\s+/g, " ").slice(0, 40));
    // The user's tags alone; the keyphrases wait as suggestions.
    expect(file.tags).toEqual(["mine"]);
    expect(file.suggested_tags.length).toBeGreaterThan(1);
    const [accept, dismiss] = file.suggested_tags as [string, string];
    expect((await owner.api.patch(`/files/${id}`, { tags: ["mine", accept] })).status).toBe(200);
    expect((await owner.api.delete(`/files/${id}/suggested-tags/${encodeURIComponent(dismiss)}`)).status).toBe(204);
    expect((await owner.api.delete(`/files/${id}/suggested-tags/${encodeURIComponent(dismiss)}`)).status).toBe(404);
    const after = (await owner.api.get(`/files/${id}`)).body;
    expect(after.tags).toEqual(["mine", accept]);
    expect(after.suggested_tags).not.toContain(accept);
    expect(after.suggested_tags).not.toContain(dismiss);
    // Dismissing needs edit; another organization's file is not found.
    expect((await (await owner.keyWith(["view"])).delete(`/files/${id}/suggested-tags/x`)).status).toBe(403);
    expect((await (await server.tenant()).api.delete(`/files/${id}/suggested-tags/${encodeURIComponent(after.suggested_tags[0] ?? "x")}`)).status).toBe(404);

    const quiet = new FormData();
    quiet.append("file", new File([sampleMd()], "quiet.md"));
    quiet.append("auto_describe", "false");
    const untouched = await processed(owner, (await owner.api.form("/files/upload", quiet)).body.image_id);
    expect([untouched.upload_description, untouched.tags, untouched.suggested_tags]).toEqual([null, [], []]);
  });

  test("a note's text, summary and tags reach the file's search entry in one write", async () => {
    // Every write of these columns re-indexes the whole text (the files_search_update trigger).
    // A table of the database, not a TEMP one: on PostgreSQL a temporary table is its connection's alone.
    const { sql } = server.ctx;
    const [setUp, tearDown] = forEngine(sql, [
      `CREATE TABLE search_writes (file_id TEXT);
       CREATE TRIGGER count_search_writes AFTER UPDATE OF title, filename, tags, user_description, upload_description, visible_text
         ON files BEGIN INSERT INTO search_writes (file_id) VALUES (new.id); END`,
      "DROP TRIGGER count_search_writes; DROP TABLE search_writes",
    ]);
    for (const statement of setUp!) await sql.run(statement);
    try {
      const form = new FormData();
      form.append("file", new File([sampleMd()], "one-write.md"));
      form.append("tags", "mine");
      const id = (await owner.api.form("/files/upload", form)).body.image_id;
      const file = await processed(owner, id);
      expect(file.upload_description).toBeTruthy();
      expect(file.tags).toEqual(["mine"]);
      expect(await sql.one("SELECT count(*) AS n FROM search_writes WHERE file_id = ?", [id])).toEqual({ n: 1 });
      // What that write indexed: the text and the summary.
      const found = async (q: string) => ((await owner.api.get(`/files?search=${encodeURIComponent(q)}`)).body.items as { id: string }[]).some((f) => f.id === id);
      expect(await found(file.extracted_text.split(/\W+/).find((w: string) => w.length > 6))).toBe(true);
    } finally {
      for (const statement of tearDown!) await sql.run(statement);
    }
  });

  test("a scanned PDF is read by OCR", async () => {
    const id = await uploadDoc(owner, await bytesOf(scannedPdf()), "scan.pdf");
    const file = await processed(owner, id);
    expect(file.text_extraction_status).toBe("completed");
    expect(file.extracted_text.toUpperCase()).toContain("SCANNED MAINTENANCE LOG");
    const page = (await owner.api.get(`/files/${id}/digitization/pages/1`)).body;
    expect(page.ocr).toBe(true);
    expect(page.element_count).toBeGreaterThan(0);
  });

  test("a scanned two-column page beside a diagram: the reader process asks the server's OCR to find the columns first", async () => {
    const id = await uploadDoc(owner, await bytesOf(scannedColumnsBesideDiagram()), "columns-scan.pdf");
    expect((await processed(owner, id)).text_extraction_status).toBe("completed");
    const page = (await owner.api.get(`/files/${id}/digitization/pages/1`)).body;
    const paragraphs = page.elements.filter((e: { type: string }) => e.type === "paragraph").map((e: { content: string }) => e.content);
    // Read as one block, the diagram's boxes come out as letters on the left column's lines.
    expect(paragraphs).toContain(SCAN_LEFT_COLUMN.join(" "));
    expect(paragraphs).toContain(SCAN_RIGHT_COLUMN.join(" "));
  });

  test("a corrupt PDF fails cleanly with a message", async () => {
    const id = await uploadDoc(owner, await bytesOf(corruptPdf()), "broken.pdf");
    const file = await processed(owner, id);
    expect(file.text_extraction_status).toBe("failed");
    const status = (await owner.api.get(`/files/${id}/processing-status`)).body;
    expect(status).toMatchObject({ document_id: id, document_type: "pdf", text_extraction_status: "failed", processing_status: "failed" });
    expect(status.error_message.length).toBeGreaterThan(5);
    expect((await owner.api.get(`/files/${id}/digitization`)).body.status).toBe("failed");
  });

  test("document endpoints answer 400 for images, 404 for unknown files; processing-status works for images", async () => {
    const image = await upload(owner, await photo(1, 300, 200), "p.jpg", { auto_describe: "false" });
    const id = image.body.image_id;
    for (const sub of ["text", "chunks", "digitization", "digitization/status", "digitization/pages/1"]) {
      const res = await owner.api.get(`/files/${id}/${sub}`);
      expect(res.status, sub).toBe(400);
      expect(res.body.detail).toContain("document");
    }
    const status = await owner.api.get(`/files/${id}/processing-status`);
    expect(status.status).toBe(200);
    expect(status.body.media_type).toBe("image");
    expect((await owner.api.get(`/files/${crypto.randomUUID()}/text`)).status).toBe(404);
    expect((await (await server.tenant()).api.get(`/files/${pdfId}/text`)).status).toBe(404);
  });

  test("deleting a document is 409 while extraction or embedding runs", async () => {
    const id = await uploadDoc(owner, await bytesOf(sampleTxt()), "busy.txt");
    // Settled first: an embedding job ending meanwhile would overwrite the status set below.
    await embedded(owner, id);
    for (const column of ["text_extraction_status", "embedding_status"]) {
      await server.ctx.sql.run(`UPDATE document_facts SET ${column} = 'processing' WHERE file_id = ?`, [id]);
      const res = await owner.api.delete(`/files/${id}`);
      expect(res.status, column).toBe(409);
      expect(res.body.detail).toContain("cannot be deleted");
      await server.ctx.sql.run(`UPDATE document_facts SET ${column} = 'completed' WHERE file_id = ?`, [id]);
    }
    expect((await owner.api.delete(`/files/${id}`)).status).toBe(200);
  });
});

describe("POST /files/search (hybrid, with the built-in text model)", () => {
  let tenant: Tenant;
  let reportId: string;
  let mdId: string;
  beforeAll(async () => {
    tenant = await server.tenant({ tier: "ENTERPRISE" });
    reportId = await uploadDoc(tenant, await bytesOf(reportPdf()), "report.pdf");
    mdId = await uploadDoc(tenant, await bytesOf(sampleMd()), "notes.md");
    await embedded(tenant, reportId);
    await embedded(tenant, mdId);
  });

  test("an exact identifier finds its chunk first; the response reports the signals used and each one's score", async () => {
    const res = await tenant.api.post("/files/search", { query: "VX-4471", limit: 5 });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.query).toBe("VX-4471");
    expect(res.body.results[0].content).toContain("VX-4471");
    expect(res.body.results[0].document_id).toBe(reportId);
    expect(res.body.results[0].similarity_score).toBeGreaterThan(0);
    expect(res.body.results[0].similarity_score).toBeLessThanOrEqual(1);
    expect(res.body.results[0].match.keyword_rank).toBe(1);
    expect(res.body.results[0].match.keyword_score).toBeGreaterThan(0);
    expect(res.body.results[0].match.vector_similarity).toBeGreaterThan(-1);
    // One result per document; total_count counts the whole ranking (both documents here).
    expect(res.body.total_count).toBe(2);
    expect(new Set(res.body.results.map((r: { document_id: string }) => r.document_id)).size).toBe(res.body.results.length);
    expect(res.body.search_time_ms).toBeGreaterThanOrEqual(0);
    expect(res.body.retrieval).toMatchObject({
      keyword: true,
      vector: true,
      vector_model: "use-lite-sif",
      vector_unavailable_reason: null,
      configured_model_unavailable_reason: null,
      // The built-in model's vector share (0.2), halved for a query word with digits, which a
      // text model cannot read (search.ts queryVectorWeight).
      weights: { keyword: 0.9, vector: 0.1 },
    });
    // The fused score is the weighted sum of the signals' scores normalized over this query's
    // candidates (the best of each counts 1), not a restated rank: the best keyword match holds
    // the keyword share whole, and its vector part adds what its cosine earns.
    const [first] = res.body.results;
    expect(first.similarity_score).toBeGreaterThanOrEqual(0.9);
    if (first.match.vector_rank === 1) expect(first.similarity_score).toBe(1);
  });

  test("a small document whose words the model knows is embedded as it is stored, with no embedding job", async () => {
    // notes.md's words are all known now (it was embedded before): its twin needs no model run.
    const twin = await uploadDoc(tenant, await bytesOf(sampleMd()), "twin.md");
    const job = await jobDone(tenant, (await tenant.api.get(`/files/uploads-status/${twin}`)).body.processing_ids[0]);
    const result = job.results[0];
    expect(result.embedding_job_id).toBeNull();
    expect(result.stages.embeddings.status).toBe("completed");
    // Done by the time its processing job is.
    expect((await tenant.api.get(`/files/${twin}/processing-status`)).body.embedding_status).toBe("completed");
    const chunks = (await tenant.api.get(`/files/${twin}/chunks?include_embeddings=true`)).body;
    expect(chunks.status_counts).toEqual({ completed: chunks.total_chunks, pending: 0, failed: 0 });
    const original = (await tenant.api.get(`/files/${mdId}/chunks?include_embeddings=true`)).body;
    // The same vectors its original got (stored as float32, compared loosely).
    expect(chunks.chunks[0].embedding.length).toBe(original.chunks[0].embedding.length);
    chunks.chunks[0].embedding.forEach((v: number, k: number) => expect(v).toBeCloseTo(original.chunks[0].embedding[k], 5));
    const jobs = await tenant.api.get("/jobs?type=document.embed&limit=100");
    expect(jobs.status).toBe(200);
    expect(jobs.body.items.map((j: { file_id: string }) => j.file_id)).not.toContain(twin);
    await tenant.api.delete(`/files/${twin}`);
  });

  test("mode keyword ranks by BM25 alone and says the vector signal was not used", async () => {
    const res = (await tenant.api.post("/files/search", { query: "VX-4471", mode: "keyword" })).body;
    expect(res.retrieval).toMatchObject({ keyword: true, vector: false, weights: { keyword: 1, vector: 0 } });
    expect(res.retrieval.vector_unavailable_reason).toContain("mode keyword");
    expect(res.results.map((r: { document_id: string }) => r.document_id)).toEqual([reportId]);
    expect(res.results[0].similarity_score).toBe(1);
    const vector = (await tenant.api.post("/files/search", { query: "VX-4471", mode: "vector" })).body;
    expect(vector.retrieval).toMatchObject({ keyword: false, vector: true });
    expect(vector.results.every((r: { match: { keyword_score: number | null } }) => r.match.keyword_score === null)).toBe(true);
  });

  test("document_ids scopes the search; other tenants and deleted documents are never searched", async () => {
    const scoped = (await tenant.api.post("/files/search", { query: "VX-4471", document_ids: [mdId] })).body.results;
    // Only the notes' chunks, none of which holds the identifier (they come from the vector signal).
    expect(scoped.length).toBeGreaterThan(0);
    for (const r of scoped) {
      expect(r.document_id).toBe(mdId);
      expect(r.content).not.toContain("VX-4471");
      expect(r.match.keyword_score).toBeNull();
    }
    const stranger = await server.tenant();
    expect((await stranger.api.post("/files/search", { query: "VX-4471" })).body.results).toEqual([]);
    const copy = await uploadDoc(tenant, await bytesOf(reportPdf()), "copy.pdf");
    await embedded(tenant, copy);
    const before = (await tenant.api.post("/files/search", { query: "VX-4471" })).body.results.map((r: { document_id: string }) => r.document_id);
    expect(before).toContain(copy);
    expect((await tenant.api.delete(`/files/${copy}`)).status).toBe(200);
    const after = (await tenant.api.post("/files/search", { query: "VX-4471" })).body.results.map((r: { document_id: string }) => r.document_id);
    expect(after).not.toContain(copy);
    expect(after).toContain(reportId);
  });

  test("similarity_threshold cuts on the cosine similarity; limit", async () => {
    const query = "valve inspection report findings";
    const all = (await tenant.api.post("/files/search", { query, limit: 100, document_ids: [reportId, mdId] })).body.results;
    expect(all.length).toBeGreaterThan(1);
    const top = (await tenant.api.post("/files/search", { query, limit: 1 })).body.results;
    expect(top).toHaveLength(1);
    const cut = 0.3;
    const strict = (await tenant.api.post("/files/search", { query, similarity_threshold: cut, document_ids: [reportId, mdId], limit: 100 })).body.results;
    expect(strict.length).toBeGreaterThan(0);
    expect(strict.length).toBeLessThan(all.length);
    expect(strict.every((r: { match: { vector_similarity: number } }) => r.match.vector_similarity >= cut)).toBe(true);
  });

  test("validation: 400 with detail", async () => {
    const bad = [
      {},
      { query: "" },
      { query: "   " },
      { query: "x".repeat(1001) },
      { query: "ok", limit: 0 },
      { query: "ok", limit: 101 },
      { query: "ok", similarity_threshold: 2 },
      { query: "ok", document_ids: ["not-a-uuid"] },
      { query: "ok", offset: -1 },
      { query: "ok", mode: "fuzzy" },
      { query: "ok", per_document: 0 },
    ];
    for (const body of bad) {
      const res = await tenant.api.post("/files/search", body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.detail).toBeString();
    }
  });
});

describe("POST /files/search semantics with the built-in model", () => {
  let tenant: Tenant;
  const docs = {} as Record<"lease" | "cafeteria" | "handbook" | "aero", string>;
  const LEASE = [
    "RESIDENTIAL LEASE",
    "",
    "RENT",
    "The tenant pays the monthly rent on the first day of each month by bank transfer.",
    "",
    "TERMINATION",
    "Either party may end this lease with sixty days written notice. The tenant may cancel early when the landlord fails to repair the heating.",
    "",
    "MAINTENANCE",
    "The landlord keeps the roof, the plumbing and the heating in good repair.",
  ].join("\n");
  beforeAll(async () => {
    tenant = await server.tenant({ tier: "ENTERPRISE" });
    const txt = (text: string) => new TextEncoder().encode(text);
    docs.lease = await uploadDoc(tenant, txt(LEASE), "lease.txt");
    docs.cafeteria = await uploadDoc(tenant, txt("The cafeteria serves hot lunches from noon until two o'clock. Vegetarian dishes and fresh fruit are on offer every day."), "cafeteria.txt");
    docs.handbook = await uploadDoc(tenant, txt("Staff handbook. Flexible working hours are offered to every employee after the probation period."), "handbook.txt");
    docs.aero = await uploadDoc(tenant, txt("Wind tunnel measurements of the shock wave and the sound it radiates from a supersonic nozzle."), "aero.txt");
    for (const id of Object.values(docs)) await embedded(tenant, id);
  });
  const search = async (body: Record<string, unknown>) => {
    const res = await tenant.api.post("/files/search", body);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body;
  };

  test("'when can the tenant terminate the lease' finds the Termination clause", async () => {
    const res = await search({ query: "when can the tenant terminate the lease", document_ids: [docs.lease] });
    expect(res.results[0].content).toContain("TERMINATION");
    expect(res.results[0].match.keyword_score).toBeGreaterThan(0);
    const anywhere = await search({ query: "when can the tenant terminate the lease" });
    expect(anywhere.results[0].document_id).toBe(docs.lease);
    expect(anywhere.results[0].content).toContain("TERMINATION");
  });

  test("a paraphrase sharing no word with the document ranks it above an unrelated one", async () => {
    const res = await search({ query: "renter wants to quit the apartment contract", mode: "vector" });
    const similarity = (id: string) => res.results.find((r: { document_id: string }) => r.document_id === id)?.match.vector_similarity;
    expect(res.results[0].document_id).toBe(docs.lease);
    expect(similarity(docs.lease)).toBeGreaterThan(similarity(docs.cafeteria) + 0.1);
    const hybrid = await search({ query: "renter wants to quit the apartment contract" });
    expect(hybrid.results[0].document_id).toBe(docs.lease);
    expect(hybrid.results[0].match.keyword_score).toBeNull();
  });

  test("stemming: 'flexibility' finds 'Flexible'; stop words do not match on their own", async () => {
    const res = await search({ query: "flexibility", mode: "keyword" });
    expect(res.results.map((r: { document_id: string }) => r.document_id)).toEqual([docs.handbook]);
    expect(res.results[0].match.keyword_score).toBeGreaterThan(0);
    // "the" and "of" are in every document; with a content word beside them only that word counts.
    const withStopWords = await search({ query: "the flexibility of the", mode: "keyword" });
    expect(withStopWords.results.map((r: { document_id: string }) => r.document_id)).toEqual([docs.handbook]);
  });

  test("hybrid search expands the keyword query from its best documents (the typed words stay); keyword mode does not", async () => {
    const res = await search({ query: "tenant heating repair" });
    expect(res.results[0].document_id).toBe(docs.lease);
    const { feedback_documents, terms } = res.retrieval.expansion;
    expect(feedback_documents).toBeGreaterThan(0);
    for (const word of ["tenant", "heating", "repair"]) expect(terms).toContainEqual(expect.objectContaining({ term: word, original: true }));
    expect(terms.some((t: { original: boolean }) => !t.original)).toBe(true);
    expect(terms.reduce((sum: number, t: { weight: number }) => sum + t.weight, 0)).toBeCloseTo(1, 2);
    // keyword_score is the BM25 of the expanded query, and the fused score is computed from it:
    // the best expanded-query match holds the keyword share whole, a chunk it misses at most the vector share.
    // A query without digits: the built-in model's whole share.
    expect(res.retrieval.weights).toEqual({ keyword: 0.8, vector: 0.2 });
    const { keyword: keywordShare, vector: vectorShare } = res.retrieval.weights;
    const best = Math.max(...res.results.map((r: { match: { keyword_score: number | null } }) => r.match.keyword_score ?? 0));
    for (const r of res.results) {
      if (r.match.keyword_score === best) expect(r.similarity_score).toBeGreaterThanOrEqual(keywordShare);
      if (r.match.keyword_score === null) expect(r.similarity_score).toBeLessThanOrEqual(vectorShare);
    }
    const keyword = await search({ query: "tenant heating repair", mode: "keyword" });
    expect(keyword.retrieval.expansion).toBeNull();
    expect(keyword.results[0].document_id).toBe(docs.lease);
  });

  test("a hyphenated query word matches its parts written apart", async () => {
    const res = await search({ query: "shock-sound", mode: "keyword" });
    expect(res.results.map((r: { document_id: string }) => r.document_id)).toEqual([docs.aero]);
  });

  test("a similarity cutoff returns nothing for an unrelated query", async () => {
    const unrelated = await search({ query: "medieval poetry and troubadour songs", similarity_threshold: 0.4 });
    expect(unrelated.results).toEqual([]);
    expect(unrelated.total_count).toBe(0);
    // Without the cutoff the same query still gets the library's nearest chunks, each with its low similarity.
    const uncut = await search({ query: "medieval poetry and troubadour songs" });
    expect(uncut.results.length).toBeGreaterThan(0);
    expect(uncut.results.every((r: { match: { vector_similarity: number } }) => r.match.vector_similarity < 0.4)).toBe(true);
    const related = await search({ query: "renter wants to quit the apartment contract", similarity_threshold: 0.4 });
    expect(related.results.map((r: { document_id: string }) => r.document_id)).toEqual([docs.lease]);
  });

  test("offset pages through the ranking; per_document returns more chunks of a document", async () => {
    const all = await search({ query: "lease lunch employee shock heating", limit: 100 });
    expect(all.total_count).toBe(4);
    const pages = [];
    for (let offset = 0; offset < 4; offset++) pages.push((await search({ query: "lease lunch employee shock heating", limit: 1, offset })).results[0].document_id);
    expect(pages).toEqual(all.results.map((r: { document_id: string }) => r.document_id));
    expect((await search({ query: "lease lunch employee shock heating", limit: 1, offset: 4 })).results).toEqual([]);
    const chunks = await search({ query: "heating repair", per_document: 10, document_ids: [docs.lease, docs.cafeteria] });
    expect(chunks.results.filter((r: { document_id: string }) => r.document_id === docs.lease).length).toBeGreaterThan(1);
  });
});

describe("vector search with an installed text model", () => {
  test("chunks are embedded in the background and the vector signal joins the ranking", async () => {
    const modelsDir = scratchDir("mediabox-models-");
    await buildFixtureEmbeddingModel(modelsDir);
    const other = await startExtraServer({ env: { MEDIABOX_MODELS_DIR: modelsDir, MEDIABOX_TEXT_EMBEDDING_MODEL: "all-MiniLM-L6-v2" } });
    const tenant = await other.tenant({ tier: "ENTERPRISE" });
    const id = await uploadDoc(tenant, await bytesOf(reportPdf()), "report.pdf");
    const summary = (await jobDone(tenant, (await tenant.api.get(`/files/uploads-status/${id}`)).body.processing_ids[0])).results[0];
    expect(summary.token_counts).toBe("tokenizer");
    const embedded = await jobDone(tenant, summary.embedding_job_id);
    expect(embedded.status).toBe("completed");
    const chunks = (await tenant.api.get(`/files/${id}/chunks?include_embeddings=true`)).body;
    expect(chunks.status_counts).toEqual({ completed: chunks.total_chunks, pending: 0, failed: 0 });
    expect(chunks.chunks[0].embedding.length).toBeGreaterThan(0);
    expect((await tenant.api.get(`/files/${id}/processing-status`)).body.embedding_status).toBe("completed");

    const res = (await tenant.api.post("/files/search", { query: "VX-4471 flange leak" })).body;
    expect(res.retrieval).toMatchObject({ keyword: true, vector: true, vector_model: "all-MiniLM-L6-v2", configured_model_unavailable_reason: null });
    expect(res.results[0].content).toContain("VX-4471");
    expect(res.results[0].match.vector_rank).not.toBeNull();
  });

  test("after the text model setting changes, a restart re-embeds every document with the new model", async () => {
    const modelsDir = scratchDir("mediabox-models-");
    await buildFixtureEmbeddingModel(modelsDir, { name: "model-a", dim: 16 });
    await buildFixtureEmbeddingModel(modelsDir, { name: "model-b", dim: 24 });
    const dataDir = scratchDir("mediabox-restart-");
    const first = await startExtraServer({ dataDir, env: { MEDIABOX_MODELS_DIR: modelsDir, MEDIABOX_TEXT_EMBEDDING_MODEL: "model-a" } });
    const tenant = await first.tenant({ tier: "ENTERPRISE" });
    const key = tenant.key;
    const id = await uploadDoc(tenant, new TextEncoder().encode(sampleMd()), "guide.md");
    const summary = (await jobDone(tenant, (await tenant.api.get(`/files/uploads-status/${id}`)).body.processing_ids[0])).results[0];
    expect((await jobDone(tenant, summary.embedding_job_id)).status).toBe("completed");
    const before = (await tenant.api.get(`/files/${id}/chunks?include_embeddings=true`)).body.chunks;
    expect(before.map((c: { embedding_model: string; embedding: number[] }) => [c.embedding_model, c.embedding.length])).toContainEqual(["model-a", 16]);
    await first.close();

    const second = await startExtraServer({ dataDir, env: { MEDIABOX_MODELS_DIR: modelsDir, MEDIABOX_TEXT_EMBEDDING_MODEL: "model-b" } });
    const api = new ApiClient(second.url, key);
    type Chunk = { embedding_model: string; embedding: number[] | null };
    const reembedded = await pollApi<{ chunks: Chunk[] }>(
      { api },
      `/files/${id}/chunks?include_embeddings=true`,
      (res) => res.body.chunks.every((c) => c.embedding_model === "model-b"),
      { what: "every chunk to be embedded again with model-b" },
    );
    const chunks = reembedded.body.chunks;
    expect(chunks.length).toBeGreaterThan(0);
    expect(chunks.map((c) => [c.embedding_model, c.embedding?.length])).toEqual(chunks.map(() => ["model-b", 24]));
    expect((await api.get(`/files/${id}/processing-status`)).body.embedding_status).toBe("completed");
    const search = (await api.post("/files/search", { query: sampleMd().split("\n").find((l) => l.length > 40)!.slice(0, 60) })).body;
    expect(search.retrieval).toMatchObject({ vector: true, vector_model: "model-b" });
    expect(search.results[0].match.vector_rank).not.toBeNull();
  });

  const realModel = join(SHARED_MINILM, "onnx", "model_quantized.onnx");
  test.skipIf(!existsSync(realModel))("paraphrased queries find the right chunk with the real model", async () => {
    const other = await startExtraServer({ env: { MEDIABOX_MODELS_DIR: resolve(SHARED_MINILM, ".."), MEDIABOX_TEXT_EMBEDDING_MODEL: "all-MiniLM-L6-v2" } });
    const tenant = await other.tenant({ tier: "ENTERPRISE" });
    const id = await uploadDoc(tenant, await bytesOf(reportPdf()), "report.pdf");
    const summary = (await jobDone(tenant, (await tenant.api.get(`/files/uploads-status/${id}`)).body.processing_ids[0])).results[0];
    await jobDone(tenant, summary.embedding_job_id);
    const res = (await tenant.api.post("/files/search", { query: "which part was swapped out during the repair" })).body;
    expect(res.results[0].content).toContain("VX-4471");
  });
  if (!existsSync(realModel)) console.warn(`skipped the paraphrase test: no real sentence-embedding model at ${realModel}`);
});

describe("POST /files/analyze", () => {
  test("waits and returns the completed shape with the text", async () => {
    const res = await upload(owner, await bytesOf(sampleMd()), "analyze.md", { timeout: "30" }, "/files/analyze");
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ status: "completed", filename: "analyze.md", document_type: "md", text_extraction_status: "completed", page_count: 2, job_id: null, poll_url: null });
    expect(res.body.extracted_text.length).toBeGreaterThan(20);
    expect(res.body.chunk_count).toBeGreaterThan(0);
    expect(res.body.size_bytes).toBeGreaterThan(0);
  });

  test("failed and skipped shapes", async () => {
    const failed = await upload(owner, await bytesOf(corruptPdf()), "bad.pdf", {}, "/files/analyze");
    expect(failed.body).toMatchObject({ status: "failed", text_extraction_status: "failed", extracted_text: null });
    expect(failed.body.error_message.length).toBeGreaterThan(5);
    const unique = new TextEncoder().encode(`${await sampleTxt()}\nrun ${crypto.randomUUID()}\n`);
    const first = await upload(owner, unique, "dup.txt", {}, "/files/analyze");
    const again = await upload(owner, unique, "dup-again.txt", { skip_duplicates: "true" }, "/files/analyze");
    expect(again.body).toMatchObject({ status: "skipped", document_id: first.body.document_id, skipped_existing_document_id: first.body.document_id });
  });

  test("async returns 202 and a job whose results describe the document", async () => {
    const res = await upload(owner, await bytesOf(reportPdf()), "async.pdf", {}, "/files/analyze/async");
    expect(res.status).toBe(202);
    expect(res.body.poll_url).toBe(`/api/v2/job/${res.body.job_id}`);
    const job = await jobDone(owner, res.body.job_id);
    expect(job.status).toBe("completed");
    expect(job.results[0]).toMatchObject({ document_id: res.body.document_id, text_extraction_status: "completed", page_count: 2 });
  });

  test("refuses images, files over 10 MB and bad timeouts before storing anything", async () => {
    const before = (await owner.api.get("/files?limit=1")).body.total_count;
    const image = await upload(owner, await photo(2, 200, 200), "x.jpg", {}, "/files/analyze");
    expect(image.status).toBe(400);
    const big = new TextEncoder().encode("word ".repeat((10 * 1024 ** 2) / 5 + 10));
    const tooBig = await upload(owner, big, "big.txt", {}, "/files/analyze");
    expect(tooBig.status).toBe(413);
    for (const timeout of ["4", "121", "abc"]) {
      const res = await upload(owner, await bytesOf(sampleTxt()), "t.txt", { timeout }, "/files/analyze");
      expect(res.status, timeout).toBe(400);
      expect(res.body.detail).toContain("timeout");
    }
    expect((await owner.api.get("/files?limit=1")).body.total_count).toBe(before);
  });
});

describe("purge", () => {
  test("purging a deleted document removes its pages, chunks, keyword index rows and vectors", async () => {
    const tenant = await server.tenant();
    const id = await uploadDoc(tenant, await bytesOf(reportPdf()), "purge.pdf");
    await embedded(tenant, id);
    const { sql } = server.ctx;
    const count = async (table: string, column: string, value: string | number) => (await sql.one<{ n: number }>(`SELECT count(*) AS n FROM ${table} WHERE ${column} = ?`, [value]))!.n;
    const seqs = await sql.all<{ seq: number; id: string }>("SELECT seq, id FROM document_chunks WHERE file_id = ?", [id]);
    expect(seqs.length).toBeGreaterThan(0);
    expect((await tenant.api.delete(`/files/${id}`)).status).toBe(200);
    clock.advance(31 * 24 * 3600 * 1000);
    expect(await purgeDeletedFiles(server.ctx)).toBeGreaterThanOrEqual(1);
    expect(await count("document_chunks", "file_id", id)).toBe(0);
    expect(await count("document_pages", "file_id", id)).toBe(0);
    for (const { seq } of seqs) {
      expect(await count("chunks_fts", "rowid", seq)).toBe(0);
      // PostgreSQL keeps the chunks' keyword index in tables of its own (migration 037).
      if (sql.dialect.name === "postgres") {
        expect(await count("chunk_keyword_rows", "seq", seq)).toBe(0);
        expect(await count("chunk_keyword_postings", "seq", seq)).toBe(0);
      }
    }
    for (const space of await server.ctx.spaces.all("text")) expect((await space.vectorsOf(seqs.map((s) => s.id))).size).toBe(0);
  });
});
