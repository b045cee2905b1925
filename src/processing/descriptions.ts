/**
 * The `file_descriptions` table: each description a model gave of a file (a caption, a
 * machine-made summary), with the model's name, so a reader can tell who said what. Written
 * here alone.
 */
import type { Database } from "bun:sqlite";
import { isoAt, type Clock } from "../clock.ts";

export interface DescriptionItem {
  model: string;
  /** "caption" or "summary". */
  kind: string;
  text: string;
}

/** Replaces the file's descriptions with these. */
export function replaceDescriptions(db: Database, clock: Clock, fileId: string, items: DescriptionItem[]): void {
  db.query("DELETE FROM file_descriptions WHERE file_id = ?").run(fileId);
  addDescriptions(db, clock, fileId, items);
}

/** Replaces only the descriptions by these items' models (a document's summary beside a user's edits). */
export function replaceDescriptionsOf(db: Database, clock: Clock, fileId: string, items: DescriptionItem[]): void {
  for (const model of new Set(items.map((i) => i.model))) db.query("DELETE FROM file_descriptions WHERE file_id = ? AND model = ?").run(fileId, model);
  addDescriptions(db, clock, fileId, items);
}

function addDescriptions(db: Database, clock: Clock, fileId: string, items: DescriptionItem[]): void {
  const at = isoAt(clock.now());
  for (const item of items) {
    db.query("INSERT INTO file_descriptions (id, file_id, model, kind, text, created_at) VALUES (?, ?, ?, ?, ?, ?)").run(crypto.randomUUID(), fileId, item.model, item.kind, item.text, at);
  }
}
