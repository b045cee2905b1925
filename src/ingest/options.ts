/**
 * The upload options shared by streaming, batch and intent uploads (title, tags, description,
 * duplicates, placement, category, custom schema, compliance), validated once with messages
 * that name the field, and the placement rule: folder_id wins, else project_id, else Default.
 */
import { isKnownStandard, knownStandards, COMPLIANCE_IMAGE_TYPES, COMPLIANCE_TYPES, type ComplianceImageType, type ComplianceType } from "../images/compliance.ts";
import { getCustomSchema } from "../schemas/custom-schemas.ts";
import type { Database } from "bun:sqlite";
import { badRequest } from "../errors.ts";
import { parseUuid } from "../ids.ts";
import { getFolder } from "../folders/folders.ts";
import { defaultProjectId, getProject } from "../projects/projects.ts";

export const CONTENT_CATEGORIES = [
  "general", "blueprint", "ce_plan", "technical_diagram", "architectural_design", "product_photo", "real_estate",
  "mining", "robotics", "artwork", "screenshot", "document", "map", "pid", "pfd", "construction", "facility_assessment",
] as const;
export type ContentCategory = (typeof CONTENT_CATEGORIES)[number];

export const MAX_TAGS = 40;
export const MAX_TAG_LENGTH = 50;
export const MAX_TITLE_LENGTH = 255;

export interface Compliance {
  type: ComplianceType;
  standard: string;
  imageType: ComplianceImageType;
}

export interface UploadOptions {
  title: string | null;
  tags: string[];
  autoDescribe: boolean;
  skipDuplicates: boolean;
  storageTarget: "default" | "custom";
  folderId: string | null;
  projectId: string | null;
  contentCategory: ContentCategory;
  customSchemaId: string | null;
  compliance: Compliance | null;
}

/** Raw option values as they arrive (strings from a form, typed values from JSON). */
export type RawOptions = Record<string, unknown>;

function str(raw: RawOptions, field: string): string | null {
  const value = raw[field];
  if (value === undefined || value === null) return null;
  if (typeof value !== "string") throw badRequest(`${field}: must be a string`);
  return value;
}

function bool(raw: RawOptions, field: string, fallback: boolean): boolean {
  const value = raw[field];
  if (value === undefined || value === null || value === "") return fallback;
  if (typeof value === "boolean") return value;
  if (typeof value === "string") {
    const v = value.trim().toLowerCase();
    if (["true", "1", "yes", "on"].includes(v)) return true;
    if (["false", "0", "no", "off"].includes(v)) return false;
  }
  throw badRequest(`${field}: must be true or false`);
}

function uuid(raw: RawOptions, field: string): string | null {
  const value = str(raw, field);
  if (value === null || value === "") return null;
  return parseUuid(value, field);
}

function oneOf<T extends string>(raw: RawOptions, field: string, allowed: readonly T[], fallback: T): T {
  const value = str(raw, field);
  if (value === null || value === "") return fallback;
  if (!(allowed as readonly string[]).includes(value)) throw badRequest(`${field}: must be one of ${allowed.join(", ")}`);
  return value as T;
}

/** Tags: a comma-separated string (forms) or an array (JSON); trimmed, de-duplicated, bounded. */
export function parseTags(value: unknown, limits: { maxTags: number; field?: string } = { maxTags: MAX_TAGS }): string[] {
  const field = limits.field ?? "tags";
  if (value === undefined || value === null || value === "") return [];
  let list: unknown[];
  if (typeof value === "string") list = value.split(",");
  else if (Array.isArray(value)) list = value;
  else throw badRequest(`${field}: must be a comma-separated string or an array of strings`);
  const tags: string[] = [];
  for (const item of list) {
    if (typeof item !== "string") throw badRequest(`${field}: every tag must be a string`);
    const tag = item.trim();
    if (!tag) {
      if (Array.isArray(value)) throw badRequest(`${field}: tags must be 1-${MAX_TAG_LENGTH} characters`);
      continue;
    }
    if (tag.length > MAX_TAG_LENGTH) throw badRequest(`${field}: tag "${tag.slice(0, 20)}…" is longer than ${MAX_TAG_LENGTH} characters`);
    if (!tags.includes(tag)) tags.push(tag);
  }
  if (tags.length > limits.maxTags) throw badRequest(`${field}: at most ${limits.maxTags} tags (got ${tags.length})`);
  return tags;
}

