/**
 * Retrieval quality and indexing speed of document search, through the real ingest and search
 * path (a server in a child process, HTTP only).
 *
 *   bun scripts/bench/retrieval.ts            (or: npm run bench:retrieval)
 *
 * Uploads the Cranfield collection (1,400 aerodynamics abstracts, 225 queries with relevance
 * judgments; ../shared/datasets/retrieval/cranfield/) as text files, or any collection in BEIR's
 * layout given by MEDIABOX_BENCH_COLLECTION (corpus.jsonl with `_id` or `id`, `title`, `text`;
 * queries.jsonl; qrels.tsv or qrels/test.tsv; a title is put before a text that does not already
 * start with it; graded judgments count as gains in nDCG),
 * waits until every chunk is embedded (the server's default text model unless
 * MEDIABOX_TEXT_EMBEDDING_MODEL says otherwise), then runs every query through
 * POST /files/search in each mode (keyword, vector, hybrid; one result per document, 100 deep)
 * and prints nDCG@10 (the judgments' grades as gains), MRR@10 and Recall@100, indexing chunks/s, search
 * p50/p95, and /healthz p50/p99 measured every 20 ms while indexing ran (and for 20 s on the idle
 * server just before, the shared machine's own share).
 * MEDIABOX_BENCH_REUSE=<data dir> (one kept by MEDIABOX_BENCH_KEEP=1) skips the upload and
 * indexing and only runs the queries, for iterating on ranking; MEDIABOX_BENCH_QUERIES=n runs the
 * first n judged queries only. MEDIABOX_BENCH_WORDS_FROM=<data dir> starts from the common words'
 * and pieces' vectors an earlier run's server stored instead of preparing them again.
 * MEDIABOX_BENCH_REPEATS=n indexes the collection n more times after the first run (no queries),
 * each on a fresh data directory given the first run's prepared words, and prints the median
 * indexing figures of all runs: back-to-back runs of the same code differ by up to 20 %. Report
 * figures of full runs. MEDIABOX_BENCH_DOCS=n indexes the collection's first n documents only
 * and runs no query (issue 42's "1,000 documents index"). MEDIABOX_BENCH_BASELINE=<another
 * checkout> indexes the same documents with that checkout's server first (no query), for a
 * before/after in one run.
 * nDCG@10 is printed for the whole query set and for its fixed tuning and held-out halves
 * (scripts/bench/splits.ts, by the collection folder's name and query id), with hybrid's per-query
 * wins and losses against each signal alone in each half, its largest losses to keyword-only, and
 * the vector share each query got (MEDIABOX_BENCH_PER_QUERY=1 lists every query). With a folder
 * text model it then embeds the collection's first chunks in this process with 32 texts per ONNX
 * Runtime run and with the shipped RUN_BATCH, and prints the CPU per chunk of each
 * (MEDIABOX_BENCH_SKIP_RUN_BATCHES=1 skips it).
 * Then (unless MEDIABOX_BENCH_SKIP_PARITY is set) the ranking parity of issue 40: the indexed chunks
 * and vectors copied into a throwaway PostgreSQL with pgvector, every judged query run through the
 * same search code on SQLite and on PostgreSQL in this process, each mode's nDCG@10 printed for
 * both (target: within 1 %; retrieval-parity.ts).
 * Targets (issue 35): hybrid nDCG@10 >= 1.15x keyword, hybrid >= each signal alone, >= 100 chunks/s,
 * /healthz p99 < 100 ms. These are figures, not a test: the script exits 0 either way (2 when the
 * collection is absent).
 */
import { Database } from "bun:sqlite";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { cpuSeconds, threadCpuSeconds } from "./process-stats.ts";
import { loadavg, tmpdir } from "node:os";
import { basename, join, resolve } from "node:path";
import { run, spawnServer } from "../../test/support/process.ts";
import { BUILTIN_TEXT_MODEL, UseSifEmbedder } from "../../src/embeddings/use-sif-embedder.ts";
import { commonWords } from "../../src/embeddings/common-words.ts";
import { RUN_BATCH, TextEmbedder } from "../../src/embeddings/text-embedder.ts";
import { HALVES, halves } from "./splits.ts";
import { describeEventLoop, readEventLoop } from "./event-loop-figures.ts";
import { printRankingParity, type ParityInput } from "./retrieval-parity.ts";

