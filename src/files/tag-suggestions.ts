/**
 * Tag suggestions: the keyphrases a document's summary found, kept apart from its tags. Key
 * phrases read off the text ("late payments incur", "eur excluding charges") are too often not
 * what a person would tag, and no quality bar has been measured that would let some through on
 * their own, so every one is a suggestion: the user accepts it (it becomes a tag through the
 * ordinary tag edit) or dismisses it. The only writer of `tag_suggestions`.
 */
import type { Database } from "bun:sqlite";
import type { SqlClient } from "../db/sql-client.ts";

/** Replaces a file's suggestions with a new reading's, best first (dismissals of phrases found again are kept). */
export function replaceSuggestions(db: Database, fileId: string, phrases: string[]): void {
  const dismissed = new Set(
    db.query<{ phrase: string }, [string]>("SELECT phrase FROM tag_suggestions WHERE file_id = ? AND dismissed = 1").all(fileId).map((r) => r.phrase),
  );
  db.query("DELETE FROM tag_suggestions WHERE file_id = ?").run(fileId);
  const insert = db.query("INSERT OR IGNORE INTO tag_suggestions (file_id, phrase, rank, dismissed) VALUES (?, ?, ?, ?)");
  phrases.forEach((phrase, rank) => insert.run(fileId, phrase, rank, dismissed.has(phrase) ? 1 : 0));
}

/** The suggestions still open: not dismissed and not already among the file's tags (compared case-insensitively). */
export async function openSuggestions(sql: SqlClient, fileId: string, tags: string[]): Promise<string[]> {
  const taken = new Set(tags.map((t) => t.toLowerCase()));
  return (await sql.all<{ phrase: string }>("SELECT phrase FROM tag_suggestions WHERE file_id = ? AND dismissed = 0 ORDER BY rank", [fileId]))
    .map((r) => r.phrase)
    .filter((p) => !taken.has(p.toLowerCase()));
}

/** Dismisses one suggestion; false when the file has no open suggestion of that phrase. */
export function dismissSuggestion(db: Database, fileId: string, phrase: string): boolean {
  return db.query("UPDATE tag_suggestions SET dismissed = 1 WHERE file_id = ? AND phrase = ? AND dismissed = 0").run(fileId, phrase.toLowerCase()).changes > 0;
}
