/**
 * The listing's keyword search on SQLite: FTS5 MATCH over files_fts (migrations 004 and 008), which
 * the files triggers keep in step, ranked by bm25() with title and filename hits weighing more than
 * a word somewhere in the visible text.
 */
import type { FileKeywordSearch, KeywordMatch, Phrase, SearchMode } from "./keyword-search.ts";

const FTS_COLUMNS: Record<SearchMode, string | null> = {
  all: null,
  metadata: "{title filename tags user_description upload_description}",
  visible_text: "{visible_text}",
};

/** The phrases as an FTS5 query: each quoted (no FTS syntax from the user), AND-ed, the last a prefix. */
export function ftsQuery(phrases: readonly Phrase[], mode: SearchMode): string {
  const terms = phrases.map((tokens) => `"${tokens.join(" ")}"`);
  terms[terms.length - 1] += "*";
  const expression = terms.join(" AND ");
  const columns = FTS_COLUMNS[mode];
  return columns ? `${columns} : (${expression})` : expression;
}

export class Fts5FileSearch implements FileKeywordSearch {
  async ready(): Promise<void> {}

  match(phrases: readonly Phrase[], mode: SearchMode): KeywordMatch {
    return {
      join: " JOIN files_fts ON files_fts.rowid = f.search_rowid",
      condition: "files_fts MATCH ?",
      params: [ftsQuery(phrases, mode)],
      rank: "bm25(files_fts, 8.0, 6.0, 4.0, 2.0, 2.0, 1.0)",
      rankParams: [],
    };
  }
}
