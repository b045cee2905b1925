/**
 * Streams a multipart/form-data request body to disk with busboy: each file part is written to
 * the staging directory while its SHA-256 is computed and its first bytes are kept for type
 * detection, so memory stays flat whatever the file size. Text fields are collected as strings.
 */
import Busboy from "busboy";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import type { Readable } from "node:stream";
import { ApiError, badRequest, ClientDisconnectedError, errorMessage } from "../errors.ts";
import { DurableFile, SizeLimitError, type WrittenFile } from "../storage/disk.ts";

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

/**
 * Reads the form. Whatever the client does (a body cut off before its closing boundary, a
 * connection dropped mid-file, a part too large), this settles: every staging file it opened is
 * closed and removed, and the failure is thrown as an ApiError for this request alone. Nothing
 * escapes as an unhandled stream error, and no file handle is left for the garbage collector.
 */
/**
 * How an ingest service receives a form without seeing HTTP: it names the staging directory and
 * its limits, the reader streams the files there. Routes pass `formOf(request)`.
 */
export type FormReader = (stagingDir: string, limits: FormLimits) => Promise<ParsedForm>;

export function formOf(request: Request): FormReader {
  return (stagingDir, limits) => parseMultipartForm(request, stagingDir, limits);
}

export async function parseMultipartForm(request: Request, stagingDir: string, limits: FormLimits): Promise<ParsedForm> {
  const contentType = request.headers.get("content-type") ?? "";
  if (!contentType.toLowerCase().startsWith("multipart/form-data")) {
    throw new ApiError("UNSUPPORTED_CONTENT_TYPE", "the body must be multipart/form-data");
  }
  if (!request.body) throw new ApiError("MALFORMED_MULTIPART", "the multipart body is empty");
  const declared = Number(request.headers.get("content-length") ?? NaN);
  if (declared > limits.maxTotalBytes + 1024 * 1024) {
    throw new ApiError("PAYLOAD_TOO_LARGE", `the request body of ${declared} bytes exceeds the ${limits.maxTotalBytes}-byte limit`);
  }

  let busboy: Busboy.Busboy;
  try {
    busboy = Busboy({
      headers: { "content-type": contentType },
      limits: { fieldSize: MAX_FIELD_BYTES, fields: 100, parts: 10_000, fileSize: limits.maxFileBytes + 1 },
      defParamCharset: "utf8",
    });
  } catch (err) {
    throw new ApiError("MALFORMED_MULTIPART", `malformed multipart body: ${errorMessage(err)}`);
  }

  const fields: Record<string, string> = {};
  const files: StagedUpload[] = [];
  const writes: Promise<void>[] = [];
  /** File parts being written: a failure destroys them, which ends their writers' loops. */
  const receiving = new Set<Readable>();
  let failure: unknown = null;
  const settled = Promise.withResolvers<void>();
  const reader = request.body.getReader();
  /** Wakes the body pump when it waits for busboy to drain. */
  let wakePump: () => void = () => {};
  const fail = (err: unknown) => {
    failure ??= err;
    for (const stream of receiving) stream.destroy(failure instanceof Error ? failure : new Error(String(failure)));
    reader.cancel().catch(() => {});
    wakePump();
    settled.resolve();
  };
  let total = 0;

  busboy.on("field", (name, value, info) => {
    if (info.valueTruncated) return fail(badRequest(`${name}: field value is longer than ${MAX_FIELD_BYTES} bytes`));
    fields[name] = value;
  });
  busboy.on("file", (name, stream, info) => {
    // busboy errors a part it cannot finish ("Unexpected end of form"); its writer sees that through
    // iteration, and an 'error' event with no listener would end the process.
    stream.on("error", () => {});
    if (failure !== null) return void stream.resume();
    if (!limits.fileFields.includes(name)) {
      stream.resume();
      return fail(badRequest(`unexpected file field "${name}"; send files as ${limits.fileFields.join(" or ")}`));
    }
    const index = files.length;
    if (limits.maxFiles !== null && index >= limits.maxFiles) {
      stream.resume();
      return fail(new ApiError("BATCH_TOO_LARGE", `at most ${limits.maxFiles} files per request for this tier`));
    }
    const filename = decodeFormFilename(info.filename ?? "") || `file-${index + 1}`;
    const entry: StagedUpload = { index, field: name, filename, declaredType: info.mimeType, path: null, size: 0, sha256: "", head: new Uint8Array() };
    files.push(entry);
    receiving.add(stream);
    const path = join(stagingDir, `${index}`);
    writes.push(
      receiveFile(stream, path, limits.maxFileBytes, (bytes) => {
        total += bytes;
        if (total > limits.maxTotalBytes) {
          throw new ApiError("PAYLOAD_TOO_LARGE", `the files in this request exceed ${limits.maxTotalBytes} bytes in total`);
        }
      })
        .then((written) => {
          Object.assign(entry, { path, size: written.size, sha256: written.sha256, head: written.head });
        })
        .catch((err) => {
          stream.resume();
          if (err instanceof SizeLimitError) {
            entry.size = limits.maxFileBytes + 1;
            if (limits.abortOnOversizedFile) fail(new ApiError("FILE_TOO_LARGE", limits.oversizeMessage));
            return;
          }
          fail(err);
        })
        .finally(() => receiving.delete(stream)),
    );
  });
  busboy.on("error", (err) => fail(malformedBody(err)));
  busboy.on("close", () => settled.resolve());

  // Feed the body to busboy with backpressure. A failure cancels the reader (ending a pending
  // read) and wakes a wait for 'drain'. No promise outlives its chunk: racing each read against
  // a long-lived promise would keep every chunk reachable until the request ends.
  try {
    for (;;) {
      const next = await reader.read();
      if (failure !== null) break;
      if (next.done) {
        busboy.end();
        break;
      }
      if (!busboy.write(next.value)) {
        await new Promise<void>((resolve) => {
          wakePump = resolve;
          busboy.once("drain", resolve);
        });
        busboy.removeAllListeners("drain");
        wakePump = () => {};
      }
    }
  } catch (err) {
    fail(request.signal.aborted ? new ClientDisconnectedError() : malformedBody(err));
  }
  if (failure !== null) busboy.destroy();
  await settled.promise;
  await Promise.allSettled(writes);
  if (failure !== null) {
    await rm(stagingDir, { recursive: true, force: true });
    throw failure;
  }
  return { fields, files };
}