const ROOT = resolve(import.meta.dir, "..", "..");
const DATASET = resolve(
  process.env.MEDIABOX_BENCH_COLLECTION ?? process.env.MEDIABOX_BENCH_CRANFIELD ?? join(ROOT, "..", "shared", "datasets", "retrieval", "cranfield"),
);
const MAIN = join(ROOT, "src", "main.ts");
/** The collection's name, which fixes its tuning and held-out halves (scripts/bench/splits.ts). */
const COLLECTION = basename(DATASET);
const UPLOADS_AT_ONCE = 2;
const BATCH = 50;
/** Seconds /healthz is probed on the idle server before indexing. */
const IDLE_PROBE_SECONDS = 20;
/** Chunks the text model embeds in this process to compare ONNX Runtime run sizes. */
const RUN_BATCH_SAMPLE = 192;

interface Doc { id: string; title: string; text: string }
interface Query { id: string; text: string }
/** A query's judged-relevant documents and their grades (1 in a binary collection). */
type Judgments = Map<string, number>;

/** BEIR names ids `_id`; the Cranfield conversion here `id`. */
const idOf = (record: { _id?: unknown; id?: unknown }) => String(record._id ?? record.id);

/** Letters and digits, lower case: a title repeated in the text may differ from it in spacing and punctuation. */
const bare = (s: string) => s.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, "");

/** What is uploaded for a document: its text, after its title unless the text starts with it (Cranfield's repeats it). */
function contentOf(doc: Doc): string {
  const title = doc.title.trim();
  const text = doc.text.trim();
  if (!title || bare(text).startsWith(bare(title).slice(0, 30))) return text || title;
  return text ? `${title}\n\n${text}` : title;
}

function load(): { docs: Doc[]; queries: Query[]; qrels: Map<string, Judgments> } {
  const lines = (file: string) => readFileSync(join(DATASET, file), "utf8").split("\n").filter((l) => l.trim());
  const docs = lines("corpus.jsonl").map((l) => {
    const record = JSON.parse(l);
    return { id: idOf(record), title: String(record.title ?? ""), text: String(record.text ?? "") };
  });
  const queries = lines("queries.jsonl").map((l) => {
    const record = JSON.parse(l);
    return { id: idOf(record), text: String(record.text) };
  });
  const qrels = new Map<string, Judgments>();
  const qrelsFile = existsSync(join(DATASET, "qrels.tsv")) ? "qrels.tsv" : join("qrels", "test.tsv");
  for (const line of lines(qrelsFile).slice(1)) {
    const [q, d, grade] = line.split("\t");
    if (!(Number(grade) > 0)) continue;
    if (!qrels.has(q!)) qrels.set(q!, new Map());
    qrels.get(q!)!.set(d!, Number(grade));
  }
  return { docs, queries, qrels };
}

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
};

function score(ranked: string[], relevant: Judgments): { ndcg: number; mrr: number; recall: number } {
  let dcg = 0;
  ranked.slice(0, 10).forEach((d, i) => (dcg += (relevant.get(d) ?? 0) / Math.log2(i + 2)));
  let ideal = 0;
  [...relevant.values()].sort((a, b) => b - a).slice(0, 10).forEach((gain, i) => (ideal += gain / Math.log2(i + 2)));
  const first = ranked.slice(0, 10).findIndex((d) => relevant.has(d));
  return { ndcg: dcg / ideal, mrr: first >= 0 ? 1 / (first + 1) : 0, recall: ranked.slice(0, 100).filter((d) => relevant.has(d)).length / relevant.size };
}

