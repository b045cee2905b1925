/**
 * Documents built to exhaust a reader never take the appliance down. Through real HTTP: each bomb
 * (millions of paragraphs, zip entries inflating to 200 MB and 1 GB or lying about their size, a
 * 30000 x 30000 image, countless text blocks) is stored, fails for good with a clear reason on the
 * first attempt (no 500, no retry), and the server then answers /healthz and reads a normal
 * document. The reader's watchdog: a child over its memory budget or time limit is killed and the
 * document fails for good (also across a restart); a cancelled read kills the child; the child
 * never outlives the server, even one killed with SIGKILL.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { DocumentReader } from "../src/documents/document-reader.ts";
import { residentBytes } from "../src/documents/process-memory.ts";
import { DocumentReadError } from "../src/documents/types.ts";
import { DOCUMENT_LIMITS } from "../src/documents/document-limits.ts";
import { hugeImagePdf, inflationBombDocx, manyBlocksText, paragraphBombDocx } from "./support/document-bombs.ts";
import { reportDocx, reportPdf, sampleMd, scannedPdf } from "./support/documents.ts";
import { waitFor, processed } from "./support/polling.ts";
import { ApiClient, startTestServer, tempDir, type Tenant, type TestServer } from "./support/server.ts";
import { sharedDeployment } from "./support/suite-database.ts";
import { uploadFile } from "./support/uploads.ts";

const MiB = 1024 * 1024;
/** Each test stays far under this on an idle machine; the margin is for a busy one. */
const TIMEOUT = 120_000;
const noOcr = { recognize: async () => ({ text: "", regions: [] }) };

const upload = (tenant: Tenant, bytes: Uint8Array, filename: string) => uploadFile(tenant.api, bytes, filename);

/** The file's processing status and its processing job, once processing has finished. */
async function outcome(tenant: Tenant, id: string) {
  await processed(tenant, id);
  const status = (await tenant.api.get(`/files/${id}/processing-status`)).body;
  const jobId = (await tenant.api.get(`/files/uploads-status/${id}`)).body.processing_ids[0];
  const job = (await tenant.api.get(`/job/${jobId}`)).body;
  return { status, job };
}

/** Whether a process is gone (a zombie waiting to be reaped counts as gone: it holds no memory). */
const gone = (pid: number) => residentBytes(pid) === null;

/** Waits for a condition with the suite's deadline (see support/polling.ts). */
const until = (condition: () => boolean | Promise<boolean>, what: string) => waitFor(condition, { what, intervalMs: 25 });

describe("document bombs through HTTP", () => {
  let server: TestServer;
  let owner: Tenant;
  beforeAll(async () => {
    server = await startTestServer();
    owner = await server.tenant({ tier: "CUSTOM" });
  });
  afterAll(() => server.close());

  const bombs: [string, () => Promise<Uint8Array> | Uint8Array, string, RegExp][] = [
    ["a DOCX of 2 million tiny paragraphs", () => paragraphBombDocx(2_000_000), "paragraphs.docx", /^the DOCX was not read: word\/document\.xml is \d+ MB uncompressed/],
    ["a DOCX of 120,000 paragraphs (under every size limit)", () => paragraphBombDocx(120_000), "many-paragraphs.docx", /more than 100,000 paragraphs/],
    ["a 1 MB DOCX inflating to 1 GB", () => inflationBombDocx(1024 * MiB), "gigabyte.docx", /its entries inflate to 1,024 MB; the most Mediabox reads is 512 MB/],
    ["a DOCX inflating to 200 MB", () => inflationBombDocx(200 * MiB), "inflating.docx", /word\/document\.xml is 200 MB uncompressed/],
    ["a DOCX whose zip entry claims 1 MB and inflates to 40 MB", () => inflationBombDocx(40 * MiB, { declaredSize: MiB }), "liar.docx", /inflates to more than the 1,048,576 bytes its zip entry declares/],
    ["a PDF page holding one 30000 x 30000 image", () => hugeImagePdf(30_000), "gigapixel.pdf", /image of 30,000 x 30,000 pixels \(900 megapixels\), more than the 40 megapixels/],
    ["a text file of 300,000 one-word blocks", () => manyBlocksText(300_000), "blocks.txt", /more than 250,000 blocks/],
  ];
  for (const [name, make, filename, reason] of bombs) {
    test(`${name}: fails at once with the reason; the server serves on`, async () => {
      const id = await upload(owner, await make(), filename);
      const { status, job } = await outcome(owner, id);
      expect(status).toMatchObject({ processing_status: "failed", text_extraction_status: "failed" });
      expect(status.error_message).toMatch(reason);
      expect(status.error_message).not.toContain(server.dataDir);
      // Failed for good on its first attempt: never retried into the same failure.
      expect(job).toMatchObject({ status: "failed", attempts: 1 });
      expect(job.error).toMatch(reason);
      expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
    }, TIMEOUT);
  }

  test("after the bombs, a normal document still reads", async () => {
    const id = await upload(owner, await reportDocx(), "review.docx");
    const { status } = await outcome(owner, id);
    expect(status).toMatchObject({ processing_status: "completed", text_extraction_status: "completed" });
    expect((await owner.api.get(`/files/${id}`)).body.extracted_text).toContain("Quarterly Operations Review");
  }, TIMEOUT);
});

