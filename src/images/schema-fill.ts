/**
 * Filling a custom extraction schema from local evidence, for sites without a vision LLM: the
 * second description pass of an upload with custom_schema_id. The image pipeline gathers the
 * evidence (caption, tags, detected objects, faces, OCR, size, EXIF); this module only reads it.
 * What it cannot answer is listed in `unfilled`, so a configured vision endpoint can be asked
 * for exactly those fields.
 *
 * How each kind of property is filled (names compare case-, underscore- and camelCase-
 * insensitively: `takenAt`, `taken_at` and `Taken At` are one name):
 * - Properties named after a piece of evidence take it directly: width, height, format,
 *   taken_at (date_taken, capture_date…), description (caption, summary, alt_text…), tags
 *   (keywords, labels…), text (ocr_text, visible_text…), lines, objects, faces (face_count…),
 *   object_count, colours (colors, palette…; a single `color` takes the dominant one).
 * - strings: a `Label: value` (or `Label value`) OCR line whose label is the property name, its
 *   parent's name and its own (`seller.name` reads "Seller name: …" before "Name: …"), or its
 *   description when that is a short label. Labels start a line or a column (after a tab, two
 *   spaces, `|` or `;`), so "Buyer name: Bob" is not read as `name`. "No."/"#" stand for number,
 *   "Qty" for quantity and so on.
 * - numbers and integers: the number right after such a label ("Total: $1,250.00" is 1250;
 *   "1.250,00" is read European-style).
 * - enums: the one enum value found in the labelled OCR value, else among tags and objects, else
 *   in the OCR text, else in the description; a source naming two different values is
 *   ambiguous and passes to the next.
 * - booleans: a labelled OCR yes/no first. Otherwise true when the name's subject (`has_pool`,
 *   `contains_car`, `is_outdoor`: pool, car, outdoor), or a short description, matches a tag or
 *   detected object (a face counts as a person; "vehicle" covers car, truck…). When the name has
 *   such a has_/contains_/is_ prefix and nothing matches, false: nothing was detected. A bare
 *   name (`pool`) that matches nothing stays unfilled.
 * - arrays of strings: the evidence the name says (tags, object labels, lines, colours); an
 *   array of enum strings takes every enum value found anywhere in the evidence.
 * - arrays of objects named like objects/items/detections: one element per detected object,
 *   its label/name/class, score/confidence and box/bbox mapped; lines/text_regions likewise get
 *   one element per OCR line. Elements must satisfy the item schema, `required` included.
 * - nested objects recurse; anyOf takes the first alternative that fills.
 *
 * Empty evidence (no tags, no OCR text) is no evidence: the field is left for the vision pass.
 * A field not found is null when its schema allows null, otherwise left out of `value`; either
 * way its dot path is listed in `unfilled`. Every value written satisfies its own subschema
 * (checked with Ajv, so enum, minimum, maxLength, pattern… hold); an object may still miss
 * `required` properties that were not found, which `unfilled` names.
 */
import Ajv, { type ValidateFunction } from "ajv";

export interface DetectedObject {
  label: string;
  score: number;
  /** Normalized 0-1, when the detector gives one. */
  box?: { x_min: number; y_min: number; x_max: number; y_max: number };
}

export interface Evidence {
  description: string | null;
  tags: string[];
  objects: DetectedObject[];
  /** null: no detector looked (a document's text is the only evidence), so counts are unknown, not zero. */
  faces: number | null;
  ocrText: string;
  ocrLines: string[];
  width: number | null;
  height: number | null;
  format: string | null;
  takenAt: string | null;
  dominantColours?: string[];
}

export interface FillResult {
  value: unknown;
  /** Dot paths written with a found value. */
  filled: string[];
  /** Dot paths left null or out: they need the vision endpoint. */
  unfilled: string[];
}

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);

/** Returned by a filler that found nothing (null may be a legitimate value). */
const MISSING = Symbol("missing");
type Found = unknown | typeof MISSING;

interface Field {
  path: string;
  /** The property name, split into lowercase words. */
  words: string[];
  /** OCR labels to look for, most specific first, each as words. */
  labels: string[][];
  description: string | null;
}

interface Context {
  evidence: Evidence;
  lines: string[];
  /** Tags and object labels (and "face"/"person" when faces were seen), as word stems. */
  detected: string[][];
  filled: string[];
  unfilled: string[];
}

