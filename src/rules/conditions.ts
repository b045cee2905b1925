/**
 * A rule's conditions: their vocabulary (fields, and the operators each kind of field takes), the
 * check of what a client sends, and their evaluation over one file's facts. Pure functions, no
 * I/O: the facts are gathered elsewhere (file-facts.ts). Regular expressions run on RE2 (re2js):
 * matching is linear in the text, so a pattern written by a user cannot hang the server on a
 * long document the way a backtracking engine can ("(a+)+$").
 */
import { RE2JS } from "re2js";
import { badRequest } from "../errors.ts";
import { DEFAULT_AUTO_MATCH_THRESHOLD } from "./auto-match-settings.ts";

/** What one file offers to conditions (file-facts.ts builds it). */
export interface FileFacts {
  media_type: string;
  document_type: string | null;
  content_type: string;
  filename: string;
  title: string | null;
  /** The text read in the file: a document's or page's text, else OCR of an image or a video's keyframes. */
  text: string;
  description: string | null;
  tags: string[];
  category: string;
  /** How it arrived: upload, watch, mail, cloud or link. */
  source: string;
  size_bytes: number;
  page_count: number | null;
  duration_seconds: number | null;
  /** A link's host. */
  domain: string | null;
  project_id: string;
  folder_id: string | null;
  /** What the camera recorded (photos and videos): "make model", the lens, and the place its GPS names ("city, region, country"). */
  camera: string | null;
  lens: string | null;
  place: string | null;
  country_code: string | null;
  /** Images: the people seen (faces plus person boxes without a face, as the detectors counted them; else the faces recognised); null when no detector looked. */
  people_count: number | null;
  /** Images: the names of the people recognised in it (people named on the People page). */
  people: string[];
  /** Auto matching (auto-match.ts): the score (0-1) of each tag (lower case) and folder id the organization's model learned; null without a model or text. */
  predicted_tags: ReadonlyMap<string, number> | null;
  predicted_folder_id: ReadonlyMap<string, number> | null;
}

type Kind = "text" | "list" | "choice" | "number" | "id" | "predicted_tags" | "predicted_folder";

export const CONDITION_FIELDS: Record<string, Kind> = {
  media_type: "choice",
  document_type: "choice",
  content_type: "text",
  filename: "text",
  title: "text",
  text: "text",
  description: "text",
  tags: "list",
  category: "choice",
  source: "choice",
  size_bytes: "number",
  page_count: "number",
  duration_seconds: "number",
  people_count: "number",
  people: "list",
  domain: "text",
  project_id: "id",
  folder_id: "id",
  camera: "text",
  lens: "text",
  place: "text",
  country_code: "choice",
  predicted_tags: "predicted_tags",
  predicted_folder_id: "predicted_folder",
};

/** Whether conditions ask the auto-matching model (auto-match.ts). */
export function usesPredictions(conditions: readonly Condition[]): boolean {
  return conditions.some((c) => CONDITION_FIELDS[c.field] === "predicted_tags" || CONDITION_FIELDS[c.field] === "predicted_folder");
}

export const SOURCES = ["upload", "watch", "mail", "cloud", "link"] as const;

const OPERATORS: Record<Kind, readonly string[]> = {
  text: ["contains", "not_contains", "equals", "not_equals", "starts_with", "ends_with", "regex", "exists", "not_exists"],
  list: ["contains", "not_contains", "in", "exists", "not_exists"],
  choice: ["equals", "not_equals", "in", "not_in"],
  number: ["equals", "not_equals", "gt", "gte", "lt", "lte", "exists", "not_exists"],
  id: ["equals", "not_equals", "in", "not_in", "exists", "not_exists"],
  predicted_tags: ["contains", "not_contains", "in"],
  predicted_folder: ["equals", "not_equals", "in", "not_in"],
};

export const MAX_CONDITIONS = 20;
const MAX_VALUE_LENGTH = 500;
const MAX_LIST_VALUES = 50;

