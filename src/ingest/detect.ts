/**
 * Decides what an uploaded file is from its bytes: `file-type` for binary formats, each asked of
 * the registered kinds in turn (their `content.detect`), and a text sniffer for txt/md/svg/html
 * and scripts. The client's Content-Type and file name are hints only (the name may pick md over
 * txt and flags script extensions). Everything no kind takes is rejected with a reason:
 * executables, scripts, archives, active HTML/SVG, and anything unrecognizable.
 */
import { fileTypeFromBuffer, fileTypeFromFile } from "file-type";
import { errorMessage } from "../errors.ts";
import { RAW_MIME, rawFormatOf } from "../camera/raw-formats.ts";
import type { DetectedType, MediaType } from "../files/file.ts";
import type { UploadedContent } from "../kinds/media-kind.ts";
import { inspectSvg } from "./svg-check.ts";


export type Detection = { ok: true; type: DetectedType } | { ok: false; reason: string };

const EXECUTABLES = new Set(["elf", "exe", "macho", "class", "jar", "apk", "dex", "wasm", "msi", "deb", "rpm", "dmg", "swf", "lnk", "cab", "xpi", "crx"]);
const ARCHIVES = new Set(["zip", "tar", "gz", "bz2", "xz", "7z", "rar", "zst", "lz", "lzh", "arj", "cpio", "ar", "Z", "lz4", "iso"]);

const SCRIPT_EXTENSIONS = /\.(sh|bash|zsh|ksh|csh|fish|bat|cmd|ps1|psm1|psd1|vbs|vbe|js|mjs|cjs|jse|wsf|wsh|py|pl|rb|php|hta|scr|com|exe|msi|dll|jar|apk|app|command|applescript|reg)$/i;

const MARKDOWN_HINT = /\.(md|markdown|mdown|mkd)$/i;

/**
 * `kinds`: the registered kinds whose files arrive as bytes (MediaKinds.uploaded()), asked in
 * that order. `head` is the file's first bytes (64 KiB is plenty); `path`, when the whole file is on disk,
 * lets a zip whose telling entries lie beyond the head (a docx, a jar) be read in full, and an
 * SVG be checked to its end (without it an SVG is refused: its head alone proves nothing).
 */
export async function detectType(kinds: readonly UploadedContent[], head: Uint8Array, filename: string, path?: string): Promise<Detection> {
  if (head.byteLength === 0) return { ok: false, reason: "the file is empty" };
  // Camera RAWs first: several are TIFF files by their header (file-type calls a NEF "tif"), and
  // only the camera maker in IFD0 tells them apart.
  const raw = rawFormatOf(head);
  if (raw) return classifyBinary(kinds, raw, RAW_MIME[raw]);
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
  if (found && found.ext !== "xml") return classifyBinary(kinds, found.ext, found.mime);
  return classifyText(kinds, head, filename, path);
}

/** "II*\0" or "MM\0*" (BigTIFF: 43 instead of 42). */
function isTiffHeader(head: Uint8Array): boolean {
  const ii = head[0] === 0x49 && head[1] === 0x49 && (head[2] === 42 || head[2] === 43) && head[3] === 0;
  const mm = head[0] === 0x4d && head[1] === 0x4d && head[2] === 0 && (head[3] === 42 || head[3] === 43);
  return ii || mm;
}

function classifyBinary(kinds: readonly UploadedContent[], ext: string, mime: string): Detection {
  if (EXECUTABLES.has(ext)) return { ok: false, reason: `executable content (${mime}) is not accepted` };
  if (ARCHIVES.has(ext)) return { ok: false, reason: `archives (${mime}) are not accepted; upload the files inside instead` };
  for (const kind of kinds) {
    const taken = kind.detect({ ext, mime });
    if (taken) return { ok: true, type: { mediaType: kind.type, mime: taken.mime, format: taken.format, documentType: taken.documentType ?? null } };
  }
  return { ok: false, reason: `unsupported file type ${mime}; accepted: ${acceptedBy(kinds)}` };
}

/** "images (...), documents (...) and videos (...)" */
function acceptedBy(kinds: readonly UploadedContent[]): string {
  const all = kinds.map((k) => k.accepts);
  return all.length > 1 ? `${all.slice(0, -1).join(", ")} and ${all.at(-1)}` : (all[0] ?? "nothing");
}

/** What the text sniffer found, when the kind it belongs to is registered. */
function sniffed(kinds: readonly UploadedContent[], mediaType: MediaType, type: Omit<DetectedType, "mediaType">): Detection {
  if (kinds.some((k) => k.type === mediaType)) return { ok: true, type: { mediaType, ...type } };
  return { ok: false, reason: `unsupported file type ${type.mime}; accepted: ${acceptedBy(kinds)}` };
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

async function classifyText(kinds: readonly UploadedContent[], head: Uint8Array, filename: string, path?: string): Promise<Detection> {
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
    return sniffed(kinds, "image", { mime: "image/svg+xml", format: "svg", documentType: null });
  }
  const lower = start.slice(0, 1024).toLowerCase();
  if (/^(<!doctype html|<html[\s>]|<head[\s>]|<body[\s>])/.test(lower) || (/<script\b/i.test(text) && /<\/?[a-z]+[\s>]/i.test(lower))) {
    return { ok: false, reason: ACTIVE_MARKUP.test(text) ? "HTML with script is not accepted" : "HTML pages are not a supported document type (pdf, docx, txt, md)" };
  }
  if (/^<\?xml/.test(lower)) return { ok: false, reason: "XML files are not a supported document type (pdf, docx, txt, md)" };

  const markdown = MARKDOWN_HINT.test(filename) || looksLikeMarkdown(text);
  return markdown
    ? sniffed(kinds, "document", { mime: "text/markdown", format: "md", documentType: "md" })
    : sniffed(kinds, "document", { mime: "text/plain", format: "txt", documentType: "txt" });
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