export function fillSchema(schema: object, evidence: Evidence): FillResult {
  const ctx: Context = { evidence, lines: ocrLines(evidence), detected: detectedStems(evidence), filled: [], unfilled: [] };
  const root: Field = { path: "", words: [], labels: [], description: null };
  try {
    const value = fillObject(schema as Json, root, ctx);
    return { value: value === MISSING ? {} : value, filled: ctx.filled, unfilled: ctx.unfilled };
  } finally {
    forgetCompiled();
  }
}

function ocrLines(evidence: Evidence): string[] {
  const lines = evidence.ocrLines.length > 0 ? evidence.ocrLines : evidence.ocrText.split("\n");
  return lines.map((l) => l.trim()).filter(Boolean);
}

function detectedStems(evidence: Evidence): string[][] {
  const labels = [...evidence.tags, ...evidence.objects.map((o) => o.label)];
  if (evidence.faces !== null && evidence.faces > 0) labels.push("face", "person");
  return labels.map((l) => words(l).map(stem)).filter((w) => w.length > 0);
}

// ---------------------------------------------------------------------------------------------
// Dispatch

function fillNode(node: Json, field: Field, ctx: Context): Found {
  if (Array.isArray(node.anyOf)) return fillAnyOf(node, field, ctx);
  const type = typeOf(node);
  if (type === "object") return fillObject(node, field, ctx);
  let value: Found = MISSING;
  if (type === "null") value = null;
  else if (type === "array") value = fillArray(node, field, ctx);
  else if (type === "string") value = fillString(node, field, ctx);
  else if (type === "number" || type === "integer") value = fillNumber(node, field, ctx);
  else if (type === "boolean") value = fillBoolean(node, field, ctx);
  (value === MISSING ? ctx.unfilled : ctx.filled).push(field.path);
  return value;
}

function typeOf(node: Json): string | null {
  if (typeof node.type === "string") return node.type;
  if (Array.isArray(node.type)) return node.type.find((t) => t !== "null") ?? "null";
  if (Array.isArray(node.enum)) {
    const sample = node.enum.find((v) => v !== null);
    if (typeof sample === "string") return "string";
    if (typeof sample === "number") return "number";
    if (typeof sample === "boolean") return "boolean";
  }
  if (isObject(node.properties)) return "object";
  if ("items" in node) return "array";
  return null;
}

function allowsNull(node: Json): boolean {
  if (node.type === "null" || (Array.isArray(node.type) && node.type.includes("null"))) return true;
  if (Array.isArray(node.enum) && node.enum.includes(null)) return true;
  return Array.isArray(node.anyOf) && node.anyOf.some((b) => isObject(b) && allowsNull(b));
}

/** Children not found are null if their schema allows it, else left out. */
function fillObject(node: Json, field: Field, ctx: Context): Found {
  const properties = isObject(node.properties) ? node.properties : {};
  const out: Json = {};
  let found = false;
  for (const [name, child] of Object.entries(properties)) {
    if (!isObject(child)) continue;
    const value = fillNode(child, childField(field, name, child), ctx);
    if (value !== MISSING) {
      out[name] = value;
      found = true;
    } else if (allowsNull(child)) {
      out[name] = null;
    }
  }
  return found || field.path === "" ? out : MISSING;
}

function childField(parent: Field, name: string, node: Json): Field {
  const own = words(name);
  const description = typeof node.description === "string" ? node.description : null;
  const labels = [own];
  if (parent.words.length > 0) labels.unshift([...parent.words, ...own]);
  const short = description ? shortLabel(description) : null;
  if (short) labels.push(short);
  return { path: parent.path ? `${parent.path}.${name}` : name, words: own, labels: dedupe(labels), description };
}

/** A description like "Number of bedrooms" doubles as a label; a sentence does not. */
function shortLabel(description: string): string[] | null {
  const w = words(description);
  if (["the", "a", "an"].includes(w[0] ?? "")) w.shift();
  return w.length > 0 && w.length <= 4 ? w : null;
}

/** The first alternative that fills wins; its filled/unfilled paths are the ones reported. */
function fillAnyOf(node: Json, field: Field, ctx: Context): Found {
  for (const branch of node.anyOf as unknown[]) {
    if (!isObject(branch) || typeOf(branch) === "null") continue;
    const trial: Context = { ...ctx, filled: [], unfilled: [] };
    // A branch may leave the type (and other keywords) to the node holding the anyOf.
    const { anyOf: _, ...holder } = node;
    const value = fillNode({ ...holder, ...branch }, field, trial);
    if (value !== MISSING) {
      ctx.filled.push(...trial.filled);
      ctx.unfilled.push(...trial.unfilled);
      return value;
    }
  }
  ctx.unfilled.push(field.path);
  return MISSING;
}

