/**
 * Large files through an upload intent: the browser hashes the file (SHA-256, a slice at a time,
 * so memory stays flat), asks for presigned URLs, sends the bytes straight to the blob store
 * (parts three at a time for multipart) and completes. The intent's idempotency key is made from
 * the file's hash, so after a page reload choosing the same file again finds the same intent and
 * sends only the parts the store has not confirmed.
 */
import { sha256 } from "@noble/hashes/sha2.js";
import { bytesToHex } from "@noble/hashes/utils.js";
import { api, ApiFailure } from "./api.ts";

/** Files above this go through an intent (the streaming endpoint takes up to 100 MB images and videos, 50 MB documents). */
export const LARGE_FILE_BYTES = 45 * 1024 * 1024;
const HASH_SLICE = 8 * 1024 * 1024;
const PARALLEL_PARTS = 3;

export interface Progress {
  phase: "hashing" | "uploading" | "completing";
  fraction: number;
}

/** SHA-256 of the file as lower-case hex. */
export async function hashFile(file: File, onProgress: (p: Progress) => void): Promise<string> {
  // Small files in one go with WebCrypto; large ones a slice at a time, so memory stays flat.
  if (file.size <= LARGE_FILE_BYTES) {
    const digest = await crypto.subtle.digest("SHA-256", await file.arrayBuffer());
    onProgress({ phase: "hashing", fraction: 1 });
    return bytesToHex(new Uint8Array(digest));
  }
  const hasher = sha256.create();
  for (let offset = 0; offset < file.size; offset += HASH_SLICE) {
    hasher.update(new Uint8Array(await file.slice(offset, offset + HASH_SLICE).arrayBuffer()));
    onProgress({ phase: "hashing", fraction: Math.min(1, (offset + HASH_SLICE) / file.size) });
  }
  return bytesToHex(hasher.digest());
}

/**
 * The browser hides why a request failed. A store at another origin (an S3 bucket) most often
 * refuses because its CORS rules do not allow this page, which only its administrator can fix.
 */
function unreachableStore(url: string): string {
  const store = new URL(url, location.href).origin;
  if (store === location.origin) return "a part could not be sent (network error); choose the file again to resume";
  return `the file store at ${store} could not be reached or refused this page (its CORS rules must allow PUT from ${location.origin} and expose ETag: see the README's "Scaling out"); choose the file again to resume`;
}

/** One PUT with upload progress; resolves with the response's ETag. */
function put(url: string, body: Blob, headers: Record<string, string>, onSent: (bytes: number) => void): Promise<string> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open("PUT", url);
    for (const [name, value] of Object.entries(headers)) xhr.setRequestHeader(name, value);
    xhr.upload.onprogress = (e) => onSent(e.loaded);
    xhr.onerror = () => reject(new ApiFailure(0, "NETWORK", unreachableStore(url)));
    xhr.onload = () => {
      if (xhr.status >= 200 && xhr.status < 300) resolve(xhr.getResponseHeader("etag") ?? "");
      else reject(new ApiFailure(xhr.status, "STORE_REFUSED", `the store refused the bytes (${xhr.status}): ${xhr.responseText.slice(0, 200)}`));
    };
    xhr.send(body);
  });
}

function contentTypeOf(file: File): string {
  if (file.type) return file.type;
  const ext = file.name.split(".").pop()?.toLowerCase() ?? "";
  return ({ mp4: "video/mp4", mov: "video/quicktime", webm: "video/webm", mkv: "video/x-matroska", pdf: "application/pdf" } as Record<string, string>)[ext] ?? "application/octet-stream";
}

/** Uploads `file` through an intent; resolves with the completion's answer (file_id, media_type, deduplicated, status). */
export async function uploadLargeFile(file: File, hash: string, onProgress: (p: Progress) => void): Promise<any> {
  const intent = await api("/files/uploads", {
    method: "POST",
    body: { filename: file.name, content_type: contentTypeOf(file), size_bytes: file.size, claimed_file_hash: hash, idempotency_key: `dashboard-${hash}-${file.size}` },
  });
  const sent = new Map<number, number>();
  const report = () => onProgress({ phase: "uploading", fraction: [...sent.values()].reduce((a, b) => a + b, 0) / file.size });
  if (intent.upload_mode === "single_shot") {
    await put(intent.presigned_url, file, intent.headers, (bytes) => (sent.set(1, bytes), report()));
  } else {
    // What an earlier attempt (before a reload) already got confirmed is not sent again.
    const state = await api(`/files/uploads/${intent.upload_id}`);
    const done = new Set<number>(state.confirmed_parts.map((p: { part_number: number }) => p.part_number));
    const size = intent.part_size_bytes as number;
    for (const n of done) sent.set(n, Math.min(size, file.size - (n - 1) * size));
    const todo = (intent.part_urls as { part_number: number; url: string }[]).filter((p) => !done.has(p.part_number));
    let next = 0;
    const worker = async () => {
      while (next < todo.length) {
        const part = todo[next++]!;
        const body = file.slice((part.part_number - 1) * size, part.part_number * size);
        const etag = await put(part.url, body, {}, (bytes) => (sent.set(part.part_number, bytes), report()));
        await api(`/files/uploads/${intent.upload_id}/parts/confirm`, { method: "POST", body: { part_number: part.part_number, etag, size_bytes: body.size } });
      }
    };
    await Promise.all(Array.from({ length: PARALLEL_PARTS }, worker));
  }
  onProgress({ phase: "completing", fraction: 1 });
  return api(`/files/uploads/${intent.upload_id}/complete`, { method: "POST", body: {} });
}
