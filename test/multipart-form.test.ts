/**
 * The multipart reader on its own: bodies built byte by byte and fed in awkward chunk sizes, so
 * boundaries, headers and file names that straddle chunks are exercised without a server.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ApiError } from "../src/errors.ts";
import { parseMultipartForm, type FormLimits } from "../src/ingest/multipart-form.ts";
import { boundaryOf, MultipartParser, type PartHeaders } from "../src/ingest/multipart-parser.ts";

const root = mkdtempSync(join(tmpdir(), "mediabox-multipart-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const LIMITS: FormLimits = { fileFields: ["file", "files"], maxFileBytes: 1_000_000, maxFiles: 3, maxTotalBytes: 2_000_000, abortOnOversizedFile: false, oversizeMessage: "too big" };
const BOUNDARY = "----mediabox-test-boundary";
const encoder = new TextEncoder();

type Part = { name: string; filename?: string; disposition?: string; type?: string; body: Uint8Array | string };

function body(parts: Part[], { close = true } = {}): Uint8Array {
  const pieces: Uint8Array[] = [];
  for (const part of parts) {
    const disposition = part.disposition ?? `form-data; name="${part.name}"${part.filename !== undefined ? `; filename="${part.filename}"` : ""}`;
    pieces.push(encoder.encode(`--${BOUNDARY}\r\nContent-Disposition: ${disposition}\r\n${part.type ? `Content-Type: ${part.type}\r\n` : ""}\r\n`));
    pieces.push(typeof part.body === "string" ? encoder.encode(part.body) : part.body);
    pieces.push(encoder.encode("\r\n"));
  }
  if (close) pieces.push(encoder.encode(`--${BOUNDARY}--\r\n`));
  return Buffer.concat(pieces);
}

/** A request whose body arrives in chunks of `chunkSize` bytes (1 splits every boundary). */
function request(bytes: Uint8Array, chunkSize: number): Request {
  let at = 0;
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (at >= bytes.length) return controller.close();
      controller.enqueue(bytes.slice(at, at + chunkSize));
      at += chunkSize;
    },
  });
  return new Request("http://localhost/upload", { method: "POST", body: stream, headers: { "content-type": `multipart/form-data; boundary=${BOUNDARY}` } });
}

let dirs = 0;
const stagingDir = () => join(root, `req-${dirs++}`);

function randomBytes(size: number): Uint8Array {
  const bytes = new Uint8Array(size);
  for (let i = 0; i < size; i += 65536) crypto.getRandomValues(bytes.subarray(i, Math.min(size, i + 65536)));
  return bytes;
}

async function failure(promise: Promise<unknown>): Promise<ApiError> {
  const err = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ApiError);
  return err as ApiError;
}