async function main(): Promise<void> {
  if (!existsSync(join(DATASET, "corpus.jsonl"))) {
    console.error(`The collection is not there: ${DATASET}/corpus.jsonl is missing.\n` +
      "Point MEDIABOX_BENCH_COLLECTION at a folder holding corpus.jsonl, queries.jsonl and qrels.tsv or qrels/test.tsv (see ../shared/datasets/README.md). Nothing was measured.");
    process.exit(2);
  }
  const { docs: all, queries, qrels } = load();
  const docs = all.slice(0, Number(process.env.MEDIABOX_BENCH_DOCS) || undefined);
  const indexOnly = docs.length < all.length;
  const reuse = process.env.MEDIABOX_BENCH_REUSE;
  if (reuse) return void (await parityOf(await measure(resolve(reuse), docs, queries, qrels, { reused: true })));
  const root = mkdtempSync(join(process.env.MEDIABOX_BENCH_DIR ?? tmpdir(), "mediabox-bench-retrieval-"));
  const dataDir = join(root, "data");
  try {
    const baseline = process.env.MEDIABOX_BENCH_BASELINE;
    if (baseline) {
      console.log(`-- baseline: ${resolve(baseline)}`);
      await measure(join(root, "baseline"), docs, queries, qrels, { wordsFrom: process.env.MEDIABOX_BENCH_WORDS_FROM, indexOnly: true, main: join(resolve(baseline), "src", "main.ts") });
      rmSync(join(root, "baseline"), { recursive: true, force: true });
      console.log("-- this checkout");
    }
    const runs = [await measure(dataDir, docs, queries, qrels, { wordsFrom: process.env.MEDIABOX_BENCH_WORDS_FROM, indexOnly })];
    await parityOf(runs[0]!);
    const repeats = Number(process.env.MEDIABOX_BENCH_REPEATS) || 0;
    for (let i = 1; i <= repeats; i++) {
      const again = join(root, `repeat-${i}`);
      console.log(`-- repeat ${i} of ${repeats}`);
      runs.push(await measure(again, docs, queries, qrels, { wordsFrom: dataDir, indexOnly: true }));
      rmSync(again, { recursive: true, force: true });
    }
    if (repeats) {
      const median = (pick: (r: IndexingFigures) => number) => percentile(runs.map(pick), 50);
      console.log(`median of ${runs.length} indexing runs: ${median((r) => r.chunksPerSecond).toFixed(1)} chunks/s end to end ` +
        `(${runs.map((r) => r.chunksPerSecond.toFixed(0)).join(", ")}; target >= 100), ` +
        `event loop ${median((r) => r.eventLoopMsPerDocument).toFixed(1)} ms a document, /healthz p99 ${median((r) => r.healthP99).toFixed(1)} ms`);
    }
  } finally {
    if (process.env.MEDIABOX_BENCH_KEEP) console.log(`kept ${dataDir}`);
    else rmSync(root, { recursive: true, force: true });
  }
}

/** Waits for the server to prepare its common words (once per data directory), and says how long it took. */
async function awaitVocabulary(url: string, words: string): Promise<void> {
  const started = performance.now();
  const figure = (text: string, name: string) => Number(text.split("\n").find((l) => l.startsWith(`${name} `))?.split(" ").at(-1) ?? NaN);
  for (;;) {
    const text = await (await fetch(`${url}/metrics`)).text();
    const pending = figure(text, "mediabox_text_vocabulary_pending_words");
    if (pending === 0 || Number.isNaN(pending)) {
      const prepared = figure(text, 'mediabox_text_model_words_computed{purpose="vocabulary"}');
      console.log(`common words prepared before indexing: ${prepared} (MEDIABOX_TEXT_VOCABULARY_WORDS=${words}) in ${((performance.now() - started) / 1000).toFixed(1)} s`);
      return;
    }
    await Bun.sleep(500);
  }
}

interface IndexingFigures {
  chunksPerSecond: number;
  eventLoopMsPerDocument: number;
  healthP99: number;
  /** What the SQLite / PostgreSQL ranking parity needs, once the server has stopped (runs with queries). */
  parity?: ParityInput;
}

/** The same queries through the same search code on SQLite and on PostgreSQL (retrieval-parity.ts), unless MEDIABOX_BENCH_SKIP_PARITY is set. */
async function parityOf(figures: IndexingFigures): Promise<void> {
  if (figures.parity && !process.env.MEDIABOX_BENCH_SKIP_PARITY) await printRankingParity(figures.parity);
}

/**
 * Indexes the collection into `dataDir` (unless `reused`, which holds it already) and runs the
 * queries (unless `indexOnly`); returns the indexing figures.
 */
