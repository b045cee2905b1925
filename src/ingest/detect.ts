/**
 * Decides what an uploaded file is from its bytes: `file-type` for binary formats, a text
 * sniffer for txt/md/svg/html and scripts. The client's Content-Type and file name are hints
 * only (the name may pick md over txt and flags script extensions). Everything that is not a
 * supported image, document or video is rejected with a reason: executables, scripts, archives,
 * active HTML/SVG, and anything unrecognizable.
 */
import { fileTypeFromBuffer, fileTypeFromFile } from "file-type";
import { errorMessage } from "../errors.ts";
import { isRawFormat, RAW_MIME, rawFormatOf } from "../camera/raw-formats.ts";
import type { DetectedType, UploadedMediaType } from "../files/file.ts";
import { inspectSvg } from "./svg-check.ts";


export type Detection = { ok: true; type: DetectedType } | { ok: false; reason: string };

const IMAGE_FORMATS: Record<string, string> = {
  jpg: "jpeg",
  png: "png",
  gif: "gif",
  webp: "webp",
  tif: "tiff",
  avif: "avif",
  heic: "heic",
  jxl: "jxl",
};

/** "mts": MPEG transport streams (AVCHD camcorders' .mts/.m2ts, broadcast and screen recorders' .ts), told by their 188/192-byte packets. */
const VIDEO_FORMATS = new Set(["mp4", "mov", "webm", "mkv", "avi", "m4v", "mpg", "3gp", "mts"]);

const EXECUTABLES = new Set(["elf", "exe", "macho", "class", "jar", "apk", "dex", "wasm", "msi", "deb", "rpm", "dmg", "swf", "lnk", "cab", "xpi", "crx"]);
const ARCHIVES = new Set(["zip", "tar", "gz", "bz2", "xz", "7z", "rar", "zst", "lz", "lzh", "arj", "cpio", "ar", "Z", "lz4", "iso"]);

const SCRIPT_EXTENSIONS = /\.(sh|bash|zsh|ksh|csh|fish|bat|cmd|ps1|psm1|psd1|vbs|vbe|js|mjs|cjs|jse|wsf|wsh|py|pl|rb|php|hta|scr|com|exe|msi|dll|jar|apk|app|command|applescript|reg)$/i;

const MARKDOWN_HINT = /\.(md|markdown|mdown|mkd)$/i;

/**
 * `head` is the file's first bytes (64 KiB is plenty); `path`, when the whole file is on disk,
 * lets a zip whose telling entries lie beyond the head (a docx, a jar) be read in full, and an
 * SVG be checked to its end (without it an SVG is refused: its head alone proves nothing).
 */
export async function detectType(head: Uint8Array, filename: string, path?: string): Promise<Detection> {
  if (head.byteLength === 0) return { ok: false, reason: "the file is empty" };
  // Camera RAWs first: several are TIFF files by their header (file-type calls a NEF "tif"), and
  // only the camera maker in IFD0 tells them apart.
  const raw = rawFormatOf(head);
  if (raw) return { ok: true, type: { mediaType: "image", mime: RAW_MIME[raw], format: raw, documentType: null } };
  let found = await fileTypeFromBuffer(head).catch(() => undefined);
  if (!found && isTiffHeader(head)) {
    // A TIFF whose directory lies past the head (common: writers put it after the pixels).
    // Reading the file lets file-type seek to the directory; it reads only the directory's
    // entries (bounded by the file's size). Without the file, the header alone says TIFF.
    found = (path ? await fileTypeFromFile(path).catch(() => undefined) : undefined) ?? { ext: "tif", mime: "image/tiff" };
  }
  if (found?.ext === "zip" && path) {
    // file-type inflates the entries that name the format; a damaged archive makes it throw.
    try {
      found = (await fileTypeFromFile(path)) ?? found;
    } catch (err) {
      return { ok: false, reason: `the file is a damaged zip container (a docx?) and cannot be read: ${errorMessage(err)}` };
    }
  }
  // file-type calls anything with an XML declaration "xml": the text sniffer tells an SVG (which
  // usually has one) from other XML, and checks it.
  if (found && found.ext !== "xml") return classifyBinary(found.ext, found.mime);
  return classifyText(head, filename, path);
}

/** "II*\0" or "MM\0*" (BigTIFF: 43 instead of 42). */
function isTiffHeader(head: Uint8Array): boolean {
  const ii = head[0] === 0x49 && head[1] === 0x49 && (head[2] === 42 || head[2] === 43) && head[3] === 0;
  const mm = head[0] === 0x4d && head[1] === 0x4d && head[2] === 0 && (head[3] === 42 || head[3] === 43);
  return ii || mm;
}

function classifyBinary(ext: string, mime: string): Detection {
  if (EXECUTABLES.has(ext)) return { ok: false, reason: `executable content (${mime}) is not accepted` };
  if (ARCHIVES.has(ext)) return { ok: false, reason: `archives (${mime}) are not accepted; upload the files inside instead` };
  if (isRawFormat(ext)) return { ok: true, type: { mediaType: "image", mime: RAW_MIME[ext], format: ext, documentType: null } };
  const image = IMAGE_FORMATS[ext];
  if (image) return { ok: true, type: { mediaType: "image", mime, format: image, documentType: null } };
  if (ext === "pdf") return { ok: true, type: { mediaType: "document", mime, format: "pdf", documentType: "pdf" } };
  if (ext === "docx") return { ok: true, type: { mediaType: "document", mime, format: "docx", documentType: "docx" } };
  if (VIDEO_FORMATS.has(ext)) return { ok: true, type: { mediaType: "video", mime, format: ext, documentType: null } };
  return { ok: false, reason: `unsupported file type ${mime}; accepted: images (jpeg, png, gif, webp, tiff, avif, heic, jxl, camera raw: cr2, cr3, nef, dng, arw, raf, rw2, orf, pef, srw), documents (pdf, docx, txt, md) and videos (mp4, mov, webm, mkv, avi, mpeg, 3gp, mts/m2ts/ts)` };
}

