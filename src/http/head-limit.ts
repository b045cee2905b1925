/**
 * The size limit of a request's head (request line and headers), enforced by the application so
 * that an oversized one (a long query string, a large cookie) gets the JSON envelope: 431
 * HEADERS_TOO_LARGE. Bun answers heads over its own limit (`--max-http-header-size`, 16 KiB by
 * default) with an empty 431 before any handler runs, so every way of starting the server
 * raises Bun's limit to RUNTIME_HEAD_BYTES with RUNTIME_HEAD_FLAG: package.json's `start` and
 * `mediabox` scripts and the compiled binary's embedded arguments (scripts/build.ts). A head
 * over RUNTIME_HEAD_BYTES still gets Bun's empty 431 (README, Honest limits).
 *
 * Why 256 KiB: Bun holds a connection's head in memory until it is complete, so the runtime
 * limit is also what one connection can pin (measured: 200 connections each holding a 1 MiB
 * head unfinished took the RSS from 33 to 288 MiB until Bun's 10 s idle timeout closed them).
 * 256 KiB is 16 times what clients may send, more than any head a client builds by accident
 * (browsers cap a cookie at 4 KiB), and 1,000 such connections pin 250 MiB at most.
 */
import { Elysia } from "elysia";
import http from "node:http";
import { ApiError } from "../errors.ts";
import type { Logger } from "../log.ts";

/** What clients may send: Bun's and Node's default, so no client that worked before is refused. */
export const MAX_HEAD_BYTES = 16 * 1024;
/** What Bun is told to accept, so that heads between the two reach the application. */
export const RUNTIME_HEAD_BYTES = 256 * 1024;
export const RUNTIME_HEAD_FLAG = `--max-http-header-size=${RUNTIME_HEAD_BYTES}`;

/** The head's size as it came over the wire: `METHOD target HTTP/1.1`, then `name: value` lines. */
export function headBytes(request: Request, target: string): number {
  let size = request.method.length + target.length + 11;
  request.headers.forEach((value, name) => {
    size += name.length + value.length + 4;
  });
  return size + 2;
}

export function headLimit(log: Logger) {
  // http.maxHeaderSize is Bun's limit in this process (the flag, or the same flag in BUN_OPTIONS).
  // Info on stdout, not a warning: a start that then fails must print its one error line alone.
  if (http.maxHeaderSize <= MAX_HEAD_BYTES) {
    log.info(`request heads over ${http.maxHeaderSize} bytes get Bun's 431 without a JSON body; start Bun with ${RUNTIME_HEAD_FLAG} (npm start and dist/mediabox do)`);
  }
  return new Elysia({ name: "mediabox-head-limit" }).onRequest(({ request }) => {
    const url = new URL(request.url);
    const size = headBytes(request, url.pathname + url.search);
    if (size > MAX_HEAD_BYTES) {
      throw new ApiError("HEADERS_TOO_LARGE", `the request line and headers take ${size} bytes, over the ${MAX_HEAD_BYTES}-byte limit; send long values in the body`);
    }
  });
}