export interface Condition {
  field: keyof FileFacts;
  op: string;
  value?: string | number | string[];
  /** Text operators compare without regard to case unless this is true. */
  case_sensitive?: boolean;
  /** Predicted fields: the score (0-1) a prediction needs to count (default DEFAULT_AUTO_MATCH_THRESHOLD). */
  min_score?: number;
}

/** A condition ready to evaluate: its regular expression compiled once. */
interface Compiled extends Condition {
  pattern?: RE2JS;
}

/**
 * The conditions as a client sent them, checked (400 naming the condition and what is wrong) and
 * returned in their stored form. An empty list is allowed: the rule then matches every file.
 */
export function parseConditions(input: unknown): Condition[] {
  if (!Array.isArray(input)) throw badRequest("conditions: must be an array");
  if (input.length > MAX_CONDITIONS) throw badRequest(`conditions: at most ${MAX_CONDITIONS} (got ${input.length})`);
  return input.map((raw, i) => parseCondition(raw, `conditions.${i}`));
}

function parseCondition(raw: unknown, at: string): Condition {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) throw badRequest(`${at}: must be an object {field, op, value}`);
  const { field, op, value, case_sensitive: caseSensitive, min_score: minScore, ...rest } = raw as Record<string, unknown>;
  const extra = Object.keys(rest);
  if (extra.length) throw badRequest(`${at}: unknown property ${extra[0]}`);
  if (typeof field !== "string" || !(field in CONDITION_FIELDS)) {
    throw badRequest(`${at}.field: must be one of ${Object.keys(CONDITION_FIELDS).join(", ")}`);
  }
  const kind = CONDITION_FIELDS[field]!;
  if (typeof op !== "string" || !OPERATORS[kind].includes(op)) throw badRequest(`${at}.op: for ${field} must be one of ${OPERATORS[kind].join(", ")}`);
  if (caseSensitive !== undefined && typeof caseSensitive !== "boolean") throw badRequest(`${at}.case_sensitive: must be true or false`);
  const condition: Condition = { field: field as keyof FileFacts, op };
  if (caseSensitive) condition.case_sensitive = true;
  if (minScore !== undefined) {
    if (kind !== "predicted_tags" && kind !== "predicted_folder") throw badRequest(`${at}.min_score: only predicted_tags and predicted_folder_id take a min_score`);
    if (typeof minScore !== "number" || !(minScore > 0 && minScore <= 1)) throw badRequest(`${at}.min_score: must be a number above 0 and at most 1`);
    condition.min_score = minScore;
  }
  if (op === "exists" || op === "not_exists") {
    if (value !== undefined && value !== null) throw badRequest(`${at}.value: ${op} takes no value`);
    return condition;
  }
  if (op === "in" || op === "not_in") {
    if (!Array.isArray(value) || value.length === 0 || value.length > MAX_LIST_VALUES || !value.every((v) => typeof v === "string" && v.length > 0 && v.length <= MAX_VALUE_LENGTH)) {
      throw badRequest(`${at}.value: ${op} takes an array of 1-${MAX_LIST_VALUES} non-empty strings`);
    }
    condition.value = value as string[];
    return condition;
  }
  if (kind === "number") {
    if (typeof value !== "number" || !Number.isFinite(value)) throw badRequest(`${at}.value: ${field} compares with a number`);
    condition.value = value;
    return condition;
  }
  if (typeof value !== "string" || value.length === 0 || value.length > MAX_VALUE_LENGTH) {
    throw badRequest(`${at}.value: must be a string of 1-${MAX_VALUE_LENGTH} characters`);
  }
  if (op === "regex") compilePattern(value, caseSensitive === true, `${at}.value`);
  condition.value = value;
  return condition;
}

function compilePattern(pattern: string, caseSensitive: boolean, at: string): RE2JS {
  try {
    return RE2JS.compile(pattern, caseSensitive ? 0 : RE2JS.CASE_INSENSITIVE);
  } catch (err) {
    throw badRequest(`${at}: not a regular expression RE2 accepts (${(err as Error).message}); lookarounds and backreferences are not supported`);
  }
}

