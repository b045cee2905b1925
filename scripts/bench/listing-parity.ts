/**
 * The library listing on both databases, in process (no HTTP): the same synthetic library
 * (seed-files.ts) in SQLite and in a throwaway PostgreSQL, the same listings run on each, their
 * answers compared (totals and first pages) and their latencies printed. Also how long PostgreSQL's
 * keyword index takes to tokenize the whole library at its first search (files_fts's queue into
 * file_search_terms, src/files/postgres-file-search.ts). Then, with texts of 5-65 words given to a
 * third of the files (the same on both), how much of each relevance-ordered first page of 20 the
 * two databases share, for PostgreSQL's ranking (ts_rank_cd over the length) and for plain ts_rank.
 *
 *   bun scripts/bench/listing-parity.ts        (MEDIABOX_BENCH_FILES=20000 by default)
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openDatabase } from "../../src/db/database.ts";
import { openPostgres } from "../../src/db/postgres-database.ts";
import type { SqlClient } from "../../src/db/sql-client.ts";
import { SqliteClient } from "../../src/db/sqlite-client.ts";
import { listFiles, NO_FILTERS, type ListFilesQuery } from "../../src/files/queries.ts";
import { searchPhrases } from "../../src/files/keyword-search.ts";
import { PostgresFileSearch } from "../../src/files/postgres-file-search.ts";
import { timeline } from "../../src/library/timeline.ts";
import { findPostgres, startPostgres } from "../../test/support/postgres.ts";
import { seedFiles } from "./seed-files.ts";

const FILES = Number(process.env.MEDIABOX_BENCH_FILES ?? 20_000);
const ROUNDS = 60;
const COLUMNS = ["id", "org_id", "project_id", "media_type", "filename", "created_at", "updated_at", "title", "tags", "size_bytes", "content_type", "upload_description", "visible_text", "processing_status"];
const QUERY: ListFilesQuery = { ...NO_FILTERS, search: null, searchMode: "all", tags: [], sortBy: null, sortOrder: "desc", limit: 20, offset: 0 };

const CASES: [string, (db: SqlClient) => Promise<unknown>][] = [
  ["no filter", (db) => listFiles(db, "bench", QUERY)],
  ["tags=urgent&tags=north", (db) => listFiles(db, "bench", { ...QUERY, tags: ["urgent", "north"] })],
  ["search=harbor crane", (db) => listFiles(db, "bench", { ...QUERY, search: "harbor crane" })],
  ["search=harb (a prefix)", (db) => listFiles(db, "bench", { ...QUERY, search: "harb" })],
  ["search=harbor 12 (metadata)", (db) => listFiles(db, "bench", { ...QUERY, search: "harbor 12", searchMode: "metadata" })],
  ["search=reference (visible_text)", (db) => listFiles(db, "bench", { ...QUERY, search: "reference", searchMode: "visible_text" })],
  ["sort_by=title, half way", (db) => listFiles(db, "bench", { ...QUERY, sortBy: "title", sortOrder: "asc", offset: Math.floor(FILES / 2) })],
  ["timeline by month", (db) => timeline(db, "bench", NO_FILTERS, "month", "desc")],
];

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;

/** What two answers share: "same" (equal), the same total with how much of the first page agrees (relevance orders differ), or "DIFFERENT". */
function compare(a: unknown, b: unknown): string {
  if (JSON.stringify(page(a)) === JSON.stringify(page(b))) return "same";
  const [x, y] = [page(a), page(b)] as { total?: number; ids?: string[] }[];
  if (x!.total === undefined || x!.total !== y!.total) return "DIFFERENT";
  const shared = x!.ids!.filter((id) => y!.ids!.includes(id)).length;
  const placed = x!.ids!.filter((id, i) => y!.ids![i] === id).length;
  return `same total; of the first ${x!.ids!.length}: ${shared} on both, ${placed} in the same place`;
}

function page(value: unknown): unknown {
  if (value && typeof value === "object" && "rows" in value) {
    const { rows, total } = value as { rows: { id: string }[]; total: number };
    return { total, ids: rows.map((r) => r.id) };
  }
  return value;
}

async function latencies(db: SqlClient, run: (db: SqlClient) => Promise<unknown>): Promise<{ p50: number; p95: number }> {
  for (let i = 0; i < 5; i++) await run(db);
  const times: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    const started = performance.now();
    await run(db);
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  return { p50: percentile(times, 50), p95: percentile(times, 95) };
}

