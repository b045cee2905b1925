/**
 * The text read in a file: its whole extracted text when its kind keeps one (a document, a saved
 * page's article), else what its row's search text holds (OCR of an image or a video's keyframes).
 * Read synchronously over the SQLite handle: conditions are evaluated synchronously (rules.ts).
 */
import type { Database } from "bun:sqlite";
import { extractedTextOnHandle } from "../files/file-repository.ts";
import type { FileRow } from "../files/file.ts";

export function textOf(db: Database, file: FileRow): string {
  const text = extractedTextOnHandle(db, file.id) ?? file.visible_text;
  return text ?? "";
}

/** What auto matching learns from: the title, the description (the user's, else the AI's) and the text. Never the tags: they are what it predicts. */
export function featureTextOf(db: Database, file: FileRow): string {
  return [file.title, file.user_description ?? file.upload_description, textOf(db, file)].filter(Boolean).join("\n");
}
