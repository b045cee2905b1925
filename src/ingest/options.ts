/**
 * The upload options shared by streaming, batch and intent uploads (title, tags, description,
 * duplicates, placement, category, custom schema, compliance): each field's shape declared once
 * in TypeBox (for multipart fields and JSON bodies alike), the rules between fields, and the
 * placement rule: folder_id wins, else project_id, else Default.
 */
import { isKnownStandard, knownStandards, COMPLIANCE_IMAGE_TYPES, COMPLIANCE_TYPES, type ComplianceImageType, type ComplianceType } from "../compliance/compliance.ts";
import { getCustomSchema } from "../custom-schemas/custom-schemas.ts";
import type { SqlClient } from "../db/sql-client.ts";
import { Type } from "@sinclair/typebox";
import { t } from "elysia";
import { badRequest } from "../errors.ts";
import { CONTENT_CATEGORIES, MAX_TAG_LENGTH, MAX_TAGS, MAX_TITLE_LENGTH, parseTags, type ContentCategory } from "../files/file-fields.ts";
import { Enum, Nullable, OneOf, UuidText } from "../http/shapes.ts";
import { checkForm } from "../http/validation.ts";
import { placement, type Placement } from "../folders/placement.ts";

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

/** What an upload that sets nothing gets: intake paths (cloud, mail, watched folders) start from it. */
export const DEFAULT_UPLOAD_OPTIONS: Readonly<UploadOptions> = {
  title: null,
  tags: [],
  autoDescribe: true,
  skipDuplicates: false,
  storageTarget: "default",
  folderId: null,
  projectId: null,
  contentCategory: "general",
  customSchemaId: null,
  compliance: null,
};

/**
 * Each upload option's shape, once: the multipart form of streaming and batch uploads
 * (UploadFormFields) and the JSON body of upload intents (uploadOptionsJson) are built from it.
 */
const field = {
  title: t.String({ maxLength: MAX_TITLE_LENGTH, error: `must be at most ${MAX_TITLE_LENGTH} characters` }),
  autoDescribe: t.Boolean({ error: "must be true or false", description: "Describe images with AI (default true)" }),
  skipDuplicates: t.Boolean({ error: "must be true or false", description: "Answer with the organization's existing copy of the same content (default false)" }),
  storageTarget: OneOf(["default", "custom"] as const, "Where the bytes are stored (default: default)"),
  folderId: UuidText("Folder to put the files in (its project wins over project_id)"),
  projectId: UuidText("Project to put the files in (default: the Default project)"),
  contentCategory: OneOf(CONTENT_CATEGORIES, "default: general (an image's is then chosen by its analysis)"),
  customSchemaId: UuidText("Custom extraction schema to fill from each image"),
  complianceType: Enum(COMPLIANCE_TYPES, { error: `must be ${COMPLIANCE_TYPES.join(" or ")}` }),
  complianceStandard: t.String({ maxLength: 100, error: "must be at most 100 characters", description: "Required with compliance_type" }),
  complianceImageType: OneOf(COMPLIANCE_IMAGE_TYPES, "Which photo of the listing this is (default: main)"),
};

/** The upload options as multipart text fields (checked with checkForm). */
export const UploadFormFields = t.Object({
  title: t.Optional(field.title),
  tags: t.Optional(t.String({ description: `Comma-separated; at most ${MAX_TAGS} tags of 1-${MAX_TAG_LENGTH} characters` })),
  auto_describe: t.Optional(field.autoDescribe),
  skip_duplicates: t.Optional(field.skipDuplicates),
  storage_target: t.Optional(field.storageTarget),
  folder_id: t.Optional(field.folderId),
  project_id: t.Optional(field.projectId),
  content_category: t.Optional(field.contentCategory),
  custom_schema_id: t.Optional(field.customSchemaId),
  compliance_type: t.Optional(field.complianceType),
  compliance_standard: t.Optional(field.complianceStandard),
  compliance_image_type: t.Optional(field.complianceImageType),
});

/** The upload options as properties of a JSON body (null means absent). */
export const uploadOptionsJson = {
  title: t.Optional(Nullable(field.title)),
  tags: t.Optional(t.Array(t.String(), { error: "tags: must be an array of strings" })),
  auto_describe: t.Optional(field.autoDescribe),
  skip_duplicates: t.Optional(field.skipDuplicates),
  storage_target: t.Optional(field.storageTarget),
  folder_id: t.Optional(Nullable(field.folderId)),
  project_id: t.Optional(Nullable(field.projectId)),
  content_category: t.Optional(field.contentCategory),
  custom_schema_id: t.Optional(Nullable(field.customSchemaId)),
  compliance_type: t.Optional(Nullable(field.complianceType)),
  compliance_standard: t.Optional(Nullable(field.complianceStandard)),
  compliance_image_type: t.Optional(Nullable(field.complianceImageType)),
};