describe("answers never name server paths", () => {
  const modelsDir = tempDir("mediabox-models-");
  afterAll(() => rmSync(modelsDir, { recursive: true, force: true }));

  test("a missing OCR language is named relative to the models directory; a missing text model by no path", async () => {
    const server = await startTestServer({ env: { MEDIABOX_MODELS_DIR: modelsDir, MEDIABOX_OCR_LANGUAGES: "eng+deu" } });
    try {
      const owner = await server.tenant({ tier: "CUSTOM" });
      const id = await upload(owner, await scannedPdf(), "scan.pdf");
      const { status } = await outcome(owner, id);
      // The scanned page fails (no German data installed); the page error reaches the answer.
      expect(status.error_message).toContain("models/tesseract");
      expect(status.error_message).not.toContain(modelsDir);
      const pages = (await owner.api.get(`/files/${id}/digitization`)).body.pages;
      expect(pages[0].error_message).toContain("models/tesseract");
      expect(JSON.stringify(pages)).not.toContain(modelsDir);

      // The configured text model's folder is missing too; whatever a document's answers say of it, no path.
      const doc = await upload(owner, await reportDocx(), "review.docx");
      await outcome(owner, doc);
      const answers = JSON.stringify([
        (await owner.api.get(`/files/${doc}/processing-status`)).body,
        (await owner.api.get(`/files/${doc}`)).body,
      ]);
      expect(answers).not.toContain(modelsDir);
    } finally {
      await server.close();
    }
  }, TIMEOUT);
});