async function measure(
  dataDir: string, docs: Doc[], queries: Query[], qrels: Map<string, Judgments>,
  { reused = false, wordsFrom, indexOnly = false, main: entry = MAIN }: { reused?: boolean; wordsFrom?: string; indexOnly?: boolean; main?: string } = {},
): Promise<IndexingFigures> {
  const cli = (...args: string[]) => run([process.execPath, entry, ...args, "--data-dir", dataDir]);
  if (!reused && (await cli("orgs", "create", "bench", "--tier", "CUSTOM")).exitCode !== 0) throw new Error("could not create the org");
  const key = (await cli("keys", "create", "--org", "bench")).stdout.trim();
  if (wordsFrom && !reused) {
    // For iterating: the common words an earlier run's server prepared, instead of preparing them again.
    const db = new Database(join(dataDir, "mediabox.db"));
    db.run("ATTACH DATABASE ? AS earlier", [join(resolve(wordsFrom), "mediabox.db")]);
    // Only the common words: the earlier run's server also stored the collection's own words.
    const list = JSON.stringify(commonWords(Number(process.env.MEDIABOX_TEXT_VOCABULARY_WORDS ?? 100_000)));
    db.run("INSERT OR IGNORE INTO text_word_vectors SELECT * FROM earlier.text_word_vectors WHERE word IN (SELECT value FROM json_each(?))", [list]);
    const hasPieces = db.query("SELECT 1 FROM earlier.sqlite_master WHERE name = 'text_piece_vectors'").get();
    if (hasPieces) db.run("INSERT OR IGNORE INTO text_piece_vectors SELECT * FROM earlier.text_piece_vectors");
    db.close();
  }
  // The server's default: the built-in model prepares its common words after start (set
  // MEDIABOX_TEXT_VOCABULARY_WORDS=0 to index with every word new to the model).
  const vocabularyWords = process.env.MEDIABOX_TEXT_VOCABULARY_WORDS ?? "100000";
  const server = await spawnServer([process.execPath, ...(process.env.MEDIABOX_BENCH_BUN_FLAGS?.split(" ").filter(Boolean) ?? []), entry, "serve"], {
    // The server's default text model unless MEDIABOX_TEXT_EMBEDDING_MODEL names one ("" = the default).
    env: { MEDIABOX_DATA_DIR: dataDir, MEDIABOX_LOG_LEVEL: "info", MEDIABOX_TEXT_VOCABULARY_WORDS: vocabularyWords, MEDIABOX_TEXT_EMBEDDING_MODEL: process.env.MEDIABOX_TEXT_EMBEDDING_MODEL ?? "" },
  });
  const headers = { authorization: `Bearer ${key}` };
  const api = server.url + "/api/v2";
  try {
    if (!reused) await awaitVocabulary(server.url, vocabularyWords);
    // The same probe on the idle server first: on a shared machine the slow probes while indexing
    // are partly the machine's (every thread waits for a core), and this says how much.
    const idle = reused ? null : await probeIdle(server.url, IDLE_PROBE_SECONDS);
    // /healthz every 20 ms while indexing runs, from a thread of its own: the bench's own uploads
    // and progress reads never delay a probe and count as the server's stall.
    const prober = new Worker(new URL("./healthz-prober.ts", import.meta.url));
    const probed = new Promise<{ latencies: number[]; at: number[] }>((done) => (prober.onmessage = (event) => done(event.data)));
    prober.postMessage({ url: server.url, times: true });
    const loopBefore = await readEventLoop(server.url);
    const started = performance.now();
    const cpuBefore = cpuSeconds(server.proc.pid);
    const threadsBefore = threadCpuSeconds(server.proc.pid);
    const clientBefore = process.cpuUsage();
    // Batch uploads (BATCH files a request), a few at once: one request per file would meet the
    // tier's rate limit long before the collection is in.
    // Files are named by their place in the corpus (ids may hold characters no filename should).
    const batches: number[][] = [];
    if (!reused) for (let i = 0; i < docs.length; i += BATCH) batches.push(Array.from({ length: Math.min(BATCH, docs.length - i) }, (_, k) => i + k));
    let next = 0;
    let sent = 0;
    await Promise.all(
      Array.from({ length: UPLOADS_AT_ONCE }, async () => {
        while (next < batches.length) {
          const batch = batches[next++]!;
          const form = new FormData();
          for (const index of batch) {
            // A few Cranfield abstracts are empty: their title stands in.
            const content = contentOf(docs[index]!);
            if (content) form.append("files", new File([content], `doc-${index}.txt`, { type: "text/plain" }));
            if (content) sent++;
          }
          for (;;) {
            const res = await fetch(`${api}/files/upload/batch`, { method: "POST", headers, body: form });
            const body = await res.text();
            if (res.status === 429) {
              await Bun.sleep(1000 * Number(res.headers.get("retry-after") ?? 5));
              continue;
            }
            if (res.status >= 300) throw new Error(`batch upload: ${res.status} ${body}`);
            break;
          }
        }
      }),
    );
    const uploaded = performance.now();
    // Progress is read from the database (read-only): polling 1,400 files over HTTP would load the server under test.
    const db = new Database(join(dataDir, "mediabox.db"), { readonly: true });
    let chunks = 0;
    let extracted: number | null = null;
    // A baseline checkout from before document facts had their own table keeps them on the files row.
    const facts = db.query("SELECT 1 FROM sqlite_master WHERE name = 'document_facts'").get()
      ? "files f JOIN document_facts d ON d.file_id = f.id"
      : "files f JOIN files d ON d.id = f.id";
    for (const deadline = Date.now() + 30 * 60_000; ; await Bun.sleep(200)) {
      const row = db
        .query<{ docs: number; pending: number; chunks: number; stored: number }, []>(
          `SELECT (SELECT count(*) FROM ${facts} WHERE f.media_type = 'document' AND d.text_extraction_status IN ('completed','failed')) AS docs,
                  (SELECT count(*) FROM document_chunks WHERE embedding_status = 'pending') AS pending,
                  (SELECT count(*) FROM document_chunks) AS chunks,
                  (SELECT count(*) FROM files WHERE media_type = 'document') AS stored`,
        )
        .get()!;
      chunks = row.chunks;
      if (reused) sent = row.stored;
      if (extracted === null && row.stored >= sent && row.docs >= sent) extracted = performance.now();
      if (row.stored >= sent && row.docs >= sent && row.pending === 0) break;
      if (Date.now() > deadline) throw new Error(`indexing did not finish in 30 minutes: ${JSON.stringify(row)}`);
    }
    const indexed = performance.now();
    const cpuAfter = cpuSeconds(server.proc.pid);
    const loopAfter = await readEventLoop(server.url);
    if (process.env.MEDIABOX_BENCH_THREADS) {
      // While indexing ran; threads that ended meanwhile are left out.
      const threads = [...threadCpuSeconds(server.proc.pid)].map(([name, s]): [string, number] => [name, s - (threadsBefore.get(name) ?? 0)]).sort((a, b) => b[1] - a[1]);
      const client = process.cpuUsage(clientBefore);
      console.log(`server CPU by thread while indexing: ${threads.filter(([, s]) => s >= 0.05).map(([name, s]) => `${name} ${s.toFixed(1)} s`).join(", ")}; ` +
        `this client: ${((client.user + client.system) / 1e6).toFixed(1)} s`);
    }
    prober.postMessage("stop");
    const { latencies: health, at: probedAt } = await probed;
    prober.terminate();
    /** Seconds into indexing at which a probe took over 50 ms, and whether text extraction was still running. */
    const epochStart = Date.now() - (performance.now() - started);
    const slowAt = health.flatMap((ms, i) => (ms > 50 ? [(probedAt[i]! - epochStart) / 1000] : []));
    const extractionEnded = ((extracted ?? indexed) - started) / 1000;
    const byFile = new Map(db.query<{ id: string; filename: string }, []>("SELECT id, filename FROM files").all().map((f) => [f.id, docs[Number(f.filename.replace(/^doc-|\.txt$/g, ""))]?.id]));
    const failed = db.query<{ n: number }, []>("SELECT count(*) AS n FROM document_chunks WHERE embedding_status = 'failed'").get()!.n;
    const model = db.query<{ m: string | null }, []>("SELECT max(embedding_model) AS m FROM document_chunks").get()!.m;
    // Time during which at least one embedding job ran (they run side by side): the text model's
    // own rate, apart from text extraction, which runs before it in each document's processing job.
    const spans = db
      .query<{ a: number; b: number }, []>(
        "SELECT julianday(started_at) * 86400 AS a, julianday(finished_at) * 86400 AS b FROM jobs WHERE queue = 'document.embed' AND status = 'completed' ORDER BY a",
      )
      .all();
    let embedSeconds = 0;
    let reach = -Infinity;
    for (const { a, b } of spans) {
      if (b > reach) embedSeconds += b - Math.max(a, reach);
      reach = Math.max(reach, b);
    }
    const jobChunks = db
      .query<{ n: number }, []>(
        "SELECT count(*) AS n FROM document_chunks WHERE file_id IN (SELECT json_extract(payload, '$.fileId') FROM jobs WHERE queue = 'document.embed')",
      )
      .get()!.n;
    db.close();
    const seconds = (indexed - started) / 1000;
    console.log(`indexed ${docs.length} documents, ${chunks} chunks (${failed} failed) with ${model} in ${seconds.toFixed(1)} s: ` +
      `${(chunks / seconds).toFixed(1)} chunks/s (uploads took ${((uploaded - started) / 1000).toFixed(1)} s, ` +
      `text extraction and chunking ended after ${(((extracted ?? indexed) - started) / 1000).toFixed(1)} s)`);
    // Small documents whose words the model knows are embedded as they are stored, with no job.
    console.log(`embedding jobs: ${spans.length} of ${docs.length} documents had one; ` +
      (spans.length ? `${embedSeconds.toFixed(1)} s busy, ${(jobChunks / embedSeconds).toFixed(1)} chunks/s` : "none ran"));
    const main = cpuAfter.main - cpuBefore.main;
    if (!reused) {
      const total = cpuAfter.total - cpuBefore.total;
      const wall = (indexed - started) / 1000;
      console.log(`server CPU while indexing: ${total.toFixed(1)} s in all threads (${((total / chunks) * 1000).toFixed(1)} ms a chunk: ` +
        `${(chunks / total).toFixed(0)} chunks/s on one free core), ${main.toFixed(1)} s on the event loop (${((main / wall) * 100).toFixed(0)} % busy; ${((main / docs.length) * 1000).toFixed(1)} ms a document)`);
    }
    if (idle) console.log(`/healthz on the idle server for ${IDLE_PROBE_SECONDS} s before indexing: p50 ${percentile(idle, 50).toFixed(1)} ms, p99 ${percentile(idle, 99).toFixed(1)} ms (${idle.length} probes; the machine's share of what follows)`);
    console.log(`/healthz while indexing: p50 ${percentile(health, 50).toFixed(1)} ms, p99 ${percentile(health, 99).toFixed(1)} ms (${health.length} probes; target p99 < 100 ms)` +
      (slowAt.length ? `; ${slowAt.length} over 50 ms (${slowAt.filter((t) => t <= extractionEnded).length} while text was still extracted and chunked, ` +
        `the rest while only embedding ran), the first at ${slowAt.slice(0, 10).map((t) => t.toFixed(1)).join(", ")} s into indexing` : ""));
    console.log(`the server's event loop while indexing: ${describeEventLoop(loopBefore, loopAfter)}`);
    console.log(`indexing ${docs.length} documents: ${(chunks / seconds).toFixed(1)} chunks/s, /healthz p99 ${percentile(health, 99).toFixed(1)} ms ` +
      `(targets: >= 100 chunks/s, p99 < 100 ms (issue 35), < 50 ms (issue 42)); load average ${loadavg().map((l) => l.toFixed(1)).join(" ")}`);

    const figures: IndexingFigures = {
      chunksPerSecond: chunks / seconds,
      eventLoopMsPerDocument: (main / docs.length) * 1000,
      healthP99: percentile(health, 99),
    };
    if (indexOnly) return figures;
    const judged = queries.filter((q) => qrels.has(q.id)).slice(0, Number(process.env.MEDIABOX_BENCH_QUERIES) || undefined);
    const half = halves(COLLECTION, judged.map((q) => q.id));
    const results: Record<string, { ndcg: number; mrr: number; recall: number }> = {};
    /** The vector share hybrid search gave each query. */
    const weights = new Map<string, number>();
    /** nDCG@10 of each query, by mode. */
    const perQuery: Record<string, Map<string, number>> = {};
    for (const mode of ["keyword", "vector", "hybrid"] as const) {
      const times: number[] = [];
      const sum = { ndcg: 0, mrr: 0, recall: 0 };
      perQuery[mode] = new Map();
      for (const q of judged) {
        let res: Response;
        let t0: number;
        for (;;) {
          t0 = performance.now();
          res = await fetch(`${api}/files/search`, {
            method: "POST",
            headers: { ...headers, "content-type": "application/json" },
            body: JSON.stringify({ query: q.text, limit: 100, mode }),
          });
          if (res.status !== 429) break;
          // The organization's rate limit (requests a minute): wait the time the server names, untimed.
          await Bun.sleep(1000 * Number(res.headers.get("retry-after") ?? 5));
        }
        const body = (await res.json()) as { results?: { document_id: string }[]; retrieval?: { vector: boolean; weights: { vector: number } } };
        if (mode === "hybrid") weights.set(q.id, body.retrieval!.weights.vector);
        times.push(performance.now() - t0);
        if (res.status !== 200) throw new Error(`query ${q.id}: ${res.status} ${JSON.stringify(body)}`);
        if (mode !== "keyword" && !body.retrieval?.vector) throw new Error(`mode ${mode} ran without vectors: ${JSON.stringify(body.retrieval)}`);
        const s = score(body.results!.map((r) => byFile.get(r.document_id)!), qrels.get(q.id)!);
        perQuery[mode]!.set(q.id, s.ndcg);
        sum.ndcg += s.ndcg;
        sum.mrr += s.mrr;
        sum.recall += s.recall;
      }
      const n = judged.length;
      results[mode] = { ndcg: sum.ndcg / n, mrr: sum.mrr / n, recall: sum.recall / n };
      const byHalf = HALVES.map((h) => {
        const ids = judged.filter((q) => half.get(q.id) === h).map((q) => perQuery[mode]!.get(q.id)!);
        return `${h} ${(ids.reduce((a, b) => a + b, 0) / ids.length).toFixed(3)}`;
      }).join(", ");
      console.log(`${mode.padEnd(8)} nDCG@10 ${results[mode]!.ndcg.toFixed(3)} (${byHalf})  MRR@10 ${results[mode]!.mrr.toFixed(3)}  Recall@100 ${results[mode]!.recall.toFixed(3)}   ` +
        `search p50 ${percentile(times, 50).toFixed(1)} ms, p95 ${percentile(times, 95).toFixed(1)} ms (${n} queries)`);
    }
    for (const h of HALVES) {
      const ids = judged.filter((q) => half.get(q.id) === h).map((q) => q.id);
      for (const other of ["keyword", "vector"] as const) {
        const diff = ids.map((id) => perQuery.hybrid!.get(id)! - perQuery[other]!.get(id)!);
        console.log(`hybrid vs ${other} per query, ${h} half: ${diff.filter((d) => d > 1e-9).length} wins, ${diff.filter((d) => d < -1e-9).length} losses, ${diff.filter((d) => Math.abs(d) <= 1e-9).length} ties of ${ids.length}`);
      }
      const losses = ids.map((id) => ({ id, keyword: perQuery.keyword!.get(id)!, hybrid: perQuery.hybrid!.get(id)! })).filter((q) => q.hybrid < q.keyword - 1e-9).sort((a, b) => a.hybrid - a.keyword - (b.hybrid - b.keyword));
      console.log(`  largest losses to keyword (${h}): ${losses.slice(0, 8).map((q) => `q${q.id} ${q.keyword.toFixed(2)}->${q.hybrid.toFixed(2)} (vector share ${weights.get(q.id)})`).join(", ") || "none"}`);
    }
    const shares = [...weights.values()].reduce((m, w) => m.set(w, (m.get(w) ?? 0) + 1), new Map<number, number>());
    console.log(`hybrid's vector share per query: ${[...shares].map(([w, n]) => `${w} for ${n} queries`).join(", ")}`);
    if (process.env.MEDIABOX_BENCH_PER_QUERY) {
      for (const q of judged) console.log(`  q${q.id} ${half.get(q.id)} keyword ${perQuery.keyword!.get(q.id)!.toFixed(3)} vector ${perQuery.vector!.get(q.id)!.toFixed(3)} hybrid ${perQuery.hybrid!.get(q.id)!.toFixed(3)}`);
    }
    // The built-in model's own rate in this process, apart from the job queue and text extraction:
    // every document once with an empty word cache (each new word is a USE run), then again warm.
    if (!reused && model === BUILTIN_TEXT_MODEL) {
      const builtin = new UseSifEmbedder();
      const texts = docs.map(contentOf).filter(Boolean);
      for (const pass of ["cold", "warm"]) {
        const t0 = performance.now();
        for (let i = 0; i < texts.length; i += 256) await builtin.embed(texts.slice(i, i + 256));
        console.log(`${BUILTIN_TEXT_MODEL} in-process, ${pass} word cache: ${(texts.length / ((performance.now() - t0) / 1000)).toFixed(0)} documents/s`);
      }
      await builtin.close();
    }
    if (model && model !== BUILTIN_TEXT_MODEL && !process.env.MEDIABOX_BENCH_SKIP_RUN_BATCHES) await compareRunBatches(model, dataDir);
    const { keyword, vector, hybrid } = results as Record<"keyword" | "vector" | "hybrid", { ndcg: number }>;
    console.log(`hybrid / keyword (textbook BM25 with Porter stemming: FTS5's bm25, k1 1.2, b 0.75) nDCG@10: ${(hybrid.ndcg / keyword.ndcg).toFixed(3)}x (target >= 1.15x); ` +
      `hybrid >= each alone: ${hybrid.ndcg >= keyword.ndcg && hybrid.ndcg >= vector.ndcg ? "yes" : "NO"}`);
    if (model) {
      figures.parity = {
        databasePath: join(dataDir, "mediabox.db"), model, modelsDir: process.env.MEDIABOX_MODELS_DIR ?? join(ROOT, "models"), queries: judged, half,
        score: (queryId, fileIds) => score(fileIds.map((f) => byFile.get(f)!), qrels.get(queryId)!).ndcg,
      };
    }
    return figures;
  } finally {
    await server.stop("SIGTERM");
  }
}

