/**
 * The listing's keyword search on PostgreSQL, matching the same files as FTS5 does on SQLite:
 * each file's words as FTS5's tokenizer makes them (porter over unicode61, diacritics folded;
 * migration 008), stored as a tsvector in file_search_terms (migration 040), and a query made of
 * the query's words through the same tokenizer. The tokenizer runs in the process over a scratch
 * in-memory FTS5 table with files_fts's columns, so no JavaScript reimplements its stemmer and
 * PostgreSQL's own parser and stemmer (which split and stem otherwise) are never used.
 *
 * The files triggers still copy a changed file's text into files_fts, which on PostgreSQL is the
 * queue of rows awaiting the tokenizer (migration 040 dropped its GIN index). `ready()`, called
 * before each search, takes the queued rows (their queue rows locked, skipping those another
 * process is taking), writes their terms, and then waits for the rows others were taking: a
 * search sees every file committed before it (but for writers queueing rows faster than
 * MAX_WAITS rounds take them).
 *
 * In the tsvector each column's tokens keep their places, columns apart (a gap between them, so a
 * phrase never spans two), and a weight per column group: title A, filename B, tags and the
 * descriptions C, visible text D. The search modes restrict the query's words to weights (metadata
 * ABC, visible_text D); ts_rank_cd over the file's length orders by relevance, with the weights
 * 1, 0.75, 0.375, 0.125 (FTS5's bm25 weighs the columns 8, 6, 4, 2, 2, 1). Places past 16,383
 * (PostgreSQL's limit) count as 16,383, and a word's first 256 places are kept: a phrase deep in a
 * long text may not match.
 */
import { Database } from "bun:sqlite";
import { atomically, type SqlClient } from "../db/sql-client.ts";
import type { FileKeywordSearch, KeywordMatch, Phrase, SearchMode } from "./keyword-search.ts";

/** files_fts's columns, in order (migration 004). */
const COLUMNS = ["title", "filename", "tags", "user_description", "upload_description", "visible_text"] as const;
type Column = (typeof COLUMNS)[number];
const WEIGHT: Record<Column, "A" | "B" | "C" | "D"> = { title: "A", filename: "B", tags: "C", user_description: "C", upload_description: "C", visible_text: "D" };
const MODE_WEIGHTS: Record<SearchMode, string> = { all: "", metadata: "ABC", visible_text: "D" };
/** ts_rank_cd's weights, for D, C, B and A. */
const RANK_WEIGHTS = "'{0.125, 0.375, 0.75, 1}'::real[]";
const MAX_POSITION = 16_383;
const MAX_POSITIONS_PER_WORD = 256;

/** Queued rows tokenized per transaction (a document's visible text may be 200,000 characters). */
const TOKENIZE_BATCH = 200;
/** Characters of tsvector input written per statement. */
const STATEMENT_CHARS = 4_000_000;
/**
 * Rows held by others that one search waits for, one at a time; past that (writers queueing
 * rows as fast as they are taken) the search goes ahead with what is committed and tokenized.
 */
const MAX_WAITS = 20;

type QueuedRow = { rowid: number } & Record<Column, string | null>;

interface Token {
  term: string;
  doc: number;
  col: Column;
  offset: number;
}

/** A scratch FTS5 table with files_fts's columns and tokenizer, whose fts5vocab lists each token's term and place. */
class ScratchTokenizer {
  private readonly db = new Database(":memory:");
  private readonly clear;
  private readonly insert;
  private readonly read;

  constructor() {
    this.db.run(`CREATE VIRTUAL TABLE scratch USING fts5(${COLUMNS.join(", ")}, tokenize = 'porter unicode61 remove_diacritics 2')`);
    this.db.run("CREATE VIRTUAL TABLE scratch_tokens USING fts5vocab(scratch, 'instance')");
    this.clear = this.db.query("DELETE FROM scratch");
    this.insert = this.db.query(`INSERT INTO scratch (rowid, ${COLUMNS.join(", ")}) VALUES (?, ?, ?, ?, ?, ?, ?)`);
    this.read = this.db.query<Token, []>("SELECT term, doc, col, offset FROM scratch_tokens ORDER BY doc, offset");
  }

  /** Every token of each row (numbered from 1 in `doc`). */
  tokens(rows: readonly Record<Column, string | null>[]): Token[] {
    return this.db.transaction(() => {
      this.clear.run();
      rows.forEach((row, i) => this.insert.run(i + 1, ...COLUMNS.map((c) => row[c] ?? null)));
      const tokens = this.read.all();
      this.clear.run();
      return tokens;
    })();
  }

  /** The terms (stems) of a phrase, in order. */
  phraseTerms(phrase: Phrase): string[] {
    const empty = Object.fromEntries(COLUMNS.map((c) => [c, null])) as Record<Column, string | null>;
    return this.tokens([{ ...empty, title: phrase.join(" ") }])
      .sort((a, b) => a.offset - b.offset)
      .map((t) => t.term);
  }
}

/** A lexeme in tsvector and tsquery input: quoted, its quotes and backslashes escaped. */
const lexeme = (term: string) => `'${term.replace(/\\/g, "\\\\").replace(/'/g, "''")}'`;