// ---------------------------------------------------------------------------------------------
// Evidence named by the property

type Kind = "width" | "height" | "format" | "takenAt" | "description" | "tags" | "text" | "lines" | "objects" | "faces" | "objectCount" | "colours" | "colour";

// A visible face is the best local proxy for a person count.
const KIND_NAMES: Record<Kind, string[]> = {
  width: ["width", "imagewidth", "widthpx", "pixelwidth"],
  height: ["height", "imageheight", "heightpx", "pixelheight"],
  format: ["format", "fileformat", "imageformat", "filetype"],
  takenAt: ["takenat", "datetaken", "capturedat", "capturedate", "capturetime", "photodate", "phototakenat", "datetimeoriginal", "shotat"],
  description: ["description", "caption", "summary", "alttext", "alt", "imagedescription"],
  tags: ["tags", "keywords", "labels", "categories", "topics"],
  text: ["text", "ocrtext", "visibletext", "fulltext", "extractedtext", "transcription", "rawtext"],
  lines: ["lines", "textlines", "ocrlines", "textregions"],
  objects: ["objects", "detectedobjects", "detections", "items", "things", "entities", "objectlabels"],
  faces: ["faces", "facecount", "numfaces", "numberoffaces", "peoplecount", "personcount", "numberofpeople"],
  objectCount: ["objectcount", "numobjects", "numberofobjects"],
  colours: ["colors", "colours", "dominantcolors", "dominantcolours", "palette", "colorpalette", "colourpalette"],
  colour: ["color", "colour", "dominantcolor", "dominantcolour", "maincolor", "maincolour", "primarycolor", "primarycolour"],
};

function kindOf(field: Field): Kind | null {
  const name = field.words.join("");
  for (const [kind, names] of Object.entries(KIND_NAMES)) if (names.includes(name)) return kind as Kind;
  return null;
}

/** The evidence as found: a number, a string or a list of strings; null when empty. */
function evidenceOf(kind: Kind, e: Evidence): number | string | string[] | null {
  const text = (s: string | null) => (s && s.trim() ? s.trim() : null);
  const list = (l: string[] | undefined) => (l && l.length > 0 ? l : null);
  switch (kind) {
    case "width":
      return e.width;
    case "height":
      return e.height;
    case "faces":
      return e.faces;
    case "objectCount":
      return e.faces === null ? null : e.objects.length;
    case "format":
      return text(e.format);
    case "takenAt":
      return text(e.takenAt);
    case "description":
      return text(e.description);
    case "text":
      return text(e.ocrText);
    case "tags":
      return list(e.tags);
    case "lines":
      return list(ocrLines(e));
    case "objects":
      return list([...new Set(e.objects.map((o) => o.label))]);
    case "colours":
      return list(e.dominantColours);
    case "colour":
      return e.dominantColours?.[0] ?? null;
  }
}

// ---------------------------------------------------------------------------------------------
// Scalars

function fillString(node: Json, field: Field, ctx: Context): Found {
  const kind = kindOf(field);
  if (kind) {
    const found = evidenceOf(kind, ctx.evidence);
    const value = Array.isArray(found) ? found.join(", ") : found === null ? null : String(found);
    if (value !== null && accepts(node, value)) return value;
  }
  if (Array.isArray(node.enum)) return pickEnum(node, field, ctx);
  return labelledValues(field, ctx, { allowSpaceForm: true }).find((v) => accepts(node, v)) ?? MISSING;
}

function fillNumber(node: Json, field: Field, ctx: Context): Found {
  const kind = kindOf(field);
  if (kind) {
    const found = evidenceOf(kind, ctx.evidence);
    if (typeof found === "number" && accepts(node, found)) return found;
  }
  for (const text of labelledValues(field, ctx, { allowSpaceForm: true })) {
    const n = parseNumber(text);
    if (n !== null && accepts(node, n)) return n;
  }
  return MISSING;
}