describe("parseMultipartForm", () => {
  for (const chunkSize of [1, 7, 4096, 1 << 20]) {
    test(`fields and files come through whole, with their hashes, in chunks of ${chunkSize} bytes`, async () => {
      const file = randomBytes(chunkSize === 1 ? 3000 : 300_000);
      // A file holding the boundary's prefix and a CRLF right before the real boundary.
      file.set(encoder.encode(`\r\n--${BOUNDARY.slice(0, 10)}`), 100);
      const dir = stagingDir();
      const form = await parseMultipartForm(
        request(body([{ name: "title", body: "Q3 report — ünïcode" }, { name: "file", filename: "a.bin", type: "application/x-thing", body: file }, { name: "tags", body: "" }]), chunkSize),
        dir,
        LIMITS,
      );
      expect(form.fields).toEqual({ title: "Q3 report — ünïcode", tags: "" });
      expect(form.files).toHaveLength(1);
      const [staged] = form.files;
      expect(staged).toMatchObject({ index: 0, field: "file", filename: "a.bin", declaredType: "application/x-thing", size: file.length });
      expect(staged!.sha256).toBe(new Bun.CryptoHasher("sha256").update(file).digest("hex"));
      expect(Buffer.compare(readFileSync(staged!.path!), file)).toBe(0);
      expect(staged!.head).toEqual(file.subarray(0, staged!.head.length));
    });
  }

  test("UTF-8 file names (as browsers send them), RFC 5987 names, paths and escapes", async () => {
    const japanese = "日本語のファイル名🙂—Überraschung.png";
    const form = await parseMultipartForm(
      request(
        body([
          { name: "files", filename: japanese, body: "a" },
          { name: "files", disposition: `form-data; name="files"; filename="fallback.txt"; filename*=UTF-8''%E2%82%AC%20rates.txt`, body: "b" },
          { name: "files", filename: "C:\\\\fakepath\\\\scan%22one%22.pdf", body: "c" },
        ]),
        5,
      ),
      stagingDir(),
      LIMITS,
    );
    expect(form.files.map((f) => f.filename)).toEqual([japanese, "€ rates.txt", 'scan"one".pdf']);
  });

  test("a body cut off mid-file is MALFORMED_MULTIPART and leaves no staged file", async () => {
    const dir = stagingDir();
    const err = await failure(parseMultipartForm(request(body([{ name: "file", filename: "a.bin", body: randomBytes(50_000) }], { close: false }).subarray(0, 30_000), 4096), dir, LIMITS));
    expect(err.code).toBe("MALFORMED_MULTIPART");
    expect(err.message).toContain("closing boundary");
    expect(existsSync(dir) ? readdirSync(dir) : []).toEqual([]);
  });

  test("a body that ends right after a boundary, inside a part's headers or before any boundary is truncated too", async () => {
    for (const bytes of [encoder.encode(`--${BOUNDARY}\r\n`), encoder.encode(`--${BOUNDARY}\r\nContent-Disposition: form-da`), encoder.encode("no boundary here"), new Uint8Array()]) {
      const err = await failure(parseMultipartForm(request(bytes, 3), stagingDir(), LIMITS));
      expect(err.code).toBe("MALFORMED_MULTIPART");
    }
  });

  test("limits: an unexpected file field, too many files, an oversized field value", async () => {
    expect((await failure(parseMultipartForm(request(body([{ name: "photo", filename: "a.png", body: "x" }]), 64), stagingDir(), LIMITS))).message).toContain('unexpected file field "photo"');
    const four = [1, 2, 3, 4].map((i) => ({ name: "files", filename: `${i}.txt`, body: `${i}` }));
    expect((await failure(parseMultipartForm(request(body(four), 64), stagingDir(), LIMITS))).code).toBe("BATCH_TOO_LARGE");
    const longField = await failure(parseMultipartForm(request(body([{ name: "title", body: "x".repeat(70_000) }]), 4096), stagingDir(), LIMITS));
    expect(longField.code).toBe("VALIDATION_ERROR");
    expect(longField.message).toContain("longer than 65536 bytes");
  });

  test("an oversized file is recorded without its bytes in a batch, and stops a single upload", async () => {
    const small = { ...LIMITS, maxFileBytes: 10_000 };
    const dir = stagingDir();
    const form = await parseMultipartForm(
      request(body([{ name: "files", filename: "big.bin", body: randomBytes(25_000) }, { name: "files", filename: "ok.bin", body: randomBytes(500) }]), 1000),
      dir,
      small,
    );
    expect(form.files.map((f) => [f.filename, f.path === null, f.size])).toEqual([
      ["big.bin", true, 10_001],
      ["ok.bin", false, 500],
    ]);
    expect(readdirSync(dir)).toEqual(["1"]);
    const single = await failure(parseMultipartForm(request(body([{ name: "file", filename: "big.bin", body: randomBytes(25_000) }]), 1000), stagingDir(), { ...small, abortOnOversizedFile: true }));
    expect(single.code).toBe("FILE_TOO_LARGE");
    const total = await failure(
      parseMultipartForm(
        request(body([1, 2, 3].map((i) => ({ name: "files", filename: `${i}.bin`, body: randomBytes(9_000) }))), 1000),
        stagingDir(),
        { ...small, maxTotalBytes: 20_000 },
      ),
    );
    expect(total.code).toBe("PAYLOAD_TOO_LARGE");
  });

  test("a stream that errors mid-body (a dropped connection) fails the request and removes its files", async () => {
    const dir = stagingDir();
    const bytes = body([{ name: "file", filename: "a.bin", body: randomBytes(200_000) }]);
    let sent = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent > 100_000) return controller.error(new Error("connection reset"));
        controller.enqueue(bytes.slice(sent, sent + 8192));
        sent += 8192;
      },
    });
    const req = new Request("http://localhost/upload", { method: "POST", body: stream, headers: { "content-type": `multipart/form-data; boundary=${BOUNDARY}` } });
    const err = await failure(parseMultipartForm(req, dir, LIMITS));
    expect(err.code).toBe("MALFORMED_MULTIPART");
    expect(existsSync(dir)).toBe(false);
  });
});

