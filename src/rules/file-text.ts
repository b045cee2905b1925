/**
 * The text read in a file: its whole extracted text when its kind keeps one (a document, a saved
 * page's article), else what its row's search text holds (OCR of an image or a video's keyframes).
 */
import type { FileRepository } from "../files/file-repository.ts";
import type { FileRow } from "../files/file.ts";

export function textOf(files: FileRepository, file: FileRow): string {
  const text = files.extractedText(file.id) ?? file.visible_text;
  return text ?? "";
}

/** What auto matching learns from: the title, the description (the user's, else the AI's) and the text. Never the tags: they are what it predicts. */
export function featureTextOf(files: FileRepository, file: FileRow): string {
  return [file.title, file.user_description ?? file.upload_description, textOf(files, file)].filter(Boolean).join("\n");
}