const YES = new Set(["yes", "y", "true", "x", "✓", "✔", "☑", "checked", "paid", "present"]);
const NO = new Set(["no", "n", "false", "none", "☐", "unchecked", "unpaid", "absent"]);
const BOOLEAN_PREFIXES = new Set(["has", "have", "contains", "contain", "is", "are", "shows", "show", "includes", "include", "with", "depicts"]);

function fillBoolean(node: Json, field: Field, ctx: Context): Found {
  for (const text of labelledValues(field, ctx, { allowSpaceForm: false })) {
    const answer = text.toLowerCase().split(/\s+/)[0] ?? "";
    if (YES.has(answer) && accepts(node, true)) return true;
    if (NO.has(answer) && accepts(node, false)) return false;
  }
  const prefixed = field.words.length > 1 && BOOLEAN_PREFIXES.has(field.words[0]!);
  const subjects = [prefixed ? field.words.slice(1) : field.words];
  const short = field.description ? shortSubject(field.description) : null;
  if (short) subjects.push(short);
  if (subjects.some((s) => isDetected(s, ctx.detected))) return accepts(node, true) ? true : MISSING;
  return prefixed && accepts(node, false) ? false : MISSING;
}

/** "Whether a pool is visible" names its subject "pool". */
function shortSubject(description: string): string[] | null {
  const filler = new Set(["whether", "if", "the", "a", "an", "is", "are", "there", "visible", "present", "shown", "in", "image", "photo", "picture", "any", "has", "contains", "shows", "does", "it"]);
  const w = words(description).filter((x) => !filler.has(x));
  return w.length > 0 && w.length <= 3 ? w : null;
}

// ---------------------------------------------------------------------------------------------
// Enums

function pickEnum(node: Json, field: Field, ctx: Context): Found {
  const options = (node.enum as unknown[]).filter((v): v is string => typeof v === "string");
  const e = ctx.evidence;
  const detectedText = [...e.tags, ...e.objects.map((o) => o.label)];
  const sources: string[][] = [
    labelledValues(field, ctx, { allowSpaceForm: false }),
    detectedText,
    [e.ocrText || ctx.lines.join("\n")],
    e.description ? [e.description] : [],
  ];
  for (const texts of sources) {
    const found = options.filter((option) => texts.some((t) => containsPhrase(t, option)));
    if (found.length === 1 && accepts(node, found[0])) return found[0];
  }
  return MISSING;
}

function containsPhrase(text: string, phrase: string): boolean {
  const w = words(phrase);
  if (w.length === 0) return false;
  const pattern = w.map(escapeRegExp).join("[\\s_-]+");
  return new RegExp(`(?<![\\p{L}\\p{N}])${pattern}(?![\\p{L}\\p{N}])`, "iu").test(text);
}

// ---------------------------------------------------------------------------------------------
// Arrays

function fillArray(node: Json, field: Field, ctx: Context): Found {
  const items = isObject(node.items) ? node.items : {};
  const kind = kindOf(field);
  let values: unknown[] | null = null;
  if (typeOf(items) === "object") values = objectItems(items, kind, ctx);
  else if (typeOf(items) === "string" || typeOf(items) === null) values = stringItems(items, kind, ctx);
  if (!values || values.length === 0) return MISSING;
  if (typeof node.maxItems === "number") values = values.slice(0, node.maxItems);
  return accepts(node, values) ? values : MISSING;
}

function stringItems(items: Json, kind: Kind | null, ctx: Context): string[] | null {
  if (kind === "text") kind = "lines";
  const found = kind ? evidenceOf(kind, ctx.evidence) : null;
  const fitting = Array.isArray(found) ? found.filter((v) => accepts(items, v)) : [];
  if (fitting.length > 0) return fitting;
  if (Array.isArray(items.enum)) {
    const e = ctx.evidence;
    const texts = [...e.tags, ...e.objects.map((o) => o.label), e.ocrText, ...ctx.lines, e.description ?? ""];
    return items.enum.filter((v): v is string => typeof v === "string" && texts.some((t) => containsPhrase(t, v)));
  }
  return null;
}

const OBJECT_FIELDS: Record<string, string[]> = {
  label: ["label", "name", "object", "class", "classname", "type", "category", "kind", "objecttype"],
  score: ["score", "confidence", "probability", "certainty"],
  box: ["box", "boundingbox", "bbox", "bounds", "region"],
};
const LINE_FIELDS: Record<string, string[]> = { text: ["text", "line", "content", "value"] };