/**
 * Writes one file part as busboy emits it. Its 'data' events feed the writer directly, pausing
 * the part while a batch is being written (which holds busboy, then the body pump, back); an
 * async iterator over the part would add a promise per chunk. `count` may throw to refuse the
 * chunk. Settles once the part ends (the file durable) or fails (the file removed).
 */
async function receiveFile(stream: Readable, path: string, maxBytes: number, count: (bytes: number) => void): Promise<WrittenFile> {
  const ended = Promise.withResolvers<void>();
  // The part can fail while its file is being opened; the rejection is awaited below.
  ended.promise.catch(() => {});
  let failed = false;
  let file: DurableFile | null = null;
  const failWith = (err: unknown) => {
    if (failed) return;
    failed = true;
    stream.off("data", onData);
    ended.reject(err);
  };
  const onData = (chunk: Uint8Array) => {
    try {
      count(chunk.byteLength);
      const wait = file!.push(chunk);
      if (wait) {
        stream.pause();
        wait.then(() => stream.resume(), failWith);
      }
    } catch (err) {
      failWith(err);
    }
  };
  // Listening before the file is open: busboy may end or error the part (a truncated body) meanwhile.
  stream.once("end", () => ended.resolve());
  stream.once("error", failWith);
  stream.once("close", () => failWith(new Error("the file part was closed before its end")));
  try {
    file = await DurableFile.create(path, { maxBytes });
  } catch (err) {
    failWith(err);
  }
  // Only now does the part flow: no chunk arrives before there is a file to take it.
  if (!failed) stream.on("data", onData);
  try {
    await ended.promise;
  } catch (err) {
    await file?.discard();
    throw err;
  }
  return file!.finish();
}

function malformedBody(err: unknown): ApiError {
  const message = errorMessage(err);
  const truncated = /unexpected end/i.test(message);
  return new ApiError(
    "MALFORMED_MULTIPART",
    truncated ? "the multipart body ended before its closing boundary (truncated upload); send the whole body" : `malformed multipart body: ${message}`,
  );
}

/**
 * Browsers and fetch escape `"`, CR and LF in multipart file names as %22, %0D and %0A (WHATWG
 * multipart/form-data encoding); busboy leaves them escaped. Undo the quote, drop line breaks.
 */
export function decodeFormFilename(raw: string): string {
  return raw.replace(/%22/g, '"').replace(/%0[dDaA]/g, " ").replace(/[\u0000-\u001f\u007f]/g, "").trim();
}