/** Decodes as UTF-8 (a multi-byte character cut at the end of the head is tolerated). */
function decodeText(head: Uint8Array): string | null {
  let bytes = head;
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) bytes = bytes.subarray(3);
  // Trim a possibly truncated trailing UTF-8 sequence.
  let end = bytes.byteLength;
  for (let i = 1; i <= 3 && end - i >= 0; i++) {
    const b = bytes[end - i]!;
    if ((b & 0xc0) === 0xc0) {
      const need = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : 2;
      if (i < need) end -= i;
      break;
    }
    if ((b & 0x80) === 0) break;
  }
  try {
    const text = new TextDecoder("utf-8", { fatal: true }).decode(bytes.subarray(0, end));
    let control = 0;
    for (const ch of text) {
      const c = ch.codePointAt(0)!;
      if (c === 0) return null;
      if (c < 32 && c !== 9 && c !== 10 && c !== 13 && c !== 12) control++;
    }
    return control > text.length / 100 ? null : text;
  } catch {
    return null;
  }
}

const BATCH = /^\s*@?echo\s+off\b/im;
const POWERSHELL = /\b(Invoke-Expression|Invoke-WebRequest|Set-ExecutionPolicy|Start-Process|New-Object\s+System\.Net\.WebClient|IEX\s*\()/i;
const ACTIVE_MARKUP = /<script\b|\bjavascript:|\son[a-z]+\s*=|<iframe\b|<object\b|<embed\b|<foreignObject\b/i;

async function classifyText(head: Uint8Array, filename: string, path?: string): Promise<Detection> {
  const text = decodeText(head);
  if (text === null) return { ok: false, reason: "unrecognized binary content" };
  const start = text.trimStart();
  if (start.startsWith("#!")) return { ok: false, reason: "scripts (a #! interpreter line) are not accepted" };
  if (SCRIPT_EXTENSIONS.test(filename)) return { ok: false, reason: `files named like scripts or programs (${filename}) are not accepted` };
  if (BATCH.test(text)) return { ok: false, reason: "batch scripts are not accepted" };
  if (POWERSHELL.test(text)) return { ok: false, reason: "PowerShell scripts are not accepted" };

  // An <svg> root after comments or a doctype of any length is an SVG, checked whole (svg-check.ts).
  const svg = await inspectSvg(text, path);
  if (svg.svg) {
    if (svg.refusal) return { ok: false, reason: svg.refusal };
    return { ok: true, type: { mediaType: "image", mime: "image/svg+xml", format: "svg", documentType: null } };
  }
  const lower = start.slice(0, 1024).toLowerCase();
  if (/^(<!doctype html|<html[\s>]|<head[\s>]|<body[\s>])/.test(lower) || (/<script\b/i.test(text) && /<\/?[a-z]+[\s>]/i.test(lower))) {
    return { ok: false, reason: ACTIVE_MARKUP.test(text) ? "HTML with script is not accepted" : "HTML pages are not a supported document type (pdf, docx, txt, md)" };
  }
  if (/^<\?xml/.test(lower)) return { ok: false, reason: "XML files are not a supported document type (pdf, docx, txt, md)" };

  const markdown = MARKDOWN_HINT.test(filename) || looksLikeMarkdown(text);
  return markdown
    ? { ok: true, type: { mediaType: "document", mime: "text/markdown", format: "md", documentType: "md" } }
    : { ok: true, type: { mediaType: "document", mime: "text/plain", format: "txt", documentType: "txt" } };
}

function looksLikeMarkdown(text: string): boolean {
  let signals = 0;
  if (/^#{1,6}\s+\S/m.test(text)) signals += 2;
  if (/^```/m.test(text)) signals += 2;
  if (/\[[^\]\n]+\]\([^)\s]+\)/.test(text)) signals += 1;
  if (/^\s*[-*+]\s+\S/m.test(text)) signals += 1;
  if (/^\|.+\|\s*$\n^\|\s*:?-{3,}/m.test(text)) signals += 2;
  if (/\*\*[^*\n]+\*\*/.test(text)) signals += 1;
  return signals >= 2;
}

const DOCUMENT_MIMES = new Set([
  "application/pdf",
  "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
  "text/plain",
  "text/markdown",
  "text/x-markdown",
]);
const IMAGE_NAME = /\.(jpe?g|png|gif|webp|tiff?|avif|heic|heif|svg|jxl|cr2|cr3|nef|dng|arw|raf|rw2|orf|pef|srw)$/i;
const VIDEO_NAME = /\.(mp4|m4v|mov|webm|mkv|avi|mpe?g|3gp|mts|m2ts|ts)$/i;
const DOCUMENT_NAME = /\.(pdf|docx|txt|text|md|markdown)$/i;

/**
 * The media type a client announces before any byte exists (upload intents). Only a forecast:
 * completion detects the type from the stored bytes, and the content wins.
 */
export function mediaTypeFromHints(contentType: string, filename: string): UploadedMediaType | null {
  const mime = contentType.split(";")[0]!.trim().toLowerCase();
  if (mime.startsWith("image/")) return "image";
  if (mime.startsWith("video/")) return "video";
  if (DOCUMENT_MIMES.has(mime)) return "document";
  if (IMAGE_NAME.test(filename)) return "image";
  if (VIDEO_NAME.test(filename)) return "video";
  if (DOCUMENT_NAME.test(filename)) return "document";
  return null;
}
