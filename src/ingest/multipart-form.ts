/**
 * Streams a multipart/form-data request body to disk with busboy: each file part is written to
 * the staging directory while its SHA-256 is computed and its first bytes are kept for type
 * detection, so memory stays flat whatever the file size. Text fields are collected as strings.
 */
import Busboy from "busboy";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { Readable } from "node:stream";
import { ApiError, badRequest, errorMessage } from "../errors.ts";
import { SizeLimitError, writeStream } from "../storage/disk.ts";

export interface StagedUpload {
  /** Position among the request's files, from 0. */
  index: number;
  field: string;
  filename: string;
  /** The client's Content-Type for the part (a hint only). */
  declaredType: string;
  /** null when the file exceeded maxFileBytes (its bytes were discarded). */
  path: string | null;
  size: number;
  sha256: string;
  head: Uint8Array;
}

export interface ParsedForm {
  fields: Record<string, string>;
  files: StagedUpload[];
}

export interface FormLimits {
  fileFields: string[];
  maxFileBytes: number;
  maxFiles: number | null;
  maxTotalBytes: number;
  /** Stop reading at the first oversized file (single uploads) instead of recording it. */
  abortOnOversizedFile: boolean;
  /** Message for a file over maxFileBytes. */
  oversizeMessage: string;
}

const MAX_FIELD_BYTES = 64 * 1024;

export async function parseMultipartForm(request: Request, stagingDir: string, limits: FormLimits): Promise<ParsedForm> {
  const contentType = request.headers.get("content-type") ?? "";
  if (!contentType.toLowerCase().startsWith("multipart/form-data")) {
    throw new ApiError(415, "VALIDATION_ERROR", "the body must be multipart/form-data");
  }
  if (!request.body) throw badRequest("the multipart body is empty");
  const declared = Number(request.headers.get("content-length") ?? NaN);
  if (declared > limits.maxTotalBytes + 1024 * 1024) {
    throw new ApiError(413, "PAYLOAD_TOO_LARGE", `the request body of ${declared} bytes exceeds the ${limits.maxTotalBytes}-byte limit`);
  }

  const fields: Record<string, string> = {};
  const files: StagedUpload[] = [];
  const writes: Promise<void>[] = [];
  let failure: unknown = null;
  let total = 0;

  let busboy: Busboy.Busboy;
  try {
    busboy = Busboy({
      headers: { "content-type": contentType },
      limits: { fieldSize: MAX_FIELD_BYTES, fields: 100, parts: 10_000, fileSize: limits.maxFileBytes + 1 },
      defParamCharset: "utf8",
    });
  } catch (err) {
    throw badRequest(`malformed multipart body: ${errorMessage(err)}`);
  }
  const source = Readable.fromWeb(request.body as unknown as import("node:stream/web").ReadableStream);

  let stop: () => void = () => {};
  const fail = (err: unknown) => {
    if (failure === null) failure = err;
    busboy.removeAllListeners("file");
    source.unpipe(busboy);
    source.destroy();
    stop();
  };

  busboy.on("field", (name, value, info) => {
    if (info.valueTruncated) return fail(badRequest(`${name}: field value is longer than ${MAX_FIELD_BYTES} bytes`));
    fields[name] = value;
  });
  busboy.on("file", (name, stream, info) => {
    if (!limits.fileFields.includes(name)) {
      stream.resume();
      return fail(badRequest(`unexpected file field "${name}"; send files as ${limits.fileFields.join(" or ")}`));
    }
    const index = files.length;
    if (limits.maxFiles !== null && index >= limits.maxFiles) {
      stream.resume();
      return fail(new ApiError(400, "BATCH_TOO_LARGE", `at most ${limits.maxFiles} files per request for this tier`));
    }
    const filename = decodeFormFilename(info.filename ?? "") || `file-${index + 1}`;
    const entry: StagedUpload = { index, field: name, filename, declaredType: info.mimeType, path: null, size: 0, sha256: "", head: new Uint8Array() };
    files.push(entry);
    const path = join(stagingDir, `${index}`);
    const counted = (async function* () {
      for await (const chunk of stream as AsyncIterable<Uint8Array>) {
        total += chunk.byteLength;
        if (total > limits.maxTotalBytes) {
          throw new ApiError(413, "PAYLOAD_TOO_LARGE", `the files in this request exceed ${limits.maxTotalBytes} bytes in total`);
        }
        yield chunk;
      }
    })();
    writes.push(
      writeStream(counted, path, { maxBytes: limits.maxFileBytes })
        .then((written) => {
          Object.assign(entry, { path, size: written.size, sha256: written.sha256, head: written.head });
        })
        .catch((err) => {
          stream.resume();
          if (err instanceof SizeLimitError) {
            entry.size = limits.maxFileBytes + 1;
            if (limits.abortOnOversizedFile) fail(new ApiError(413, "FILE_TOO_LARGE", limits.oversizeMessage));
            return;
          }
          fail(err);
        }),
    );
  });

  const finished = new Promise<void>((resolve, reject) => {
    // A failure stops reading at once; the rest of the body is never consumed.
    stop = resolve;
    busboy.on("close", resolve);
    busboy.on("error", (err) => reject(badRequest(`malformed multipart body: ${errorMessage(err)}`)));
    source.on("error", (err) => reject(failure ?? err));
  });
  source.pipe(busboy);
  try {
    await finished;
  } catch (err) {
    if (failure === null) failure = err;
  }
  await Promise.allSettled(writes);
  if (failure) {
    await rm(stagingDir, { recursive: true, force: true });
    throw failure;
  }
  return { fields, files };
}

/**
 * Browsers and fetch escape `"`, CR and LF in multipart file names as %22, %0D and %0A (WHATWG
 * multipart/form-data encoding); busboy leaves them escaped. Undo the quote, drop line breaks.
 */
export function decodeFormFilename(raw: string): string {
  return raw.replace(/%22/g, '"').replace(/%0[dDaA]/g, " ").replace(/[\u0000-\u001f\u007f]/g, "").trim();
}
