/**
 * The `file_descriptions` table: each description a model gave of a file (a caption, a
 * machine-made summary), with the model's name, so a reader can tell who said what. Written
 * here alone, in the caller's transaction (the pipeline's, with the file's description) or in one
 * of its own.
 */
import { isoAt, type Clock } from "../clock.ts";
import { atomically, type SqlClient } from "../db/sql-client.ts";

export interface DescriptionItem {
  model: string;
  /** "caption" or "summary". */
  kind: string;
  text: string;
}

/** Replaces the file's descriptions with these. */
export function replaceDescriptions(sql: SqlClient, clock: Clock, fileId: string, items: DescriptionItem[]): Promise<void> {
  return atomically(sql, async (tx) => {
    await tx.run("DELETE FROM file_descriptions WHERE file_id = ?", [fileId]);
    await addDescriptions(tx, clock, fileId, items);
  });
}

/** Replaces only the descriptions by these items' models (a document's summary beside a user's edits). */
export function replaceDescriptionsOf(sql: SqlClient, clock: Clock, fileId: string, items: DescriptionItem[]): Promise<void> {
  return atomically(sql, async (tx) => {
    for (const model of new Set(items.map((i) => i.model))) await tx.run("DELETE FROM file_descriptions WHERE file_id = ? AND model = ?", [fileId, model]);
    await addDescriptions(tx, clock, fileId, items);
  });
}

async function addDescriptions(tx: SqlClient, clock: Clock, fileId: string, items: DescriptionItem[]): Promise<void> {
  const at = isoAt(clock.now());
  for (const item of items) {
    await tx.run("INSERT INTO file_descriptions (id, file_id, model, kind, text, created_at) VALUES (?, ?, ?, ?, ?, ?)", [crypto.randomUUID(), fileId, item.model, item.kind, item.text, at]);
  }
}