describe("the document reader's watchdog", () => {
  let reader: DocumentReader;
  afterAll(() => reader?.close());

  test("a child over its memory budget is killed and the read fails for good", async () => {
    // 48 MB is below what the reader process needs just to start: the first poll kills it.
    reader = new DocumentReader({ textThreadBytes: 0, memoryBudgetBytes: 48 * MiB, ocr: noOcr });
    const err = await reader.read(await reportDocx(), "docx").catch((e: Error) => e);
    expect(err).toBeInstanceOf(DocumentReadError);
    expect((err as Error).message).toBe(
      "reading the document needed more than 48 MB of memory (the limit set by MEDIABOX_DOCUMENT_MEMORY_MB), so it was stopped",
    );
    expect(reader.lastRead!.peakRssBytes).toBeGreaterThan(48 * MiB);
    // The next read gets a fresh child (and meets the same budget).
    const again = await reader.read(new TextEncoder().encode("hello\n"), "txt").catch((e: Error) => e);
    expect((again as Error).message).toContain("needed more than 48 MB");
    await reader.close();
  }, TIMEOUT);

  test("a read whose memory grows past the budget is killed mid-read", async () => {
    // 90,000 paragraphs pass every decode limit, but mammoth holds ~500 MB for them; the reader starts at ~150 MB.
    reader = new DocumentReader({ textThreadBytes: 0, memoryBudgetBytes: 300 * MiB, ocr: noOcr });
    expect((await reader.read(new TextEncoder().encode("warm up\n"), "txt")).document.text).toBe("warm up");
    const child = reader.pid!;
    const err = await reader.read(await paragraphBombDocx(90_000), "docx").catch((e: Error) => e);
    expect((err as Error).message).toContain("needed more than 300 MB of memory");
    expect(err).toBeInstanceOf(DocumentReadError);
    // Caught by the poll, not long after the budget was passed (measured in memory, not in time:
    // a loaded machine stretched the read to 21 s).
    expect(reader.lastRead!.peakRssBytes).toBeGreaterThan(300 * MiB);
    expect(reader.lastRead!.peakRssBytes).toBeLessThan(600 * MiB);
    await until(() => gone(child), "the killed child to exit");
    await reader.close();
  }, TIMEOUT);

  test("a child past its time limit is killed; a cancelled read kills the child; both spare the next read", async () => {
    // The limit is one second of the reader's CPU time, which a busy machine (the reader runs at
    // niceness 10) stretches in wall-clock time without reaching it for a tiny read; the slow read
    // (90,000 paragraphs) takes mammoth several seconds of CPU.
    reader = new DocumentReader({ textThreadBytes: 0, memoryBudgetBytes: 1024 * MiB, timeLimitMs: 1_000, pollMs: 20, ocr: noOcr });
    // Warm the child up with a tiny read, so the time limit meets the slow read itself.
    expect((await reader.read(new TextEncoder().encode("warm up\n"), "txt")).document.text).toBe("warm up");
    const slow = await paragraphBombDocx(90_000); // under the 100,000-paragraph limit; mammoth needs seconds for it
    const first = reader.pid!;
    const late = await reader.read(slow, "docx").catch((e: Error) => e);
    expect(late).toBeInstanceOf(DocumentReadError);
    expect((late as Error).message).toBe("reading the document took longer than 1 s, so it was stopped");
    await until(() => gone(first), "the timed-out child to exit");

    const controller = new AbortController();
    const reading = reader.read(slow, "docx", { signal: controller.signal }).catch((e: Error) => e);
    await until(() => reader.pid !== null && reader.pid !== first, "a new child");
    const second = reader.pid!;
    controller.abort();
    const cancelled = await reading;
    expect(cancelled).not.toBeInstanceOf(DocumentReadError);
    expect((cancelled as Error).message).toBe("extraction interrupted");
    await until(() => gone(second), "the cancelled child to exit");

    expect((await reader.read(new TextEncoder().encode("still reading\n"), "txt")).document.text).toBe("still reading");
    await reader.close();
  }, TIMEOUT);

  test("the server keeps nothing of a finished read: 20 reads of 5 MB leave its heap as it was", async () => {
    reader = new DocumentReader({ textThreadBytes: 0, memoryBudgetBytes: 1024 * MiB, ocr: noOcr });
    const text = new Uint8Array(5 * MiB).fill(0x61);
    for (let i = 80; i < text.length; i += 81) text[i] = 10;
    await reader.read(new TextEncoder().encode("warm up\n"), "txt");
    Bun.gc(true);
    const before = process.memoryUsage().heapUsed;
    for (let i = 0; i < 20; i++) await reader.read(text.slice(), "txt");
    Bun.gc(true);
    // Each read's bytes and result are garbage once it settles (100 MB went through).
    expect(process.memoryUsage().heapUsed - before).toBeLessThan(40 * MiB);
    await reader.close();
  }, TIMEOUT);

  test("the child exits when the process that owns it is killed with SIGKILL", async () => {
    const host = Bun.spawn([process.execPath, join(import.meta.dir, "support", "reader-host.ts")], { stdout: "pipe", stderr: "inherit" });
    try {
      const reader = host.stdout.getReader();
      let text = "";
      while (!text.includes("\n")) {
        const chunk = await reader.read();
        if (chunk.done) throw new Error(`the reader host exited early: ${text}`);
        text += new TextDecoder().decode(chunk.value);
      }
      const child = JSON.parse(text.split("\n")[0]!).child as number;
      expect(gone(child)).toBe(false);
      host.kill("SIGKILL");
      await host.exited;
      await until(() => gone(child), "the orphaned reader child to exit");
    } finally {
      host.kill("SIGKILL");
    }
  }, TIMEOUT);
});

