/**
 * Human review of an AI extraction (`PATCH /files/{id}/extractions/{domain_name}/review`):
 * which domains can be reviewed, the validation of a review body, how repeated reviews merge,
 * and how the stored corrections are layered over the untouched AI output to give the corrected
 * view. Pure functions; loading the extraction and storing corrections is the route's job.
 *
 * Paths are dot paths into the extraction's JSON: `rooms.2.name`. A segment of digits indexes an
 * array (on an object it is an ordinary key). Corrections refer to the AI output as it was
 * extracted, so indexes are the original ones.
 *
 * Semantics of the corrected view (applyCorrections):
 * - field_edits are written first, shallowest path first, so an edit of `rooms` followed by one
 *   of `rooms.0.name` refines the replaced array. Missing object keys along the way are created;
 *   array elements are not (edit the whole array to add items). A null edit sets the field to
 *   null; it does not remove the edit (there is no way to withdraw a correction except writing a
 *   new one).
 * - then every `rejected` path is removed: object keys are deleted, array elements spliced out,
 *   all located before any removal so sibling indexes do not shift under each other. Rejection
 *   wins over an edit at or below the same path.
 * - `confirmed` leaves the value as it is: the confirmation lives in the corrections, not in the
 *   value, so the corrected view keeps the domain's own shape.
 */
import type { Static } from "@sinclair/typebox";
import { t } from "elysia";
import { ApiError, badRequest } from "../errors.ts";
import { Enum, Nullable } from "../http/shapes.ts";
import { checkShape, refuseUnknownFields } from "../http/validation.ts";

/** The spec's list, exactly. `custom_schema` extractions are not reviewable (yet). */
export const REVIEW_DOMAINS = [
  "architectural_design",
  "ce_plan",
  "layout_region",
  "legend",
  "mining",
  "real_estate",
  "technical_diagram",
  "pid",
  "pfd",
  "text_regions",
  "mls_compliance",
  "schedule",
] as const;
export type ReviewDomain = (typeof REVIEW_DOMAINS)[number];

export function isReviewDomain(name: string): name is ReviewDomain {
  return (REVIEW_DOMAINS as readonly string[]).includes(name);
}

/** The domain path parameter, or 400 naming the reviewable domains. */
export function parseReviewDomain(name: string): ReviewDomain {
  if (isReviewDomain(name)) return name;
  throw new ApiError("INVALID_DOMAIN", `domain_name: must be one of ${REVIEW_DOMAINS.join(", ")} (got ${JSON.stringify(name)})`);
}

export type ItemReview = "confirmed" | "rejected";

export interface Corrections {
  item_reviews: Record<string, ItemReview>;
  field_edits: Record<string, unknown>;
}

export const REVIEW_LIMITS = {
  /** Keys in one request (item_reviews and field_edits together). */
  maxKeysPerRequest: 500,
  /** Keys stored for one extraction after merging, so repeated calls cannot grow without bound. */
  maxStoredKeys: 5000,
  maxKeyLength: 200,
  maxDepth: 10,
  /** Serialized size of one request's field_edits. */
  maxEditBytes: 64 * 1024,
  /** Serialized size of all stored field_edits of one extraction. */
  maxStoredEditBytes: 1024 * 1024,
} as const;

export const emptyCorrections = (): Corrections => ({ item_reviews: {}, field_edits: {} });

const SEGMENT = /^[A-Za-z0-9_-]+$/;
const INDEX = /^(0|[1-9][0-9]*)$/;
// Allowed by the segment pattern but would reach Object.prototype when written.
const RESERVED = new Set(["__proto__", "prototype", "constructor"]);

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * The review body's shape. Keys are dot paths; their grammar (segments, depth, reserved names) and
 * the limits across both maps are rules checked after it (reviewCorrections), each with its own
 * message. Unknown fields are refused, not ignored: a misspelt field_edits must not pass as an
 * empty review.
 */
export const ReviewBody = t.Object(
  {
    item_reviews: t.Optional(
      Nullable(
        t.Record(t.String(), Enum(["confirmed", "rejected"], { error: "must be 'confirmed' or 'rejected'" }), {
          error: "item_reviews: must be an object mapping dot paths to 'confirmed' or 'rejected'",
          description: "{<dot.path>: confirmed | rejected}; a rejected item is removed from the corrected view",
        }),
      ),
    ),
    field_edits: t.Optional(
      Nullable(
        t.Record(t.String(), t.Unknown(), {
          error: "field_edits: must be an object mapping dot paths to corrected values",
          description: "{<dot.path>: value}; null sets the field to null",
        }),
      ),
    ),
  },
  { error: "must be a JSON object with item_reviews and/or field_edits", description: "At least one of item_reviews and field_edits, non-empty" },
);
export type ReviewBody = Static<typeof ReviewBody>;

