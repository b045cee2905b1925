/**
 * HTTP/1.1 over a raw socket, for what fetch cannot send: a body cut off before its end, a
 * client that disconnects mid-upload, a Content-Length that lies.
 */
import { connect, type Socket } from "node:net";

export interface RawRequest {
  method?: string;
  path: string;
  headers: Record<string, string>;
  /** Sent as is after the head; with `chunked`, each string is sent as one chunk. */
  body: string[];
  /** "complete": end the request normally (the final chunk, or all Content-Length bytes);
   *  "drop": destroy the socket after the body parts without ending the request. */
  ending: "complete" | "drop";
  chunked?: boolean;
}

/** Sends the request and resolves with what the server answered ("" when the client dropped). */
export function rawRequest(baseUrl: string, request: RawRequest, timeoutMs = 30_000): Promise<{ status: number | null; body: string }> {
  const url = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    let answer = "";
    const socket: Socket = connect(Number(url.port), url.hostname, () => {
      const headers: Record<string, string> = { host: url.host, ...request.headers };
      if (request.chunked) headers["transfer-encoding"] = "chunked";
      else headers["content-length"] ??= String(request.body.reduce((n, part) => n + Buffer.byteLength(part), 0));
      const head = `${request.method ?? "POST"} ${request.path} HTTP/1.1\r\n${Object.entries(headers).map(([k, v]) => `${k}: ${v}`).join("\r\n")}\r\n\r\n`;
      socket.write(head);
      for (const part of request.body) {
        if (part === "") continue; // an empty chunk would end a chunked body
        socket.write(request.chunked ? `${Buffer.byteLength(part).toString(16)}\r\n${part}\r\n` : part);
      }
      if (request.ending === "drop") {
        // Let the bytes reach the server first, so it is mid-body when the connection goes.
        setTimeout(() => socket.destroy(), 100);
      } else if (request.chunked) socket.write("0\r\n\r\n");
    });
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no answer from ${request.path} within ${timeoutMs} ms`));
    }, timeoutMs);
    socket.on("data", (data) => {
      answer += data.toString("latin1");
      // One answer is all we wait for; the server may keep the connection open.
      if (parseAnswer(answer)) socket.end();
    });
    const finish = () => {
      clearTimeout(timer);
      resolve(parseAnswer(answer, true) ?? { status: null, body: "" });
    };
    socket.on("close", finish);
    socket.on("error", () => {});
  });
}

/** The head of one multipart file part (field `field`), to be followed by its bytes. */
export function multipartFileHead(boundary: string, field: string, filename: string, type = "application/octet-stream"): string {
  return `--${boundary}\r\nContent-Disposition: form-data; name="${field}"; filename="${filename}"\r\nContent-Type: ${type}\r\n\r\n`;
}

/**
 * The status and decoded body of a complete HTTP/1.1 answer, else null. Complete means its
 * Content-Length or chunked body arrived, or, for an answer with neither, the connection closed.
 */
function parseAnswer(raw: string, closed = false): { status: number; body: string } | null {
  const headEnd = raw.indexOf("\r\n\r\n");
  const status = /^HTTP\/1\.1 (\d{3})/.exec(raw)?.[1];
  if (headEnd < 0 || !status) return null;
  const head = raw.slice(0, headEnd);
  let rest = raw.slice(headEnd + 4);
  const decode = (latin1: string) => Buffer.from(latin1, "latin1").toString("utf8");
  const length = /content-length:\s*(\d+)/i.exec(head)?.[1];
  if (length !== undefined) return rest.length >= Number(length) ? { status: Number(status), body: decode(rest.slice(0, Number(length))) } : null;
  if (!/transfer-encoding:\s*chunked/i.test(head)) return closed ? { status: Number(status), body: decode(rest) } : null;
  let body = "";
  for (;;) {
    const lineEnd = rest.indexOf("\r\n");
    if (lineEnd < 0) return null;
    const size = parseInt(rest.slice(0, lineEnd), 16);
    if (Number.isNaN(size)) return null;
    if (size === 0) return { status: Number(status), body: decode(body) };
    if (rest.length < lineEnd + 2 + size + 2) return null;
    body += rest.slice(lineEnd + 2, lineEnd + 2 + size);
    rest = rest.slice(lineEnd + 2 + size + 2);
  }
}
