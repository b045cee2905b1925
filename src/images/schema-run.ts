/**
 * Filling a custom extraction schema and storing the result as the file's `custom_schema`
 * extraction: from the image pipeline's own findings (its custom_schema stage), or later, from
 * what the library stored about an image (a rule's run_schema action, rules/schema-action.ts). A vision endpoint, when
 * configured, fills an image's schema from the image itself; otherwise schema-fill.ts fills it
 * from the evidence and says what it could not.
 */
import sharp from "sharp";
import type { CustomSchema } from "../custom-schemas/custom-schemas.ts";
import { getExtraction, saveExtraction } from "../extractions/extractions.ts";
import { tagsOf, type FileRow } from "../files/file.ts";
import { PermanentJobError } from "../jobs/runner.ts";
import { readObject } from "../storage/blob-store.ts";
import type { ImageDeps } from "./deps.ts";
import { dominantColours } from "./describe.ts";
import { EMBEDDED_VARIANT } from "./image-embeddings.ts";
import { findingsOf, storeFindings, type ImageFindings } from "./image-findings.ts";
import { fillSchema, type Evidence } from "./schema-fill.ts";
import { imageFactsOf } from "./image-facts.ts";

export interface SchemaRunResult {
  source: string;
  filled: string[] | null;
  unfilled: string[] | null;
}

/** Fills `schema` (by the endpoint from `jpeg` when there is one and an image to send, else from `evidence`) and stores it. */
export async function fillAndStore(ctx: Pick<ImageDeps, "sql" | "clock" | "images">, file: Pick<FileRow, "id">, schema: CustomSchema, evidence: Evidence, jpeg: (() => Promise<Buffer>) | null): Promise<SchemaRunResult> {
  const { endpoint } = ctx.images;
  // The endpoint fills the whole schema; without one, the local evidence does (and says what it could not).
  const filled =
    endpoint && jpeg
      ? { source: "vision endpoint", value: await endpoint.extractJson(await jpeg(), "image/jpeg", schema.schema, schema.prompt_hint ?? undefined), filled: null, unfilled: null }
      : { source: "mediabox schema-fill (local evidence)", ...fillSchema(schema.schema, evidence) };
  await saveExtraction(ctx.sql, ctx.clock, file.id, "custom_schema", filled.source, {
    schema_id: schema.id,
    schema_name: schema.name,
    value: filled.value,
    filled: filled.filled,
    unfilled: filled.unfilled,
  });
  return { source: filled.source, filled: filled.filled, unfilled: filled.unfilled };
}

async function variantBytes(ctx: ImageDeps, fileId: string, type: string): Promise<Buffer | null> {
  const row = await ctx.sql.one<{ blob_key: string }>("SELECT blob_key FROM image_variants WHERE file_id = ? AND variant_type = ?", [fileId, type]);
  return row ? await readObject(ctx.blobs, row.blob_key) : null;
}

/** The image's stored findings; an image analysed without them (no description asked for) is looked at now, from its stored variant, and they are kept. */
async function findingsFor(ctx: ImageDeps, file: FileRow, large: Buffer): Promise<ImageFindings> {
  const stored = await findingsOf(ctx.sql, file.id);
  if (stored) return stored;
  const analysis = await ctx.images.vision.analyze(large);
  const tinyBytes = await variantBytes(ctx, file.id, "tiny_64");
  const tiny = tinyBytes ? await sharp(tinyBytes).removeAlpha().raw().toBuffer({ resolveWithObject: true }) : null;
  const findings = { objects: analysis.objects, faces: analysis.faces, people: analysis.people, colours: tiny ? dominantColours(tiny.data, tiny.info.channels) : [] };
  await storeFindings(ctx.sql, ctx.clock, file.id, findings);
  return findings;
}

async function ocrLinesOf(ctx: ImageDeps, fileId: string): Promise<string[]> {
  const regions = ((await getExtraction(ctx.sql, fileId, "text_regions"))?.corrected as { regions?: { text?: unknown }[] } | undefined)?.regions ?? [];
  return regions.map((r) => (typeof r.text === "string" ? r.text : "")).filter(Boolean);
}

/**
 * What a stored image offers a schema: its findings, OCR, size and capture date, and its large
 * variant as JPEG for a vision endpoint. An image without a variant to read fails for good.
 */
export async function storedImageEvidence(ctx: ImageDeps, file: FileRow): Promise<{ evidence: Evidence; jpeg: () => Promise<Buffer> }> {
  const large = await variantBytes(ctx, file.id, EMBEDDED_VARIANT);
  // Retrying cannot make a variant appear: the image is analysed again by reprocessing.
  if (!large) throw new PermanentJobError(`image ${file.id} has no ${EMBEDDED_VARIANT} variant to read (variants: ${(await imageFactsOf(ctx.sql, file.id)).variantStatus ?? "not rendered"})`);
  const findings = await findingsFor(ctx, file, large);
  const evidence: Evidence = {
    description: file.user_description ?? file.upload_description,
    tags: tagsOf(file),
    takenAt: file.content_created_at,
    objects: findings.objects,
    faces: findings.faces,
    ocrText: file.visible_text ?? "",
    ocrLines: await ocrLinesOf(ctx, file.id),
    width: file.width,
    height: file.height,
    format: file.format,
    dominantColours: findings.colours,
  };
  return { evidence, jpeg: () => sharp(large).jpeg({ quality: 85 }).toBuffer() };
}
