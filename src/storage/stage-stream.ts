/**
 * Bytes that arrive from elsewhere (a cloud drive's download, a mail attachment) written to a
 * staging file before the upload path takes them: hashed as they pass, the head kept for type
 * detection, refused once past the size the caller allows.
 */
import { createHash } from "node:crypto";
import { createWriteStream } from "node:fs";

/** What type detection reads of a file's start. */
export const DETECTION_HEAD_BYTES = 64 * 1024;

export interface StagedBytes {
  size: number;
  sha256: string;
  head: Uint8Array;
}

export async function stageStream(content: AsyncIterable<Uint8Array>, path: string, maxBytes: number): Promise<StagedBytes> {
  const hash = createHash("sha256");
  const out = createWriteStream(path);
  const head: Uint8Array[] = [];
  let headSize = 0;
  let size = 0;
  try {
    for await (const chunk of content) {
      size += chunk.byteLength;
      if (size > maxBytes) throw new Error(`the file is larger than ${maxBytes} bytes`);
      hash.update(chunk);
      if (headSize < DETECTION_HEAD_BYTES) {
        head.push(chunk.subarray(0, DETECTION_HEAD_BYTES - headSize));
        headSize += Math.min(chunk.byteLength, DETECTION_HEAD_BYTES - headSize);
      }
      if (!out.write(chunk)) await new Promise((resolve) => out.once("drain", resolve));
    }
  } finally {
    await new Promise<void>((resolve, reject) => out.end((err?: Error | null) => (err ? reject(err) : resolve())));
  }
  return { size, sha256: hash.digest("hex"), head: Buffer.concat(head) };
}
