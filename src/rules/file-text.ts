/** The text read in a file: a document's or saved page's whole text, else what OCR read in an image or a video's keyframes. */
import type { FileRepository } from "../files/file-repository.ts";
import type { FileRow } from "../files/file.ts";

export function textOf(files: FileRepository, file: FileRow): string {
  const text = file.media_type === "document" || file.media_type === "link" ? (files.extractedText(file.id) ?? file.visible_text) : file.visible_text;
  return text ?? "";
}

/** What auto matching learns from: the title, the description (the user's, else the AI's) and the text. Never the tags: they are what it predicts. */
export function featureTextOf(files: FileRepository, file: FileRow): string {
  return [file.title, file.user_description ?? file.upload_description, textOf(files, file)].filter(Boolean).join("\n");
}