/** /healthz latencies (ms) probed every 20 ms for `seconds` from a thread of its own. */
async function probeIdle(url: string, seconds: number): Promise<number[]> {
  const prober = new Worker(new URL("./healthz-prober.ts", import.meta.url));
  const probed = new Promise<number[]>((done) => (prober.onmessage = (event) => done(event.data)));
  prober.postMessage({ url });
  await Bun.sleep(seconds * 1000);
  prober.postMessage("stop");
  const latencies = await probed;
  prober.terminate();
  return latencies;
}

/**
 * The folder model's CPU per chunk in this process on the same chunks (the collection's first
 * RUN_BATCH_SAMPLE, as the server cut them), with the former 32 texts per ONNX Runtime run and with
 * the shipped RUN_BATCH, alternating twice: the shared machine's load moves between runs.
 */
async function compareRunBatches(model: string, dataDir: string): Promise<void> {
  const db = new Database(join(dataDir, "mediabox.db"), { readonly: true });
  const texts = db.query<{ content: string }, [number]>("SELECT content FROM document_chunks ORDER BY seq LIMIT ?").all(RUN_BATCH_SAMPLE).map((r) => r.content);
  db.close();
  const cpuMs: Record<number, number[]> = { 32: [], [RUN_BATCH]: [] };
  for (let round = 0; round < 2; round++) {
    for (const runBatch of [32, RUN_BATCH]) {
      const embedder = new TextEmbedder({ modelsDir: process.env.MEDIABOX_MODELS_DIR ?? join(ROOT, "models"), model, runBatch });
      await embedder.embed(texts.slice(0, 2));
      const before = process.cpuUsage();
      await embedder.embed(texts);
      const used = process.cpuUsage(before);
      cpuMs[runBatch]!.push((used.user + used.system) / 1000 / texts.length);
      await embedder.close();
    }
  }
  const best = (runBatch: number) => Math.min(...cpuMs[runBatch]!);
  console.log(`${model} in-process, ${texts.length} chunks: ${best(32).toFixed(1)} ms CPU a chunk in runs of 32 (${cpuMs[32]!.map((v) => v.toFixed(1)).join(", ")}), ` +
    `${best(RUN_BATCH).toFixed(1)} in runs of ${RUN_BATCH} (${cpuMs[RUN_BATCH]!.map((v) => v.toFixed(1)).join(", ")}): ${(best(32) / best(RUN_BATCH)).toFixed(2)}x less; ` +
    `two free cores would embed ~${((2 * 1000) / best(RUN_BATCH)).toFixed(0)} chunks/s (target >= 100)`);
}

await main();