describe("small plain text on the reading thread", () => {
  test("small text and Markdown are read and chunked on a thread (no reader process starts); larger text goes to the process", async () => {
    const reader = new DocumentReader({ memoryBudgetBytes: 1024 * MiB, ocr: noOcr });
    try {
      const md = await reader.read(new TextEncoder().encode("# Notes\n\nThe **pump** was [serviced](http://x) on Monday.\n"), "md", { chunking: { tokenizer: null, maxTokens: 200 } });
      expect(md.document.text).toContain("The pump was serviced on Monday.");
      expect(md.chunks!.length).toBe(1);
      expect(md.chunks![0]!.heading_hierarchy).toEqual(["Notes"]);
      const empty = await reader.read(new Uint8Array(0), "txt").catch((e: Error) => e);
      expect(empty).toBeInstanceOf(DocumentReadError);
      expect(reader.pid).toBeNull();
      const large = "A line of a long plain text file.\n".repeat(10_000); // ~340 KB
      expect((await reader.read(new TextEncoder().encode(large), "txt")).document.page_count).toBe(1);
      expect(reader.pid).not.toBeNull();
    } finally {
      await reader.close();
    }
  }, TIMEOUT);

  test("a summary is drafted where the text is read (the thread, or the process for a PDF), and only when asked", async () => {
    const reader = new DocumentReader({ memoryBudgetBytes: 1024 * MiB, ocr: noOcr });
    try {
      const note = new TextEncoder().encode(sampleMd());
      const plain = await reader.read(note, "md");
      expect(plain.summary).toBeNull();
      const onThread = await reader.read(note, "md", { summarize: true });
      expect(reader.pid).toBeNull();
      const draft = onThread.summary as { text: string; keyphrases: string[] };
      expect(onThread.document.text.replace(/\s+/g, " ")).toContain(draft.text.split(/(?<=[.!?])\s+/)[0]!.replace(/\s+/g, " "));
      expect(draft.keyphrases.length).toBeGreaterThan(0);

      const pdf = await reader.read(await reportPdf(), "pdf", { summarize: true });
      expect(reader.pid).not.toBeNull();
      const fromChild = pdf.summary as { text: string; keyphrases: string[] };
      expect(fromChild.keyphrases.length).toBeGreaterThan(0);
      expect(pdf.document.text.replace(/\s+/g, " ")).toContain(fromChild.text.split(/(?<=[.!?])\s+/)[0]!.replace(/\s+/g, " "));
    } finally {
      await reader.close();
    }
  }, TIMEOUT);

  test("Markdown openers without closers read in linear time", async () => {
    // Each "**" (or "[" , "~~") used to be matched against the rest of its paragraph: 64 KB took
    // 2.5 s, and these 256 KB ~40 s.
    const reader = new DocumentReader({ memoryBudgetBytes: 1024 * MiB, ocr: noOcr });
    try {
      for (const unit of ["**a ", "~~a ", "[a ", "*_[`"]) {
        const started = performance.now();
        const read = await reader.read(new TextEncoder().encode(unit.repeat(64 * 1024)), "md");
        expect(read.document.page_count).toBe(1);
        expect(performance.now() - started).toBeLessThan(10_000);
      }
    } finally {
      await reader.close();
    }
  }, TIMEOUT);
});