/** One element per detected object or OCR line; the label (or text) must map, and each element satisfy items. */
function objectItems(items: Json, kind: Kind | null, ctx: Context): Json[] | null {
  const properties = isObject(items.properties) ? items.properties : {};
  let records: Json[];
  let fields: Record<string, string[]>;
  let primary: string;
  if (kind === "objects") {
    records = ctx.evidence.objects.map((o) => ({ label: o.label, score: o.score, box: o.box }));
    [fields, primary] = [OBJECT_FIELDS, "label"];
  } else if (kind === "lines" || kind === "text") {
    records = ctx.lines.map((text) => ({ text }));
    [fields, primary] = [LINE_FIELDS, "text"];
  } else {
    return null;
  }
  const mapping = Object.keys(properties).map((name) => [name, sourceField(name, fields)] as const);
  if (!mapping.some(([, source]) => source === primary)) return null;
  return records.map((r) => mapRecord(r, mapping, properties)).filter((item) => accepts(items, item));
}

function sourceField(name: string, fields: Record<string, string[]>): string | null {
  const key = words(name).join("");
  return Object.entries(fields).find(([, names]) => names.includes(key))?.[0] ?? null;
}

function mapRecord(record: Json, mapping: readonly (readonly [string, string | null])[], properties: Json): Json {
  const item: Json = {};
  for (const [name, source] of mapping) {
    const value = source ? record[source] : undefined;
    const schema = properties[name];
    if (value !== undefined && isObject(schema) && accepts(schema, value)) item[name] = value;
  }
  return item;
}

// ---------------------------------------------------------------------------------------------
// OCR labels

const WORD_VARIANTS: Record<string, string> = {
  number: "(?:number|nr\\.?|no\\.?|num\\.?|#)",
  quantity: "(?:quantity|qty\\.?)",
  amount: "(?:amount|amt\\.?)",
  reference: "(?:reference|ref\\.?)",
  phone: "(?:phone|tel\\.?|telephone)",
  telephone: "(?:phone|tel\\.?|telephone)",
};

// A label starts a line (after bullets) or a column; mid-sentence words are not labels. It ends
// at a word boundary unless its last character is a symbol ("Invoice #INV-42").
const LEAD = "(?:^[\\s\\-•*]*|\\s{2,}|\\t|[|;]\\s*)";
const END = "(?:(?<![\\p{L}\\p{N}])|(?![\\p{L}\\p{N}]))";

/**
 * Values written after one of the field's labels, in label then line order. The colon form
 * ("Total: 12") is preferred over the space form ("Total 12"), which is only taken when the rest
 * of the line has no colon of its own ("Name of seller: Bob" is not the value "of seller: Bob").
 */
function labelledValues(field: Field, ctx: Context, opts: { allowSpaceForm: boolean }): string[] {
  const values: string[] = [];
  for (const label of field.labels) {
    if (label.length === 0) continue;
    const body = label.map((w) => WORD_VARIANTS[w] ?? escapeRegExp(w)).join("[\\s_-]*");
    const colon = new RegExp(`${LEAD}${body}${END}\\s*[:=]\\s*(.+)$`, "iu");
    const space = new RegExp(`${LEAD}${body}${END}[\\s#–—]*(.+)$`, "iu");
    for (const line of ctx.lines) {
      const byColon = cutColumn(colon.exec(line)?.[1] ?? "");
      if (byColon) {
        values.push(byColon);
        continue;
      }
      const bySpace = opts.allowSpaceForm ? cutColumn(space.exec(line)?.[1] ?? "") : "";
      if (bySpace && !bySpace.includes(":")) values.push(bySpace);
    }
  }
  return [...new Set(values)];
}

/** "INV-0042   Date: 2024-01-05" holds two columns; the value is the first. */
function cutColumn(text: string): string {
  return (text.split(/\s{2,}|\t|\s\|\s/)[0] ?? "").trim();
}

