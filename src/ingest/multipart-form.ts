/**
 * Reads a multipart/form-data request body (multipart-parser.ts) into the staging directory: each
 * file part is written to disk while its SHA-256 is computed and its first bytes are kept for
 * type detection, so memory stays flat whatever the file size. Text fields are collected as
 * strings. The limits of a form (files, fields, sizes) are enforced here, as the bytes arrive.
 */
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { ApiError, badRequest, ClientDisconnectedError, errorMessage } from "../errors.ts";
import { DurableFile, SizeLimitError } from "../storage/disk.ts";
import { boundaryOf, MultipartParser, MultipartSyntaxError, type PartHeaders, type PartSink } from "./multipart-parser.ts";

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
const MAX_FIELDS = 100;
const MAX_PARTS = 10_000;
const MAX_EPILOGUE_BYTES = 64 * 1024;

/**
 * How an ingest service receives a form without seeing HTTP: it names the staging directory and
 * its limits, the reader streams the files there. Routes pass `formOf(request)`.
 */
export type FormReader = (stagingDir: string, limits: FormLimits) => Promise<ParsedForm>;

export function formOf(request: Request): FormReader {
  return (stagingDir, limits) => parseMultipartForm(request, stagingDir, limits);
}

/**
 * Reads the form. Whatever the client does (a body cut off before its closing boundary, a
 * connection dropped mid-file, a part too large), this settles: every staging file it opened is
 * closed and removed, and the failure is thrown as an ApiError for this request alone.
 */
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

  const fields: Record<string, string> = {};
  const files: StagedUpload[] = [];
  const receivers: FileReceiver[] = [];
  let fieldCount = 0;
  let total = 0;
  let failure: unknown = null;
  let parts = 0;
  const fail = (err: unknown) => {
    failure ??= err;
  };

  const boundary = boundaryOf(contentType);
  if (!boundary) throw new ApiError("MALFORMED_MULTIPART", "malformed multipart body: the content type names no boundary");
  const parser = new MultipartParser(boundary, (part) => {
    if (failure !== null) return null;
    if (++parts > MAX_PARTS) throw badRequest(`at most ${MAX_PARTS} parts per request`);
    // As browsers see it: a part is a file when it names one or declares raw bytes.
    if (!part.filename && part.contentType !== "application/octet-stream") {
      if (++fieldCount > MAX_FIELDS) throw badRequest(`at most ${MAX_FIELDS} form fields per request`);
      return fieldSink(part, (value) => {
        fields[part.name] = value;
      });
    }
    if (!limits.fileFields.includes(part.name)) {
      throw badRequest(`unexpected file field "${part.name}"; send files as ${limits.fileFields.join(" or ")}`);
    }
    const index = files.length;
    if (limits.maxFiles !== null && index >= limits.maxFiles) {
      throw new ApiError("BATCH_TOO_LARGE", `at most ${limits.maxFiles} files per request for this tier`);
    }
    const filename = decodeFormFilename(baseName(part.filename ?? "")) || `file-${index + 1}`;
    const entry: StagedUpload = { index, field: part.name, filename, declaredType: part.contentType, path: null, size: 0, sha256: "", head: new Uint8Array() };
    files.push(entry);
    const receiver = new FileReceiver(join(stagingDir, `${index}`), limits.maxFileBytes, (bytes) => {
      total += bytes;
      if (total > limits.maxTotalBytes) throw new ApiError("PAYLOAD_TOO_LARGE", `the files in this request exceed ${limits.maxTotalBytes} bytes in total`);
    });
    receiver.outcome.then(
      (written) => {
        if (written) Object.assign(entry, { path: written.path, size: written.size, sha256: written.sha256, head: written.head });
      },
      (err) => {
        if (!(err instanceof SizeLimitError)) return fail(err);
        entry.size = limits.maxFileBytes + 1;
        if (limits.abortOnOversizedFile) fail(new ApiError("FILE_TOO_LARGE", limits.oversizeMessage));
      },
    );
    receivers.push(receiver);
    return { data: (chunk) => receiver.take(chunk), end: () => receiver.end() };
  });

  // Feed the body chunk by chunk; before the next one, wait until every file has taken its share
  // (the writers hold views of the chunk until then), which is the backpressure on the client.
  const reader = request.body.getReader();
  // After the closing boundary only an epilogue may follow (a line break, usually): it is read
  // and dropped, up to MAX_EPILOGUE_BYTES, so the connection stays usable for the next request.
  let epilogue = 0;
  try {
    while (failure === null) {
      const next = await reader.read();
      if (next.done) {
        parser.end();
        break;
      }
      if (parser.finished) {
        if ((epilogue += next.value.byteLength) > MAX_EPILOGUE_BYTES) break;
        continue;
      }
      parser.write(next.value);
      for (const receiver of receivers) if (receiver.busy) await receiver.idle();
    }
  } catch (err) {
    if (err instanceof ApiError) fail(err);
    else if (err instanceof MultipartSyntaxError) fail(err.message.includes("closing boundary") ? truncated() : malformedBody(err));
    else fail(request.signal.aborted ? new ClientDisconnectedError() : malformedBody(err));
  }
  if (failure !== null) {
    reader.cancel().catch(() => {});
    for (const receiver of receivers) receiver.discard();
  }
  await Promise.allSettled(receivers.map((receiver) => receiver.outcome));
  if (failure !== null) {
    await rm(stagingDir, { recursive: true, force: true });
    throw failure;
  }
  return { fields, files };
}