/**
 * JSON clients, like forms, may send "" for an option they leave unset: removed from the body
 * before its schema is checked (a route's transform), so "" means absent in both.
 */
export function emptyOptionsAbsent(body: unknown): void {
  if (typeof body !== "object" || body === null) return;
  const record = body as Record<string, unknown>;
  for (const name of Object.keys(uploadOptionsJson)) if (record[name] === "") delete record[name];
}

/** Upload option fields whose shape was checked (a form's, or a JSON body's). */
export interface UploadFields {
  title?: string | null;
  tags?: string | string[];
  auto_describe?: boolean;
  skip_duplicates?: boolean;
  storage_target?: "default" | "custom";
  folder_id?: string | null;
  project_id?: string | null;
  content_category?: ContentCategory;
  custom_schema_id?: string | null;
  compliance_type?: ComplianceType | null;
  compliance_standard?: string | null;
  compliance_image_type?: ComplianceImageType | null;
}

/** The options of a multipart upload: its text fields' shape, then the rules between them. */
export function parseUploadOptions(fields: Record<string, string>, limits: { maxTags: number } = { maxTags: MAX_TAGS }): UploadOptions {
  return uploadOptions(checkForm(UploadFormFields, fields), limits);
}

/**
 * Options from fields of a checked shape. What is left are rules no schema states: tags trimmed,
 * de-duplicated and counted; a compliance standard required with, and only with, a compliance
 * type, and known for it; defaults.
 */
export function uploadOptions(fields: UploadFields, limits: { maxTags: number } = { maxTags: MAX_TAGS }): UploadOptions {
  const complianceType = fields.compliance_type ?? null;
  const standard = fields.compliance_standard?.trim() ?? "";
  let compliance: Compliance | null = null;
  if (complianceType !== null) {
    if (!standard) throw badRequest("compliance_standard: required when compliance_type is set");
    if (!isKnownStandard(complianceType, standard)) {
      throw badRequest(`compliance_standard: unknown ${complianceType} standard "${standard}"; known: ${knownStandards(complianceType).join(", ")}`);
    }
    compliance = { type: complianceType, standard, imageType: fields.compliance_image_type ?? "main" };
  } else if (fields.compliance_standard) {
    throw badRequest("compliance_standard: only allowed together with compliance_type");
  }
  const id = (value: string | null | undefined) => value?.toLowerCase() ?? null;
  return {
    title: fields.title?.trim() || null,
    tags: parseTags(fields.tags, limits),
    autoDescribe: fields.auto_describe ?? true,
    skipDuplicates: fields.skip_duplicates ?? false,
    storageTarget: fields.storage_target ?? "default",
    folderId: id(fields.folder_id),
    projectId: id(fields.project_id),
    contentCategory: fields.content_category ?? "general",
    customSchemaId: id(fields.custom_schema_id),
    compliance,
  };
}

/**
 * Checks what the upload refers to in the tenant (custom schema, folder, project) and returns
 * where new files go: into folder_id (and its project), else the top of project_id, else Default.
 */
export async function resolvePlacement(deps: { sql: SqlClient }, orgId: string, options: UploadOptions): Promise<Placement> {
  if (options.customSchemaId) await getCustomSchema(deps.sql, orgId, options.customSchemaId);
  return placement(deps.sql, orgId, options.folderId, options.projectId);
}

export const ANALYZE_TIMEOUT_SECONDS = { min: 5, max: 120, fallback: 60 };

/**
 * The analyze endpoints' own form field, besides the upload options. TypeBox's Integer, not
 * Elysia's t.Integer: that one also passes any string of digits, whatever its range.
 */
export const AnalyzeFormFields = t.Object({
  timeout: t.Optional(
    Type.Integer({
      minimum: ANALYZE_TIMEOUT_SECONDS.min,
      maximum: ANALYZE_TIMEOUT_SECONDS.max,
      error: `must be an integer number of seconds from ${ANALYZE_TIMEOUT_SECONDS.min} to ${ANALYZE_TIMEOUT_SECONDS.max}`,
      description: `Seconds to wait for the analysis (default ${ANALYZE_TIMEOUT_SECONDS.fallback})`,
    }),
  ),
});

/** The `timeout` field of the analyze endpoints: whole seconds, 5-120, default 60. */
export function parseAnalyzeTimeout(fields: Record<string, string>): number {
  return checkForm(AnalyzeFormFields, fields).timeout ?? ANALYZE_TIMEOUT_SECONDS.fallback;
}
