/**
 * The PP-OCR thread: loads a model folder once (on its first request) and reads the images the
 * event loop has decoded, so model runs and the pixel work around them never block requests.
 */
import { errorMessage } from "../../errors.ts";
import { lowerThreadPriority } from "../../native/thread-priority.ts";
import { serveRequests } from "../../native/worker-thread.ts";
import { type PpLine, PpOcrReader, type PpOcrSettings } from "./ppocr-reader.ts";
import type { RawImage } from "./line-crop.ts";

export interface PpOcrRequest {
  folder: string;
  settings: Partial<PpOcrSettings>;
  image: RawImage;
  detInput: RawImage;
}

export type PpOcrReply = { lines: PpLine[] } | { error: string };

lowerThreadPriority();

let loaded: { folder: string; reader: Promise<PpOcrReader> } | null = null;

serveRequests<PpOcrRequest, PpOcrReply>(async ({ folder, settings, image, detInput }) => {
  try {
    if (loaded?.folder !== folder) {
      const previous = loaded;
      loaded = { folder, reader: PpOcrReader.load(folder, settings) };
      await previous?.reader.then((r) => r.release()).catch(() => {});
    }
    const reader = await loaded.reader.catch((err: unknown) => {
      loaded = null; // a folder fixed later loads on the next request
      throw err;
    });
    return { reply: { lines: await reader.read(image, detInput) } };
  } catch (err) {
    return { reply: { error: errorMessage(err) } };
  }
});