/** Compiles a rule's stored conditions once for evaluation over many files. */
export function compileConditions(conditions: Condition[]): Compiled[] {
  return conditions.map((c) => (c.op === "regex" ? { ...c, pattern: compilePattern(String(c.value), c.case_sensitive === true, c.field) } : c));
}

/** Whether the facts meet the conditions: every one of them (`all`) or at least one (`any`); no conditions match everything. */
export function conditionsHold(conditions: Compiled[], match: "all" | "any", facts: FileFacts): boolean {
  if (conditions.length === 0) return true;
  return match === "all" ? conditions.every((c) => holds(c, facts)) : conditions.some((c) => holds(c, facts));
}

function holds(condition: Compiled, facts: FileFacts): boolean {
  const kind = CONDITION_FIELDS[condition.field]!;
  const actual = facts[condition.field];
  const present = actual !== null && actual !== undefined && actual !== "" && !(Array.isArray(actual) && actual.length === 0);
  if (condition.op === "exists") return present;
  if (condition.op === "not_exists") return !present;
  const fold = (s: string) => (condition.case_sensitive ? s : s.toLowerCase());
  const minScore = condition.min_score ?? DEFAULT_AUTO_MATCH_THRESHOLD;
  switch (kind) {
    case "predicted_tags": {
      const scores = actual as FileFacts["predicted_tags"];
      const predicted = (tag: string) => (scores?.get(tag.toLowerCase()) ?? 0) >= minScore;
      if (condition.op === "in") return (condition.value as string[]).some(predicted);
      return condition.op === "contains" ? predicted(String(condition.value)) : !predicted(String(condition.value));
    }
    case "predicted_folder": {
      // A file goes to one folder: the one scored highest, when it scores enough.
      let best: string | null = null;
      let bestScore = minScore;
      for (const [folder, score] of (actual as FileFacts["predicted_folder_id"]) ?? []) {
        if (score >= bestScore) [best, bestScore] = [folder, score];
      }
      const one = (v: string) => best === v.toLowerCase();
      if (condition.op === "in") return (condition.value as string[]).some(one);
      if (condition.op === "not_in") return !(condition.value as string[]).some(one);
      return condition.op === "equals" ? one(String(condition.value)) : !one(String(condition.value));
    }
    case "list": {
      const have = (actual as string[]).map(fold);
      if (condition.op === "in") return (condition.value as string[]).some((v) => have.includes(fold(v)));
      const has = have.includes(fold(String(condition.value)));
      return condition.op === "contains" ? has : !has;
    }
    case "number": {
      if (typeof actual !== "number") return condition.op === "not_equals";
      const wanted = condition.value as number;
      return { equals: actual === wanted, not_equals: actual !== wanted, gt: actual > wanted, gte: actual >= wanted, lt: actual < wanted, lte: actual <= wanted }[condition.op as "gt"];
    }
    case "choice":
    case "id": {
      const have = typeof actual === "string" ? actual.toLowerCase() : null;
      const one = (v: string) => have === v.toLowerCase();
      if (condition.op === "in") return (condition.value as string[]).some(one);
      if (condition.op === "not_in") return !(condition.value as string[]).some(one);
      return condition.op === "equals" ? one(String(condition.value)) : !one(String(condition.value));
    }
    case "text": {
      const text = typeof actual === "string" ? actual : "";
      if (condition.op === "regex") return condition.pattern!.matcher(text).find();
      const have = fold(text);
      const wanted = fold(String(condition.value));
      switch (condition.op) {
        case "contains":
          return have.includes(wanted);
        case "not_contains":
          return !have.includes(wanted);
        case "equals":
          return have === wanted;
        case "not_equals":
          return have !== wanted;
        case "starts_with":
          return have.startsWith(wanted);
        case "ends_with":
          return have.endsWith(wanted);
      }
    }
  }
  return false;
}