async function main(): Promise<void> {
  const binaries = findPostgres();
  if ("missing" in binaries) throw new Error(`no PostgreSQL: ${binaries.missing}`);
  const root = mkdtempSync(join(process.env.MEDIABOX_BENCH_DIR ?? tmpdir(), "mediabox-bench-listing-"));
  const raw = openDatabase(join(root, "library.db"));
  raw.run("INSERT INTO organizations (id, name, name_key, tier, created_at) VALUES ('bench', 'bench', 'bench', 'CUSTOM', 'x')");
  raw.run("INSERT INTO projects (id, org_id, name, name_key, is_default, created_at, updated_at) VALUES ('bench-p', 'bench', 'Default', 'default', 1, 'x', 'x')");
  raw.close();
  seedFiles(join(root, "library.db"), "bench", FILES);
  const sqliteDb = openDatabase(join(root, "library.db"));
  const sqlite = new SqliteClient(sqliteDb);
  const server = await startPostgres(binaries);
  const postgres = await openPostgres(await server.createDatabase("listing"), { max: 2 });
  try {
    await postgres.run("INSERT INTO organizations (id, name, name_key, tier, created_at) VALUES ('bench', 'bench', 'bench', 'CUSTOM', 'x')");
    await postgres.run("INSERT INTO projects (id, org_id, name, name_key, is_default, created_at, updated_at) VALUES ('bench-p', 'bench', 'Default', 'default', 1, 'x', 'x')");
    const copyStarted = performance.now();
    const rows = sqliteDb.query<Record<string, string | number | null>, []>(`SELECT ${COLUMNS.join(", ")} FROM files ORDER BY rowid`).all();
    for (let i = 0; i < rows.length; i += 500) {
      const chunk = rows.slice(i, i + 500);
      await postgres.run(
        `INSERT INTO files (${COLUMNS.join(", ")}) VALUES ${chunk.map(() => `(${COLUMNS.map(() => "?").join(", ")})`).join(", ")}`,
        chunk.flatMap((row) => COLUMNS.map((c) => row[c] ?? null)),
      );
    }
    await postgres.run("ANALYZE");
    const tokenizeStarted = performance.now();
    await listFiles(postgres, "bench", { ...QUERY, search: "harbor" });
    const tokenized = performance.now() - tokenizeStarted;
    await postgres.run("ANALYZE");
    console.log(`${FILES} files: copied into PostgreSQL in ${((tokenizeStarted - copyStarted) / 1000).toFixed(1)} s; ` +
      `the first search tokenized them all in ${(tokenized / 1000).toFixed(1)} s (${Math.round(FILES / (tokenized / 1000))} files/s)`);

    console.log(`\n${"listing".padEnd(34)} ${"SQLite p50 / p95".padStart(20)} ${"PostgreSQL p50 / p95".padStart(24)}   answers`);
    for (const [name, run] of CASES) {
      const same = compare(await run(sqlite), await run(postgres));
      const a = await latencies(sqlite, run);
      const b = await latencies(postgres, run);
      console.log(`${name.padEnd(34)} ${`${a.p50.toFixed(1)} / ${a.p95.toFixed(1)} ms`.padStart(20)} ${`${b.p50.toFixed(1)} / ${b.p95.toFixed(1)} ms`.padStart(24)}   ${same}`);
    }
    await printRankingAgreement(sqliteDb, sqlite, postgres);
  } finally {
    await postgres.close();
    await server.stop();
    sqliteDb.close();
    rmSync(root, { recursive: true, force: true });
  }
}

const RANKED_QUERIES = ["harbor crane", "harb", "river", "tunnel pump", "garden", "sunset orchard quarry", "valve"];

async function printRankingAgreement(sqliteDb: ReturnType<typeof openDatabase>, sqlite: SqlClient, postgres: SqlClient): Promise<void> {
  const words = "harbor crane invoice sunset orchard quarry drawing survey bridge tunnel pump valve turbine roof facade kitchen garden river forest mountain".split(" ");
  let x = 7;
  const rand = (n: number) => {
    x = (x * 1103515245 + 12345) >>> 0;
    return (x >>> 16) % n;
  };
  const ids = sqliteDb.query<{ id: string }, []>("SELECT id FROM files ORDER BY rowid").all();
  const texts = ids.filter(() => rand(3) === 0).map(({ id }) => ({ id, text: Array.from({ length: 5 + rand(60) }, () => words[rand(words.length)]).join(" ") }));
  for (const db of [sqlite, postgres]) {
    for (let i = 0; i < texts.length; i += 500) {
      const part = texts.slice(i, i + 500);
      await db.run(`UPDATE files SET visible_text = CASE id ${part.map(() => "WHEN ? THEN ?").join(" ")} END WHERE id IN (${part.map(() => "?").join(", ")})`, [
        ...part.flatMap((t) => [t.id, t.text]),
        ...part.map((t) => t.id),
      ]);
    }
  }
  await listFiles(postgres, "bench", { ...QUERY, search: "harbor" }); // tokenizes the changed rows
  const keywords = new PostgresFileSearch(postgres);
  const plainTsRank = async (query: string) => {
    const q = keywords.tsquery(searchPhrases(query), "all");
    const rows = await postgres.all<{ id: string }>(
      `SELECT f.id FROM files f JOIN file_search_terms s ON s.rowid = f.search_rowid WHERE s.terms @@ ?::tsquery AND f.org_id = 'bench' AND f.deleted_at IS NULL
       ORDER BY ts_rank('{0.125, 0.375, 0.75, 1}'::real[], s.terms, ?::tsquery) DESC, f.created_at DESC, f.id DESC LIMIT 20`,
      [q, q],
    );
    return rows.map((r) => r.id);
  };
  const agreement = { ranking: { shared: 0, placed: 0 }, plain: { shared: 0, placed: 0 }, n: 0 };
  for (const query of RANKED_QUERIES) {
    const expected = (await listFiles(sqlite, "bench", { ...QUERY, search: query })).rows.map((r) => r.id);
    const ranked = (await listFiles(postgres, "bench", { ...QUERY, search: query })).rows.map((r) => r.id);
    const plain = await plainTsRank(query);
    for (const [key, got] of [["ranking", ranked], ["plain", plain]] as const) {
      agreement[key].shared += expected.filter((id) => got.includes(id)).length;
      agreement[key].placed += expected.filter((id, i) => got[i] === id).length;
    }
    agreement.n += expected.length;
  }
  const share = (n: number) => `${Math.round((100 * n) / agreement.n)} %`;
  console.log(`\nrelevance order, ${RANKED_QUERIES.length} queries, ${texts.length} files given longer texts: of SQLite's first 20, on PostgreSQL's first 20 / in the same place`);
  console.log(`  ts_rank_cd over the length (the listing's): ${share(agreement.ranking.shared)} / ${share(agreement.ranking.placed)}`);
  console.log(`  plain ts_rank:                              ${share(agreement.plain.shared)} / ${share(agreement.plain.placed)}`);
}

await main();