/** Collects a text field, refusing values over MAX_FIELD_BYTES. */
function fieldSink(part: PartHeaders, done: (value: string) => void): PartSink {
  const pieces: Uint8Array[] = [];
  let size = 0;
  return {
    data(chunk) {
      size += chunk.byteLength;
      if (size > MAX_FIELD_BYTES) throw badRequest(`${part.name}: field value is longer than ${MAX_FIELD_BYTES} bytes`);
      pieces.push(chunk.slice());
    },
    end() {
      done(textDecoder(part.charset).decode(Buffer.concat(pieces)));
    },
  };
}

function textDecoder(charset: string | undefined): TextDecoder {
  try {
    return new TextDecoder(charset ?? "utf-8");
  } catch {
    return new TextDecoder("utf-8");
  }
}

/**
 * One file part on its way to disk. A chunk goes straight to the file's writer unless the file is
 * still opening or a write holds chunks back; then it waits its turn on `pending`, and the
 * parser's loop waits for `idle` before the next body chunk. A chunk past maxBytes, a failed
 * write or `discard` drops the file.
 */
class FileReceiver {
  /** The written file; null when discarded; rejects with the failure (SizeLimitError past maxBytes). */
  readonly outcome: Promise<{ path: string; size: number; sha256: string; head: Uint8Array } | null>;
  private file: DurableFile | null = null;
  /** The last step queued, cleared when it settles as the last; it never rejects. */
  private pending: Promise<void> | null;
  private failure: unknown = null;
  private discarded = false;
  private readonly ended = Promise.withResolvers<void>();

  constructor(
    path: string,
    maxBytes: number,
    private readonly count: (bytes: number) => void,
  ) {
    this.pending = this.queued(
      DurableFile.create(path, { maxBytes }).then((file) => {
        this.file = file;
      }),
    );
    this.outcome = this.settle(path);
    // The failure is read through `outcome` by the form; it must never surface as unhandled.
    this.outcome.catch(() => {});
  }

  get busy(): boolean {
    return this.pending !== null;
  }

  async idle(): Promise<void> {
    while (this.pending) await this.pending;
  }

  take(chunk: Uint8Array): void {
    if (this.failure !== null || this.discarded) return;
    if (this.pending) {
      this.pending = this.queued(this.pending.then(() => this.write(chunk)));
      return;
    }
    try {
      const wait = this.write(chunk);
      if (wait) this.pending = this.queued(wait);
    } catch (err) {
      this.fail(err);
    }
  }

  end(): void {
    this.ended.resolve();
  }

  discard(): void {
    this.discarded = true;
    this.ended.resolve();
  }

  private write(chunk: Uint8Array): Promise<void> | undefined {
    if (this.failure !== null || this.discarded) return undefined;
    this.count(chunk.byteLength);
    return this.file!.push(chunk);
  }

  private queued(step: Promise<void> | undefined): Promise<void> {
    const tail: Promise<void> = Promise.resolve(step).then(
      () => {
        if (this.pending === tail) this.pending = null;
      },
      (err) => {
        this.fail(err);
        if (this.pending === tail) this.pending = null;
      },
    );
    return tail;
  }

  private fail(err: unknown): void {
    this.failure ??= err;
    this.ended.resolve();
  }

  private async settle(path: string) {
    await this.ended.promise;
    await this.idle();
    if (this.failure === null && !this.discarded) return { path, ...(await this.file!.finish()) };
    await this.file?.discard();
    if (this.failure !== null) throw this.failure;
    return null;
  }
}

function truncated(): ApiError {
  return new ApiError("MALFORMED_MULTIPART", "the multipart body ended before its closing boundary (truncated upload); send the whole body");
}

function malformedBody(err: unknown): ApiError {
  return new ApiError("MALFORMED_MULTIPART", `malformed multipart body: ${errorMessage(err)}`);
}

/** A browser may send a path ("C:\\fakepath\\a.jpg"); the file's name is its last segment. */
function baseName(filename: string): string {
  return filename.slice(Math.max(filename.lastIndexOf("/"), filename.lastIndexOf("\\")) + 1);
}

/**
 * Browsers and fetch escape `"`, CR and LF in multipart file names as %22, %0D and %0A (WHATWG
 * multipart/form-data encoding); the parser leaves them escaped. Undo the quote, drop line breaks.
 */
export function decodeFormFilename(raw: string): string {
  return raw.replace(/%22/g, '"').replace(/%0[dDaA]/g, " ").replace(/[\u0000-\u001f\u007f]/g, "").trim();
}