describe("text past the limits", () => {
  test("a document with more text than the most Mediabox keeps is refused with the reason, before it is parsed", async () => {
    const reader = new DocumentReader({ memoryBudgetBytes: 1024 * MiB, ocr: noOcr });
    try {
      const over = DOCUMENT_LIMITS.maxTextChars + 1_000;
      const refused = await reader.read(new TextEncoder().encode("ab ".repeat(Math.ceil(over / 3))), "txt").catch((e: Error) => e);
      expect(refused).toBeInstanceOf(DocumentReadError);
      expect((refused as Error).message).toMatch(/^the document was not read: it holds [\d,]+ characters of text; the most Mediabox keeps is 16,000,000$/);
    } finally {
      await reader.close();
    }
  }, TIMEOUT);

  test("the text-reading thread has the reader's time limit: past it the read fails for good and the thread is replaced", async () => {
    const reader = new DocumentReader({ memoryBudgetBytes: 1024 * MiB, ocr: noOcr, timeLimitMs: 1 });
    try {
      const slow = await reader.read(new TextEncoder().encode("A line of a plain text file.\n".repeat(8_000)), "txt").catch((e: Error) => e);
      expect(slow).toBeInstanceOf(DocumentReadError);
      expect((slow as Error).message).toMatch(/^reading the document took longer than [\d.]+ s and was stopped$/);
    } finally {
      await reader.close();
    }
    const next = new DocumentReader({ memoryBudgetBytes: 1024 * MiB, ocr: noOcr });
    try {
      expect((await next.read(new TextEncoder().encode("A short note."), "txt")).document.text).toBe("A short note.");
    } finally {
      await next.close();
    }
  }, TIMEOUT);
});

describe("a read killed by the watchdog, through the server", () => {
  const dataDir = tempDir();
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  test("fails the document on its first attempt, stays failed after a restart, and stop() leaves no child behind", async () => {
    let server = await startTestServer({ dataDir, env: { MEDIABOX_DOCUMENT_MEMORY_MB: "48" } });
    let fileId: string;
    let jobId: string;
    let key: string;
    try {
      const owner = await server.tenant({ tier: "CUSTOM" });
      key = owner.key;
      fileId = await upload(owner, await reportDocx(), "review.docx");
      const { status, job } = await outcome(owner, fileId);
      jobId = job.job_id;
      expect(status).toMatchObject({ processing_status: "failed", text_extraction_status: "failed" });
      expect(status.error_message).toBe("reading the document needed more than 48 MB of memory (the limit set by MEDIABOX_DOCUMENT_MEMORY_MB), so it was stopped");
      expect(job).toMatchObject({ status: "failed", attempts: 1 });
      expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
    } finally {
      await server.stop();
    }

    // A restart with the default budget: the job is finished, so nothing reads the bomb again.
    server = await startTestServer({ dataDir });
    try {
      const api = new ApiClient(server.url, key!);
      const job = (await api.get(`/job/${jobId!}`)).body;
      expect(job).toMatchObject({ status: "failed", attempts: 1 });
      expect((await api.get(`/files/${fileId!}/processing-status`)).body).toMatchObject({ processing_status: "failed", text_extraction_status: "failed" });

      // This server's own reader runs, and goes when the server stops.
      const owner = await server.tenant({ tier: "CUSTOM" });
      const id = await upload(owner, await reportDocx(), "second.docx");
      expect((await outcome(owner, id)).status.text_extraction_status).toBe("completed");
      // With a worker beside it, the reader is the worker's child: the api the test holds has none to look at.
      if (!sharedDeployment()) {
        const child = server.ctx.documentReader.pid!;
        expect(gone(child)).toBe(false);
        await server.stop();
        await until(() => gone(child), "the reader child to exit with the server");
      }
    } finally {
      await server.stop();
    }
  }, TIMEOUT);
});
