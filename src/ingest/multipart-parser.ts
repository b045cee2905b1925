/**
 * A push parser for multipart/form-data bodies (RFC 7578 over RFC 2046): chunks go in as they
 * arrive, each part's headers and bytes come out through the sink the caller returns for it, as
 * views of the chunks given (no copy) except where a delimiter straddles two chunks.
 *
 * Why not a library: busboy searches for the boundary in JavaScript and pushes every chunk through
 * a Node stream per part, which was half the request thread's CPU on a 100 MB upload
 * (scripts/bench/upload.ts); multipasta, the other streaming parser, loses a delimiter that
 * straddles two chunks in some alignments (its partial-match check) and takes only Latin-1 file
 * names. This one finds delimiters with the native Buffer#indexOf and carries at most a
 * delimiter's length between chunks.
 */

export class MultipartSyntaxError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "MultipartSyntaxError";
  }
}

export interface PartHeaders {
  /** The form field's name ("" when the disposition names none). */
  name: string;
  /** The file name sent, undefined for a plain field. */
  filename: string | undefined;
  /** The part's Content-Type, lower-cased without parameters; "" when absent. */
  contentType: string;
  /** The charset parameter of the Content-Type, if any. */
  charset: string | undefined;
}

/** Where one part's bytes go; `data` may throw to stop the parse (the error surfaces from write). */
export interface PartSink {
  data(chunk: Uint8Array): void;
  end(): void;
}

/** Part headers larger than this (all lines together) are refused. */
export const MAX_PART_HEADER_BYTES = 64 * 1024;

const CR = 13;
const LF = 10;
const DASH = 45;
const encoder = new TextEncoder();
const decoder = new TextDecoder();
const HEADER_END = encoder.encode("\r\n\r\n");

type State = "body" | "afterDelimiter" | "afterDash" | "afterCr" | "headers" | "done";

export class MultipartParser {
  /** "\r\n--boundary": every delimiter, the first included once the body is seen as starting with CRLF. */
  private readonly delimiter: Buffer;
  private state: State = "body";
  /** Bytes held back at a chunk's end that may begin a delimiter. */
  private carry: Uint8Array = encoder.encode("\r\n");
  private header: Uint8Array = new Uint8Array(0);
  /** null before the first delimiter (the preamble, which is dropped) and for a skipped part. */
  private sink: PartSink | null = null;

  constructor(
    boundary: string,
    private readonly onPart: (headers: PartHeaders) => PartSink | null,
  ) {
    this.delimiter = Buffer.from(`\r\n--${boundary}`);
  }

  get finished(): boolean {
    return this.state === "done";
  }

  write(input: Uint8Array): void {
    let chunk = input;
    if (this.carry.length > 0) {
      chunk = Buffer.concat([this.carry, input]);
      this.carry = new Uint8Array(0);
    }
    let at = 0;
    while (at < chunk.length && this.state !== "done") {
      switch (this.state) {
        case "body":
          at = this.body(chunk, at);
          break;
        case "headers":
          at = this.headers(chunk, at);
          break;
        default:
          at = this.afterDelimiter(chunk, at);
      }
    }
  }

  /** The body ended: anything but a closed form is a truncated one. */
  end(): void {
    if (this.state !== "done") throw new MultipartSyntaxError("the multipart body ended before its closing boundary");
  }

  private body(chunk: Uint8Array, at: number): number {
    const view = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    const found = view.indexOf(this.delimiter, at);
    if (found >= 0) {
      if (found > at) this.sink?.data(chunk.subarray(at, found));
      this.sink?.end();
      this.sink = null;
      this.state = "afterDelimiter";
      return found + this.delimiter.length;
    }
    // No whole delimiter: hold back the longest tail that begins one, pass the rest on.
    const keep = this.delimiterPrefixAtEnd(chunk, at);
    if (chunk.length - keep > at) this.sink?.data(chunk.subarray(at, chunk.length - keep));
    if (keep > 0) this.carry = chunk.slice(chunk.length - keep);
    return chunk.length;
  }

  /** Length of the longest proper prefix of the delimiter that ends `chunk` (starting at or after `from`). */
  private delimiterPrefixAtEnd(chunk: Uint8Array, from: number): number {
    const longest = Math.min(this.delimiter.length - 1, chunk.length - from);
    for (let start = chunk.length - longest; start < chunk.length; start++) {
      if (chunk[start] !== CR) continue;
      let matches = true;
      for (let i = start + 1; i < chunk.length && matches; i++) matches = chunk[i] === this.delimiter[i - start];
      if (matches) return chunk.length - start;
    }
    return 0;
  }

