/**
 * Tag suggestions: the keyphrases a document's summary found, kept apart from its tags. Key
 * phrases read off the text ("late payments incur", "eur excluding charges") are too often not
 * what a person would tag, and no quality bar has been measured that would let some through on
 * their own, so every one is a suggestion: the user accepts it (it becomes a tag through the
 * ordinary tag edit) or dismisses it. The only writer of `tag_suggestions`.
 */
import { atomically, type SqlClient } from "../db/sql-client.ts";

/** Replaces a file's suggestions with a new reading's, best first (dismissals of phrases found again are kept). */
export function replaceSuggestions(sql: SqlClient, fileId: string, phrases: string[]): Promise<void> {
  return atomically(sql, async (tx) => {
    const dismissed = new Set((await tx.all<{ phrase: string }>("SELECT phrase FROM tag_suggestions WHERE file_id = ? AND dismissed = 1", [fileId])).map((r) => r.phrase));
    await tx.run("DELETE FROM tag_suggestions WHERE file_id = ?", [fileId]);
    for (const [rank, phrase] of phrases.entries()) {
      await tx.run("INSERT INTO tag_suggestions (file_id, phrase, rank, dismissed) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING", [fileId, phrase, rank, dismissed.has(phrase) ? 1 : 0]);
    }
  });
}

/** The suggestions still open: not dismissed and not already among the file's tags (compared case-insensitively). */
export async function openSuggestions(sql: SqlClient, fileId: string, tags: string[]): Promise<string[]> {
  const taken = new Set(tags.map((t) => t.toLowerCase()));
  return (await sql.all<{ phrase: string }>("SELECT phrase FROM tag_suggestions WHERE file_id = ? AND dismissed = 0 ORDER BY rank", [fileId]))
    .map((r) => r.phrase)
    .filter((p) => !taken.has(p.toLowerCase()));
}

/** Dismisses one suggestion; false when the file has no open suggestion of that phrase. */
export async function dismissSuggestion(sql: SqlClient, fileId: string, phrase: string): Promise<boolean> {
  return (await sql.run("UPDATE tag_suggestions SET dismissed = 1 WHERE file_id = ? AND phrase = ? AND dismissed = 0", [fileId, phrase.toLowerCase()])).changes > 0;
}