const isComplianceType = (value: string): value is ComplianceType => (COMPLIANCE_TYPES as readonly string[]).includes(value);

export function parseUploadOptions(raw: RawOptions, limits: { maxTags: number } = { maxTags: MAX_TAGS }): UploadOptions {
  const title = str(raw, "title");
  if (title !== null && title.length > MAX_TITLE_LENGTH) throw badRequest(`title: must be at most ${MAX_TITLE_LENGTH} characters`);
  const complianceType = str(raw, "compliance_type");
  const standard = str(raw, "compliance_standard");
  const imageType = oneOf(raw, "compliance_image_type", COMPLIANCE_IMAGE_TYPES, "main");
  let compliance: Compliance | null = null;
  if (complianceType !== null && complianceType !== "") {
    if (!isComplianceType(complianceType)) throw badRequest(`compliance_type: must be ${COMPLIANCE_TYPES.join(" or ")}`);
    if (!standard?.trim()) throw badRequest("compliance_standard: required when compliance_type is set");
    if (standard.length > 100) throw badRequest("compliance_standard: must be at most 100 characters");
    if (!isKnownStandard(complianceType, standard.trim())) {
      throw badRequest(`compliance_standard: unknown ${complianceType} standard "${standard.trim()}"; known: ${knownStandards(complianceType).join(", ")}`);
    }
    compliance = { type: complianceType, standard: standard.trim(), imageType };
  } else if (standard) {
    throw badRequest("compliance_standard: only allowed together with compliance_type");
  }
  return {
    title: title?.trim() || null,
    tags: parseTags(raw.tags, limits),
    autoDescribe: bool(raw, "auto_describe", true),
    skipDuplicates: bool(raw, "skip_duplicates", false),
    storageTarget: oneOf(raw, "storage_target", ["default", "custom"] as const, "default"),
    folderId: uuid(raw, "folder_id"),
    projectId: uuid(raw, "project_id"),
    contentCategory: oneOf(raw, "content_category", CONTENT_CATEGORIES, "general"),
    customSchemaId: uuid(raw, "custom_schema_id"),
    compliance,
  };
}

/**
 * Checks what the upload refers to in the tenant (custom schema, folder, project) and returns
 * where new files go: into folder_id (and its project), else the top of project_id, else Default.
 */
export function resolvePlacement(db: Database, orgId: string, options: UploadOptions): { projectId: string; folderId: string | null } {
  if (options.customSchemaId) getCustomSchema(db, orgId, options.customSchemaId);
  if (options.folderId) {
    const folder = getFolder(db, orgId, options.folderId);
    if (options.projectId && options.projectId !== folder.project_id) {
      throw badRequest(`folder_id: folder ${folder.id} belongs to project ${folder.project_id}, not ${options.projectId}`);
    }
    return { projectId: folder.project_id, folderId: folder.id };
  }
  if (options.projectId) return { projectId: getProject(db, orgId, options.projectId).id, folderId: null };
  return { projectId: defaultProjectId(db, orgId), folderId: null };
}

export const ANALYZE_TIMEOUT_SECONDS = { min: 5, max: 120, fallback: 60 };

/** The `timeout` field of the analyze endpoints: whole seconds, 5-120, default 60. */
export function parseAnalyzeTimeout(fields: Record<string, string>): number {
  const raw = fields.timeout;
  const { min, max, fallback } = ANALYZE_TIMEOUT_SECONDS;
  if (raw === undefined || raw.trim() === "") return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max) throw badRequest(`timeout: must be an integer number of seconds from ${min} to ${max}`);
  return n;
}