/** A review body from anywhere but the route (which checks it with knownFieldsOnly and ReviewBody): its shape, then its rules. */
export function parseReviewBody(body: unknown): Corrections {
  refuseUnknownFields(ReviewBody)({ body });
  return reviewCorrections(checkShape(ReviewBody, body, "body"));
}

/** The corrections of a review body whose shape was checked; 400 naming the field and key otherwise. */
export function reviewCorrections(body: ReviewBody): Corrections {
  const reviews = body.item_reviews ?? {};
  const edits = body.field_edits ?? {};
  const count = Object.keys(reviews).length + Object.keys(edits).length;
  if (count === 0) throw badRequest("body: at least one of item_reviews or field_edits must be a non-empty object");
  if (count > REVIEW_LIMITS.maxKeysPerRequest) {
    throw badRequest(`body: at most ${REVIEW_LIMITS.maxKeysPerRequest} keys per request across item_reviews and field_edits (got ${count})`);
  }
  const corrections = emptyCorrections();
  for (const [key, value] of Object.entries(reviews)) {
    checkPath("item_reviews", key);
    corrections.item_reviews[key] = value;
  }
  for (const [key, value] of Object.entries(edits)) {
    checkPath("field_edits", key);
    if (!isJson(value)) throw badRequest(`field_edits.${key}: must be a JSON value`);
    corrections.field_edits[key] = value;
  }
  const bytes = jsonBytes(corrections.field_edits);
  if (bytes > REVIEW_LIMITS.maxEditBytes) {
    throw badRequest(`field_edits: serialized size must be at most ${REVIEW_LIMITS.maxEditBytes} bytes (got ${bytes})`);
  }
  return corrections;
}

function checkPath(field: string, key: string): void {
  const problem = pathProblem(key);
  if (problem) throw badRequest(`${field}: key ${JSON.stringify(key.slice(0, 100))} is not a valid dot path: ${problem}`);
}

function pathProblem(key: string): string | null {
  if (key.length === 0) return "must not be empty";
  if (key.length > REVIEW_LIMITS.maxKeyLength) return `at most ${REVIEW_LIMITS.maxKeyLength} characters`;
  const segments = key.split(".");
  if (segments.length > REVIEW_LIMITS.maxDepth) return `at most ${REVIEW_LIMITS.maxDepth} segments`;
  if (segments.some((s) => s.length === 0)) return "segments must not be empty (no leading, trailing or doubled dots)";
  if (segments.some((s) => !SEGMENT.test(s))) return "segments may contain only letters, digits, '_' and '-'";
  const reserved = segments.find((s) => RESERVED.has(s));
  if (reserved) return `"${reserved}" is a reserved name`;
  return null;
}

// Bodies arrive as parsed JSON, but the function is also called with values built in code.
function isJson(value: unknown): boolean {
  try {
    return JSON.stringify(value) !== undefined;
  } catch {
    return false; // cycles, BigInt
  }
}

const jsonBytes = (value: unknown): number => Buffer.byteLength(JSON.stringify(value));

/**
 * Additive merge: incoming keys overwrite the same keys, all other keys are kept. An incoming
 * edit of a path supersedes what was stored below it (earlier edits and reviews of the items it
 * replaced), which would otherwise be re-applied onto, or remove items from, the new value.
 */
export function mergeCorrections(existing: Corrections, incoming: Corrections): Corrections {
  const edited = Object.keys(incoming.field_edits);
  const superseded = (key: string) => edited.some((path) => isStrictlyBelow(key, path));
  const merged: Corrections = {
    item_reviews: { ...without(existing.item_reviews, superseded), ...incoming.item_reviews },
    field_edits: { ...without(existing.field_edits, superseded), ...incoming.field_edits },
  };
  const keys = Object.keys(merged.item_reviews).length + Object.keys(merged.field_edits).length;
  if (keys > REVIEW_LIMITS.maxStoredKeys) {
    throw badRequest(`body: an extraction keeps at most ${REVIEW_LIMITS.maxStoredKeys} corrections; this review would make ${keys}`);
  }
  const bytes = jsonBytes(merged.field_edits);
  if (bytes > REVIEW_LIMITS.maxStoredEditBytes) {
    throw badRequest(`field_edits: an extraction keeps at most ${REVIEW_LIMITS.maxStoredEditBytes} bytes of edits; this review would make ${bytes}`);
  }
  return merged;
}