  /** After a delimiter: "--" closes the form, CRLF opens a part's headers; spaces may pad either. */
  private afterDelimiter(chunk: Uint8Array, at: number): number {
    const byte = chunk[at]!;
    if (this.state === "afterDash") {
      if (byte !== DASH) throw new MultipartSyntaxError("malformed closing boundary");
      this.state = "done";
    } else if (this.state === "afterCr") {
      if (byte !== LF) throw new MultipartSyntaxError("a boundary line must end with CRLF");
      this.state = "headers";
      // The CRLF just read begins the header block, so an empty block is found as CRLFCRLF.
      this.header = encoder.encode("\r\n");
    } else if (byte === DASH) this.state = "afterDash";
    else if (byte === CR) this.state = "afterCr";
    else if (byte !== 0x20 && byte !== 0x09) throw new MultipartSyntaxError("unexpected bytes after a boundary");
    return at + 1;
  }

  private headers(chunk: Uint8Array, at: number): number {
    const seen = this.header.length;
    const room = MAX_PART_HEADER_BYTES + 2 - seen;
    const limit = at + Math.min(chunk.length - at, room + HEADER_END.length);
    // Only up to the first blank line in this chunk (the usual end of the block): copying all the
    // room allowed for headers was 64 KB a part, ~1.5 MB of copying for a batch of 50 notes.
    const blank = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength).indexOf(HEADER_END, at);
    const piece = chunk.subarray(at, blank >= 0 && blank + HEADER_END.length <= limit ? blank + HEADER_END.length : limit);
    const joined = Buffer.concat([this.header, piece]);
    const end = joined.indexOf(HEADER_END, Math.max(0, seen - HEADER_END.length + 1));
    if (end < 0) {
      if (joined.length > MAX_PART_HEADER_BYTES + 2) throw new MultipartSyntaxError(`a part's headers are larger than ${MAX_PART_HEADER_BYTES} bytes`);
      this.header = joined;
      return at + piece.length;
    }
    this.header = new Uint8Array(0);
    this.state = "body";
    this.sink = this.onPart(parsePartHeaders(decoder.decode(joined.subarray(2, end))));
    return at + (end + HEADER_END.length - seen);
  }
}

/** The boundary parameter of a multipart Content-Type, or null when it has none usable. */
export function boundaryOf(contentType: string): string | null {
  const match = /;\s*boundary\s*=\s*(?:"([^"]{1,200})"|([^\s;"]{1,200}))/i.exec(contentType);
  return match ? (match[1] ?? match[2]!) : null;
}

function parsePartHeaders(block: string): PartHeaders {
  const headers = new Map<string, string>();
  let last: string | null = null;
  for (const line of block.split("\r\n")) {
    if (line === "") continue;
    if ((line[0] === " " || line[0] === "\t") && last !== null) {
      headers.set(last, `${headers.get(last)} ${line.trim()}`); // an obsolete folded line
      continue;
    }
    const colon = line.indexOf(":");
    if (colon <= 0) throw new MultipartSyntaxError("a part header line has no name");
    last = line.slice(0, colon).trim().toLowerCase();
    if (!headers.has(last)) headers.set(last, line.slice(colon + 1).trim());
  }
  const disposition = parameters(headers.get("content-disposition") ?? "");
  const type = headers.get("content-type") ?? "";
  const typeParameters = parameters(type);
  return {
    name: disposition.name ?? "",
    filename: dispositionFilename(disposition),
    contentType: type.split(";")[0]!.trim().toLowerCase(),
    charset: typeParameters.charset,
  };
}

/**
 * `; key=value` parameters of a header, values quoted (with backslash escapes) or bare. Quoted
 * values may hold any character, since browsers send UTF-8 file names in them as they are.
 */
function parameters(header: string): Record<string, string> {
  const result: Record<string, string> = {};
  for (const match of header.matchAll(/;\s*([!#$%&'*+.^\w`|~-]+)\s*=\s*(?:"((?:[^"\\]|\\[\s\S])*)"|([^;\s]*))/g)) {
    const key = match[1]!.toLowerCase();
    if (!(key in result)) result[key] = match[2] !== undefined ? match[2].replace(/\\([\s\S])/g, "$1") : match[3]!;
  }
  return result;
}

/** `filename*=UTF-8''…` (RFC 5987) over `filename`; a malformed escape leaves the plain one. */
function dispositionFilename(disposition: Record<string, string>): string | undefined {
  const extended = /^utf-8'[^']*'(.*)$/i.exec(disposition["filename*"] ?? "");
  if (extended) {
    try {
      return decodeURIComponent(extended[1]!);
    } catch {
      // fall through to the plain name
    }
  }
  return disposition.filename;
}