/** "1,250.00", "$ 1,250", "1.250,00", "(12.5)" and "EUR 3" are numbers; "INV-42" is not. */
export function parseNumber(text: string): number | null {
  const m = /^(\()?\s*([-−])?\s*(?:[$€£¥₹]\s*|[A-Z]{3}\s+)?([-−])?(\d(?:[\d,.'\u00a0\u202f]*\d)?)(.*)$/u.exec(text.trim());
  // A date, time or code ("2024-01-05", "12:30", "12/3") is not the number it starts with.
  if (!m || /^[-/:]\d/.test(m[5]!)) return null;
  const digits = normalizeDigits(m[4]!);
  if (digits === null) return null;
  const negative = m[1] === "(" || m[2] !== undefined || m[3] !== undefined;
  const n = Number(digits);
  return Number.isFinite(n) ? (negative ? -n : n) : null;
}

function normalizeDigits(raw: string): string | null {
  let s = raw.replace(/['\u00a0\u202f]/g, "");
  const comma = s.lastIndexOf(",");
  const dot = s.lastIndexOf(".");
  if (comma >= 0 && dot >= 0) {
    // Whichever comes last is the decimal separator.
    s = comma > dot ? s.replace(/\./g, "").replace(",", ".") : s.replace(/,/g, "");
  } else if (comma >= 0) {
    s = /^\d{1,3}(,\d{3})+$/.test(s) ? s.replace(/,/g, "") : s.replace(",", ".");
  } else if (/^\d{1,3}(\.\d{3}){2,}$/.test(s)) {
    s = s.replace(/\./g, "");
  }
  return /^\d+(\.\d+)?$/.test(s) ? s : null;
}

// ---------------------------------------------------------------------------------------------
// Words and detection

/** `hasSwimmingPool`, `has_swimming-pool` and "Has swimming pool" all give has, swimming, pool. */
function words(text: string): string[] {
  return text
    .replace(/([\p{Ll}\p{N}])(\p{Lu})/gu, "$1 $2")
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter(Boolean);
}

const IRREGULAR: Record<string, string> = { people: "person", persons: "person", men: "man", women: "woman", children: "child", indoors: "indoor", outdoors: "outdoor" };

function stem(word: string): string {
  if (IRREGULAR[word]) return IRREGULAR[word];
  if (word.length > 4 && word.endsWith("ies")) return `${word.slice(0, -3)}y`;
  if (word.length > 4 && /(?:s|x|ch|sh)es$/.test(word)) return word.slice(0, -2);
  if (word.length > 3 && word.endsWith("s") && !word.endsWith("ss")) return word.slice(0, -1);
  return word;
}

/** A detected "dog" answers has_animal; a face answers has_person. */
const KINDS_OF: Record<string, string[]> = {
  person: ["person", "man", "woman", "child", "boy", "girl", "face", "human"],
  human: ["person", "man", "woman", "child", "boy", "girl", "face"],
  vehicle: ["car", "truck", "bus", "motorcycle", "bicycle", "van", "train", "boat"],
  animal: ["dog", "cat", "bird", "horse", "cow", "sheep", "elephant", "bear", "zebra", "giraffe"],
  pet: ["dog", "cat"],
};

function isDetected(subject: string[], detected: string[][]): boolean {
  const stems = subject.map(stem);
  if (stems.length === 0) return false;
  const alternatives = [stems, ...(stems.length === 1 ? (KINDS_OF[stems[0]!] ?? []).map((k) => [k]) : [])];
  return detected.some((label) => alternatives.some((alt) => containsRun(label, alt)));
}

/** Whether `run` occurs in `label` as consecutive words: "sports car" contains "car". */
function containsRun(label: string[], run: string[]): boolean {
  for (let i = 0; i + run.length <= label.length; i++) {
    if (run.every((w, j) => label[i + j] === w)) return true;
  }
  return false;
}

// ---------------------------------------------------------------------------------------------
// Helpers

// One validator for the process. Ajv keeps every schema object it compiles, so the nodes
// compiled during one fillSchema call are removed again when it ends (see forgetCompiled).
const ajv = new Ajv({ strict: false, allErrors: false, validateFormats: false, addUsedSchema: false });
const compiled = new Map<object, ValidateFunction | null>();

function forgetCompiled(): void {
  for (const [node, validate] of compiled) if (validate) ajv.removeSchema(node);
  compiled.clear();
}

/** Whether value satisfies the subschema (enum, minimum, pattern, required…). */
function accepts(node: Json, value: unknown): boolean {
  let validate = compiled.get(node);
  if (validate === undefined) {
    try {
      validate = ajv.compile(node);
    } catch {
      validate = null; // a schema Ajv refuses cannot vouch for anything
    }
    compiled.set(node, validate);
  }
  return validate ? validate(value) === true : false;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

function dedupe(lists: string[][]): string[][] {
  const seen = new Set<string>();
  return lists.filter((l) => {
    const key = l.join(" ");
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