/** Each row's tsvector input, from its tokens: the columns' places apart, each column's weight. */
function tsvectorInputs(tokenizer: ScratchTokenizer, rows: readonly Record<Column, string | null>[]): string[] {
  const byDoc = rows.map(() => new Map<Column, Token[]>());
  for (const token of tokenizer.tokens(rows)) {
    const columns = byDoc[token.doc - 1]!;
    let list = columns.get(token.col);
    if (!list) columns.set(token.col, (list = []));
    list.push(token);
  }
  return byDoc.map((columns) => {
    const places = new Map<string, string[]>();
    let base = 1;
    for (const column of COLUMNS) {
      const tokens = columns.get(column);
      if (!tokens?.length) continue;
      let last = 0;
      for (const token of tokens) {
        const list = places.get(token.term) ?? [];
        if (list.length < MAX_POSITIONS_PER_WORD) list.push(`${Math.min(MAX_POSITION, base + token.offset)}${WEIGHT[column]}`);
        places.set(token.term, list);
        last = Math.max(last, token.offset);
      }
      base += last + 2;
    }
    return [...places].map(([term, list]) => `${lexeme(term)}:${list.join(",")}`).join(" ");
  });
}

export class PostgresFileSearch implements FileKeywordSearch {
  private scratch: ScratchTokenizer | null = null;

  constructor(readonly sql: SqlClient) {}

  private tokenizer(): ScratchTokenizer {
    return (this.scratch ??= new ScratchTokenizer());
  }

  async ready(): Promise<void> {
    // Mostly nothing is queued: one read, no transaction.
    if (!(await this.sql.one("SELECT 1 AS queued FROM files_fts ORDER BY rowid LIMIT 1"))) return;
    for (let round = 0; round < MAX_WAITS; round++) {
      while ((await this.tokenizeQueued()) === TOKENIZE_BATCH);
      // What is left was held by another transaction: another process taking it (its whole batch
      // commits at once) or a writer replacing it. Waiting for one row, holding nothing else (so
      // neither can deadlock with this), lets the holder commit; the next round takes the rest.
      const held = await this.sql.one<{ rowid: number }>("SELECT rowid FROM files_fts ORDER BY rowid LIMIT 1");
      if (!held) return;
      await this.tokenizeRow(held.rowid);
    }
  }

  /**
   * Moves up to a batch of queued rows no other transaction holds into file_search_terms; returns
   * how many. In the caller's transaction when the search runs in one (the listing's routes do not).
   */
  private tokenizeQueued(): Promise<number> {
    return atomically(this.sql, async (tx) => {
      const rows = await tx.all<QueuedRow>(
        `DELETE FROM files_fts WHERE rowid IN (SELECT rowid FROM files_fts ORDER BY rowid LIMIT ? FOR UPDATE SKIP LOCKED)
         RETURNING rowid, ${COLUMNS.join(", ")}`,
        [TOKENIZE_BATCH],
      );
      await this.store(tx, rows);
      return rows.length;
    });
  }

  private tokenizeRow(rowid: number): Promise<void> {
    return atomically(this.sql, async (tx) => {
      const rows = await tx.all<QueuedRow>(`DELETE FROM files_fts WHERE rowid = ? RETURNING rowid, ${COLUMNS.join(", ")}`, [rowid]);
      await this.store(tx, rows);
    });
  }

  private async store(tx: SqlClient, rows: QueuedRow[]): Promise<void> {
    const inputs = tsvectorInputs(this.tokenizer(), rows);
    let part: { rowid: number; terms: string }[] = [];
    let chars = 0;
    for (const [i, row] of rows.entries()) {
      part.push({ rowid: row.rowid, terms: inputs[i]! });
      chars += inputs[i]!.length;
      if (chars < STATEMENT_CHARS && i < rows.length - 1) continue;
      await tx.run(
        `INSERT INTO file_search_terms (rowid, terms)
         SELECT rowid, terms::tsvector FROM jsonb_to_recordset(?::text::jsonb) AS t(rowid bigint, terms text)
         ON CONFLICT (rowid) DO UPDATE SET terms = excluded.terms`,
        [JSON.stringify(part)],
      );
      part = [];
      chars = 0;
    }
  }

  match(phrases: readonly Phrase[], mode: SearchMode): KeywordMatch {
    const query = this.tsquery(phrases, mode);
    // Words the tokenizer keeps nothing of match nothing.
    if (query === null) return { join: "", condition: "1 = 0", params: [], rank: "f.id", rankParams: [] };
    return {
      join: " JOIN file_search_terms ON file_search_terms.rowid = f.search_rowid",
      condition: "file_search_terms.terms @@ ?::tsquery",
      params: [query],
      // Cover density divided by the file's length (normalization 2): of ts_rank and ts_rank_cd with
      // each normalization, the nearest to FTS5's bm25 (which weighs length too). bench:listing-parity
      // compares it: 86 % of SQLite's first 20 also PostgreSQL's, 86 % in the same place (plain
      // ts_rank: 18 % and 0 %).
      rank: `ts_rank_cd(${RANK_WEIGHTS}, file_search_terms.terms, ?::tsquery, 2) DESC`,
      rankParams: [query],
    };
  }

  /** Phrases of terms joined by `<->`, AND-ed, the last term a prefix (`:*`), restricted to the mode's weights. */
  tsquery(phrases: readonly Phrase[], mode: SearchMode): string | null {
    const weights = MODE_WEIGHTS[mode];
    const terms = phrases.map((phrase) => this.tokenizer().phraseTerms(phrase)).filter((phrase) => phrase.length > 0);
    const last = terms.length - 1;
    const parts = terms.map((phrase, i) => {
      const words = phrase.map((term, j) => `${lexeme(term)}:${i === last && j === phrase.length - 1 ? "*" : ""}${weights}`.replace(/:$/, ""));
      return words.length > 1 ? `(${words.join(" <-> ")})` : words[0]!;
    });
    return parts.length ? parts.join(" & ") : null;
  }
}