describe("MultipartParser", () => {
  /** Parses `bytes` cut at `cuts` (offsets), answering each part's headers and bytes as text. */
  function parse(boundary: string, bytes: Uint8Array, cuts: number[] = []): { headers: PartHeaders; body: string }[] {
    const parts: { headers: PartHeaders; body: string }[] = [];
    const parser = new MultipartParser(boundary, (headers) => {
      const pieces: Uint8Array[] = [];
      return {
        data: (chunk) => void pieces.push(chunk.slice()),
        end: () => void parts.push({ headers, body: Buffer.concat(pieces).toString("latin1") }),
      };
    });
    let from = 0;
    for (const cut of [...cuts, bytes.length]) {
      parser.write(bytes.subarray(from, cut));
      from = cut;
    }
    parser.end();
    return parts;
  }

  test("a delimiter straddling two chunks at every position, with a dash-heavy boundary and near-miss bytes, is found", () => {
    const boundary = "------WebKitFormBoundaryAbC";
    // Bodies that hold delimiter prefixes ("\r\n--", "\r\n------WebKit") that are not delimiters.
    const text = `preamble\r\n--${boundary}\r\nContent-Disposition: form-data; name="f"; filename="x.bin"\r\n\r\nA\r\n--\r\n------WebKit\r-\r\n\r\n-${boundary.slice(0, 20)}Z\r\n--${boundary}\r\nContent-Disposition: form-data; name="t"\r\n\r\nvalue\r\n--${boundary}--\r\nepilogue`;
    const bytes = Buffer.from(text, "latin1");
    const expected = parse(boundary, bytes);
    expect(expected.map((p) => [p.headers.name, p.body])).toEqual([
      ["f", `A\r\n--\r\n------WebKit\r-\r\n\r\n-${boundary.slice(0, 20)}Z`],
      ["t", "value"],
    ]);
    for (let cut = 1; cut < bytes.length; cut++) expect(parse(boundary, bytes, [cut])).toEqual(expected);
    for (let a = 1; a < bytes.length; a += 3) for (let b = a + 1; b < bytes.length; b += 5) expect(parse(boundary, bytes, [a, b])).toEqual(expected);
  });

  test("part headers: quoted values with semicolons and escapes, bare values, folded lines, charset, no headers at all", () => {
    const text =
      `--B\r\nContent-Disposition: form-data; name="a;b"; filename="x\\"y.png"\r\nContent-Type: Image/PNG; charset=x\r\n\r\n1\r\n` +
      `--B\r\nContent-Disposition: form-data;\r\n name=plain\r\n\r\n2\r\n` +
      `--B\r\n\r\n3\r\n--B  \r\ncontent-disposition: form-data; name="t"\r\ncontent-type: text/plain; charset="iso-8859-1"\r\n\r\n4\r\n--B--`;
    const parts = parse("B", Buffer.from(text, "latin1"));
    expect(parts.map((p) => p.headers)).toEqual([
      { name: "a;b", filename: 'x"y.png', contentType: "image/png", charset: "x" },
      { name: "plain", filename: undefined, contentType: "", charset: undefined },
      { name: "", filename: undefined, contentType: "", charset: undefined },
      { name: "t", filename: undefined, contentType: "text/plain", charset: "iso-8859-1" },
    ]);
    expect(parts.map((p) => p.body)).toEqual(["1", "2", "3", "4"]);
  });

  test("malformed bodies are refused: bytes after a boundary, a header line without a name, headers without end, no closing boundary", () => {
    const refuse = (text: string) => expect(() => parse("B", Buffer.from(text, "latin1"))).toThrow();
    refuse("--Bx\r\n\r\n1\r\n--B--");
    refuse("--B\r\nnot a header\r\n\r\n1\r\n--B--");
    refuse(`--B\r\nX-Long: ${"a".repeat(70_000)}`);
    refuse("--B\r\n\r\n1\r\n--B");
    refuse("--B\r\n\r\n1\r\n--B-x");
    expect(boundaryOf('multipart/form-data; boundary="a b;c"')).toBe("a b;c");
    expect(boundaryOf("multipart/form-data; charset=utf-8; BOUNDARY=xyz")).toBe("xyz");
    expect(boundaryOf("multipart/form-data")).toBeNull();
  });
});
