/**
 * Request bodies that the framework parses (JSON, text, forms) are read through a size cap and,
 * for JSON, a nesting cap before any parser or validator sees them. Upload routes read
 * `request.body` as a stream themselves and are unaffected.
 *
 * Why here and not in a parse hook: a global parse hook makes Elysia parse the body of every
 * route, raw upload routes included. Instead the guard gives each request its own `json()`,
 * `text()`, `arrayBuffer()`, `formData()`, `blob()` and `bytes()`, which Elysia's parsers call.
 *
 * Why a nesting cap: validating a 10,000-deep array took Elysia 16-33 s of the event loop (its
 * error message pretty-prints the value: quadratic in depth), and a deep array inside an object
 * overflowed the stack. No request of this API nests past a few levels.
 */
import { ApiError } from "../errors.ts";

/** JSON request bodies are small by nature (the largest the spec allows is a 32 KB schema). */
export const MAX_JSON_BODY_BYTES = 1024 * 1024;
/** Arrays and objects inside one another; custom schemas (depth 3) need about a dozen. */
export const MAX_JSON_DEPTH = 64;

/**
 * Values (array items and object members) in one body. Elysia's validation failure prints the
 * whole value; a 1 MiB array of half a million numbers took it 0.1-0.7 s of the event loop. The
 * largest body of this API (a custom schema: 200 nodes) holds a few thousand.
 */
export const MAX_JSON_VALUES = 20_000;

const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACE = 0x7d;
const CLOSE_BRACKET = 0x5d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;

/**
 * How deep arrays and objects nest in JSON text and how many values they hold (one more than
 * their commas), in one linear pass that stops as soon as either passes its limit.
 */
export function jsonShape(text: string, limits = { depth: Number.POSITIVE_INFINITY, values: Number.POSITIVE_INFINITY }): { depth: number; values: number } {
  let depth = 0;
  let deepest = 0;
  let values = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) inString = false;
    } else if (c === QUOTE) inString = true;
    else if (c === COMMA) {
      if (++values > limits.values) break;
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      values++;
      if (++depth > deepest) deepest = depth;
      if (deepest > limits.depth) break;
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) depth--;
  }
  return { depth: deepest, values };
}

/** JSON.parse within the caps; malformed, too deep or too many values is a 400 with the envelope. */
export function parseJsonBody(text: string): unknown {
  const shape = jsonShape(text, { depth: MAX_JSON_DEPTH, values: MAX_JSON_VALUES });
  if (shape.depth > MAX_JSON_DEPTH) {
    throw new ApiError("VALIDATION_ERROR", `the JSON body nests arrays and objects more than ${MAX_JSON_DEPTH} levels deep`);
  }
  if (shape.values > MAX_JSON_VALUES) {
    throw new ApiError("VALIDATION_ERROR", `the JSON body holds more than ${MAX_JSON_VALUES} values (array items and object members)`);
  }
  try {
    return JSON.parse(text);
  } catch {
    throw new ApiError("VALIDATION_ERROR", "request body could not be parsed; send valid JSON with Content-Type: application/json");
  }
}

function tooLarge(limit: number, got: string): ApiError {
  return new ApiError("PAYLOAD_TOO_LARGE", `request bodies of this route are limited to ${limit} bytes (got ${got})`);
}

/** The whole body, refusing it (and cancelling the rest) once it passes `limit` bytes. */
export async function readBody(request: Request, limit: number): Promise<Uint8Array<ArrayBuffer>> {
  const declared = Number(request.headers.get("content-length") ?? Number.NaN);
  if (declared > limit) throw tooLarge(limit, String(declared));
  if (!request.body) return new Uint8Array(0);
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > limit) {
        await reader.cancel().catch(() => {});
        throw tooLarge(limit, `more than ${limit}`);
      }
      chunks.push(value);
    }
  } finally {
    reader.releaseLock();
  }
  const whole = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    whole.set(chunk, at);
    at += chunk.byteLength;
  }
  return whole;
}

/**
 * Gives `request` body readers with the size cap (and `json()` the nesting cap). Each reads the
 * body once, as the originals do.
 */
export function boundBodyReaders(request: Request, limit = MAX_JSON_BODY_BYTES): void {
  const bytes = () => readBody(request, limit);
  const text = async () => new TextDecoder().decode(await bytes());
  const readers: Record<string, () => Promise<unknown>> = {
    bytes,
    text,
    json: async () => parseJsonBody(await text()),
    arrayBuffer: async () => (await bytes()).buffer,
    blob: async () => new Blob([await bytes()], { type: request.headers.get("content-type") ?? "" }),
    formData: async () => new Response(await bytes(), { headers: { "content-type": request.headers.get("content-type") ?? "" } }).formData(),
  };
  for (const [name, read] of Object.entries(readers)) Object.defineProperty(request, name, { value: read, configurable: true });
}
