/**
 * Judges a DOCX before mammoth opens it: the zip's central directory (entry count, what entries
 * claim to inflate to, compression ratios), then every XML part mammoth may parse, inflated with a
 * hard cap (so an entry that lies about its size is caught at the cap, never inflated in full) and
 * scanned byte by byte for paragraphs, elements, nesting depth and DTDs. mammoth holds the whole
 * XML tree and its own document model in memory (~2 KB an element), so these counts are what
 * decides whether it fits; a file past any limit fails at once with the reason.
 */
import { count, DOCUMENT_LIMITS, megabytes } from "./document-limits.ts";
import { inflateZipEntry, readZipDirectory, ZipEntryTooLarge, type ZipEntry } from "./zip-entries.ts";
import { DocumentReadError } from "./types.ts";

const LIMITS = DOCUMENT_LIMITS.docx;
/** ZIP64 archives write this in the 32-bit size fields; Word files never need it. */
const ZIP64_MARKER = 0xffffffff;

const refuse = (why: string) => new DocumentReadError(`the DOCX was not read: ${why}`);

/** Parts mammoth may parse: the XML and the relationships. Pictures and other media are never inflated. */
const isXmlPart = (entry: ZipEntry) => /\.(xml|rels)$/i.test(entry.name);

export interface XmlCounts {
  paragraphs: number;
  elements: number;
  maxDepth: number;
}

export function checkDocxLimits(bytes: Uint8Array): XmlCounts {
  const directory = readZipDirectory(bytes);
  if (!directory) throw new DocumentReadError("the DOCX could not be read (corrupt or not a Word document): its zip directory is missing or damaged");
  const { entries } = directory;
  const listed = Math.max(directory.declaredEntries, entries.length);
  if (listed > LIMITS.maxEntries) throw refuse(`the archive has ${count(listed)} entries; the most Mediabox reads is ${count(LIMITS.maxEntries)}`);

  let total = 0;
  for (const entry of entries) {
    if (entry.encrypted) throw refuse(`its entry ${entry.name} is encrypted`);
    if (entry.size === ZIP64_MARKER || entry.compressedSize === ZIP64_MARKER) throw refuse(`its entry ${entry.name} is a ZIP64 entry (over 4 GB), which Word never writes`);
    total += entry.size;
  }
  if (total > LIMITS.maxTotalUncompressed) {
    throw refuse(`its entries inflate to ${megabytes(total)}; the most Mediabox reads is ${megabytes(LIMITS.maxTotalUncompressed)}`);
  }

  const parts = entries.filter(isXmlPart);
  for (const part of parts) {
    if (part.size > LIMITS.maxPartBytes) throw refuse(`${part.name} is ${megabytes(part.size)} uncompressed; the most Mediabox reads of one part is ${megabytes(LIMITS.maxPartBytes)}`);
    if (part.size > LIMITS.ratioFloorBytes && part.size > part.compressedSize * LIMITS.maxCompressionRatio) {
      const ratio = Math.round(part.size / Math.max(1, part.compressedSize));
      throw refuse(`${part.name} inflates ${count(ratio)} times its compressed size (a zip bomb; real documents stay under ${LIMITS.maxCompressionRatio} times)`);
    }
  }

  const counts: XmlCounts = { paragraphs: 0, elements: 0, maxDepth: 0 };
  for (const part of parts) {
    let xml: Uint8Array | null;
    try {
      // Capped at what the entry declares: an entry that inflates to more is lying about its size.
      xml = inflateZipEntry(bytes, part, Math.max(1, part.size));
    } catch (err) {
      if (err instanceof ZipEntryTooLarge) throw refuse(`${part.name} inflates to more than the ${count(part.size)} bytes its zip entry declares`);
      throw new DocumentReadError(`the DOCX could not be read (corrupt or not a Word document): ${part.name} cannot be inflated`);
    }
    if (xml === null) throw new DocumentReadError(`the DOCX could not be read (corrupt or not a Word document): ${part.name} uses a compression method Word does not write`);
    scanXml(part.name, xml, counts);
  }
  return counts;
}

const LT = 0x3c;
const GT = 0x3e;
const SLASH = 0x2f;
const COLON = 0x3a;
const BANG = 0x21;
const QUESTION = 0x3f;
const P = 0x70;
const DOCTYPE = new TextEncoder().encode("<!DOCTYPE");

const endsName = (b: number | undefined) => b === undefined || b === GT || b === SLASH || b === 0x20 || b === 0x09 || b === 0x0a || b === 0x0d;

/**
 * Counts elements, paragraphs (an element named p in any namespace: w:p, and a:p in drawings) and
 * the deepest nesting, failing as soon as a limit is passed. Markup inside comments counts too: the
 * scan is deliberately simple, and only ever errs towards counting more.
 */
function scanXml(name: string, xml: Uint8Array, counts: XmlCounts): void {
  if (indexOfBytes(xml, DOCTYPE) >= 0) throw refuse(`${name} declares a DTD, which Word never writes`);
  let depth = 0;
  for (let at = xml.indexOf(LT); at >= 0; at = xml.indexOf(LT, at + 1)) {
    const next = xml[at + 1];
    if (next === SLASH) {
      depth -= 1;
      continue;
    }
    if (next === BANG || next === QUESTION) continue;
    let end = at + 1;
    while (!endsName(xml[end])) end++;
    counts.elements += 1;
    if (xml[end - 1] === P && (end - 2 === at || xml[end - 2] === COLON)) {
      counts.paragraphs += 1;
      if (counts.paragraphs > LIMITS.maxParagraphs) throw refuse(`it has more than ${count(LIMITS.maxParagraphs)} paragraphs, the most Mediabox reads`);
    }
    if (counts.elements > LIMITS.maxXmlElements) throw refuse(`its XML has more than ${count(LIMITS.maxXmlElements)} elements, the most Mediabox reads`);
    const close = xml.indexOf(GT, end);
    if (close < 0) break;
    if (xml[close - 1] !== SLASH) {
      depth += 1;
      if (depth > counts.maxDepth) {
        counts.maxDepth = depth;
        if (depth > LIMITS.maxXmlDepth) throw refuse(`its XML nests elements more than ${LIMITS.maxXmlDepth} deep`);
      }
    }
    at = close;
  }
}

function indexOfBytes(haystack: Uint8Array, needle: Uint8Array): number {
  for (let at = haystack.indexOf(needle[0]!); at >= 0; at = haystack.indexOf(needle[0]!, at + 1)) {
    let k = 1;
    while (k < needle.length && haystack[at + k] === needle[k]) k++;
    if (k === needle.length) return at;
  }
  return -1;
}