const isStrictlyBelow = (key: string, ancestor: string) => key.startsWith(`${ancestor}.`);

function without<T>(map: Record<string, T>, drop: (key: string) => boolean): Record<string, T> {
  return Object.fromEntries(Object.entries(map).filter(([key]) => !drop(key)));
}

/**
 * 400 unless the corrections fit the AI output: every reviewed item must exist in it, and every
 * edit must be writable (not through a scalar, not past the end of an array). Meant for the
 * incoming request's corrections, so corrections stored before a re-extraction never block a
 * new review.
 */
export function validateAgainst(original: unknown, corrections: Corrections): void {
  for (const key of Object.keys(corrections.item_reviews)) {
    if (!hasPath(original, key.split("."))) throw badRequest(`item_reviews.${key}: no such item in the extraction`);
  }
  applyEdits(structuredClone(original), corrections.field_edits, (key, problem) => {
    throw badRequest(`field_edits.${key}: ${problem}`);
  });
}

/**
 * The corrected view: a copy of the original with the corrections applied (see the top of the
 * file). The original is not modified. Corrections that no longer fit (the AI output was
 * re-extracted since) are skipped rather than failing the read.
 */
export function applyCorrections(original: unknown, corrections: Corrections): unknown {
  const copy = structuredClone(original);
  applyEdits(copy, corrections.field_edits, () => {});
  const rejected = Object.keys(corrections.item_reviews).filter((key) => corrections.item_reviews[key] === "rejected");
  removeRejected(copy, rejected);
  return copy;
}

function resolve(node: unknown, segments: readonly string[]): { found: boolean; value?: unknown } {
  let current = node;
  for (const segment of segments) {
    if (Array.isArray(current) && INDEX.test(segment) && Number(segment) < current.length) current = current[Number(segment)];
    else if (isObject(current) && Object.hasOwn(current, segment)) current = current[segment];
    else return { found: false };
  }
  return { found: true, value: current };
}

const hasPath = (node: unknown, segments: readonly string[]) => resolve(node, segments).found;

/** Writes edits into root (mutating it), shallowest first; reports those that cannot be written. */
function applyEdits(root: unknown, edits: Record<string, unknown>, onProblem: (key: string, problem: string) => void): void {
  const ordered = Object.keys(edits).sort((a, b) => a.split(".").length - b.split(".").length);
  for (const key of ordered) {
    const problem = setPath(root, key.split("."), edits[key]);
    if (problem) onProblem(key, problem);
  }
}

function setPath(root: unknown, segments: readonly string[], value: unknown): string | null {
  let current = root;
  for (let i = 0; i < segments.length; i++) {
    const segment = segments[i]!;
    const last = i === segments.length - 1;
    const at = segments.slice(0, i).join(".") || "the extraction";
    let holder: Json | unknown[];
    let key: string | number;
    if (Array.isArray(current)) {
      if (!INDEX.test(segment)) return `${at} is an array; "${segment}" is not an index`;
      if (Number(segment) >= current.length) return `${at} has ${current.length} items; edit the whole array to add items`;
      [holder, key] = [current, Number(segment)];
    } else if (isObject(current)) {
      [holder, key] = [current, segment];
    } else {
      return `${at} is ${current === null ? "null" : `a ${typeof current}`}, so it has no field "${segment}"`;
    }
    const slot = holder as Record<string | number, unknown>;
    if (last) slot[key] = structuredClone(value);
    // A missing or null field on the way becomes an object, so `address.city` can fill in an
    // address the AI left null.
    else if (slot[key] === undefined || slot[key] === null) slot[key] = {};
    current = slot[key];
  }
  return null;
}

/**
 * Locates every rejected node before removing any, then splices array elements from the highest
 * index down, so `rooms.1` and `rooms.3` both remove the items the reviewer saw at those indexes.
 */
function removeRejected(root: unknown, keys: readonly string[]): void {
  const fromArrays = new Map<unknown[], number[]>();
  const fromObjects: [Json, string][] = [];
  for (const key of keys) {
    const segments = key.split(".");
    const last = segments.pop()!;
    const parent = resolve(root, segments).value;
    if (!hasPath(parent, [last])) continue; // already gone, or superseded by an edit
    if (Array.isArray(parent)) fromArrays.set(parent, [...(fromArrays.get(parent) ?? []), Number(last)]);
    else if (isObject(parent)) fromObjects.push([parent, last]);
  }
  for (const [array, indexes] of fromArrays) {
    for (const index of [...new Set(indexes)].sort((a, b) => b - a)) array.splice(index, 1);
  }
  for (const [object, key] of fromObjects) delete object[key];
}
