/**
 * The text read in a file: its whole extracted text when its kind keeps one (a document, a saved
 * page's article), else what its row's search text holds (OCR of an image or a video's keyframes).
 * Read through FileRepository over the caller's client or transaction.
 */
import type { FileRepository } from "../files/file-repository.ts";
import type { FileRow } from "../files/file.ts";

export type TextSource = Pick<FileRepository, "extractedText">;

export async function textOf(files: TextSource, file: FileRow): Promise<string> {
  return (await files.extractedText(file.id)) ?? file.visible_text ?? "";
}

/** What auto matching learns from: the title, the description (the user's, else the AI's) and the text. Never the tags: they are what it predicts. */
export async function featureTextOf(files: TextSource, file: FileRow): Promise<string> {
  return [file.title, file.user_description ?? file.upload_description, await textOf(files, file)].filter(Boolean).join("\n");
}
