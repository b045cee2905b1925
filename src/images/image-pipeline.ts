/**
 * The image pipeline: what happens to an image after upload, stage by stage. Variants (with
 * blurhash, dimensions and EXIF time) come first because everything else reads them; a file
 * that cannot be decoded stops there and fails for good. The later stages (OCR, embedding,
 * description, custom schema, compliance) each record their own outcome and timing in
 * file_stage_runs, and one failing stage never hides the others' results.
 */
import { mkdirSync } from "node:fs";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import sharp from "sharp";
import { isoAt } from "../clock.ts";
import type { AppContext } from "../context.ts";
import { saveExtraction } from "../extractions/extractions.ts";
import { scratchRoot } from "../processing/scratch.ts";
import { readObject } from "../storage/blob-store.ts";
import { PermanentJobError, type JobContext, type QueueDefinition } from "../jobs/runner.ts";
import { fileById, type FileRow, tagsOf } from "../library/file-rows.ts";
import type { FileProcessingPayload, MediaPipeline, PipelineReport } from "../processing/file-processing.ts";
import { getCustomSchema } from "../schemas/custom-schemas.ts";
import { CONTENT_CATEGORIES, type ContentCategory } from "../ingest/options.ts";
import { evaluateCompliance, type ComplianceImageType, type ComplianceType } from "./compliance.ts";
import { CATEGORY_PROMPTS, categorize, categoryFromSimilarities, composeDescription, COMPOSED_MODEL, dominantColours, factTags, mergeTags, type ImageFacts } from "./describe.ts";
import type { OcrResult } from "./ocr.ts";
import { EMBEDDED_VARIANT, storeImageEmbedding } from "./image-embeddings.ts";
import { fillSchema } from "./schema-fill.ts";
import { ImageDecodeError, renderImage, VARIANT_CONTENT_TYPE, type RenderedImage } from "./variants.ts";
import type { ImageAnalysis, ImageEmbedding } from "./vision.ts";
import { errorMessage } from "../errors.ts";

export type StageName = "variants" | "ocr" | "embedding" | "objects" | "description" | "custom_schema" | "compliance";

export interface StageOutcome {
  status: "completed" | "failed" | "skipped";
  duration_ms: number;
  error?: string;
}


const variantBlobKey = (orgId: string, fileId: string, type: string) => `orgs/${orgId}/files/${fileId}/variants/${type}.webp`;

function recordStage(ctx: AppContext, fileId: string, stage: StageName, outcome: StageOutcome): void {
  ctx.db
    .query(
      `INSERT INTO file_stage_runs (file_id, stage, status, duration_ms, error, finished_at) VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT (file_id, stage) DO UPDATE SET status = excluded.status, duration_ms = excluded.duration_ms,
         error = excluded.error, finished_at = excluded.finished_at`,
    )
    .run(fileId, stage, outcome.status, outcome.duration_ms, outcome.error ?? null, isoAt(ctx.clock.now()));
}

/** Runs one stage, timing it and recording the outcome; returns the value or null when it failed. */
async function runStage<T>(ctx: AppContext, fileId: string, stage: StageName, outcomes: Partial<Record<StageName, StageOutcome>>, fn: () => Promise<T>): Promise<T | null> {
  const started = performance.now();
  try {
    const value = await fn();
    const outcome: StageOutcome = { status: "completed", duration_ms: Math.round(performance.now() - started) };
    outcomes[stage] = outcome;
    recordStage(ctx, fileId, stage, outcome);
    return value;
  } catch (err) {
    const outcome: StageOutcome = { status: "failed", duration_ms: Math.round(performance.now() - started), error: errorMessage(err) };
    outcomes[stage] = outcome;
    recordStage(ctx, fileId, stage, outcome);
    ctx.log.warn("image stage failed", { file_id: fileId, stage, err: outcome.error });
    return null;
  }
}

function skipStage(ctx: AppContext, fileId: string, stage: StageName, outcomes: Partial<Record<StageName, StageOutcome>>, why: string) {
  const outcome: StageOutcome = { status: "skipped", duration_ms: 0, error: why };
  outcomes[stage] = outcome;
  recordStage(ctx, fileId, stage, outcome);
}

async function readOriginal(ctx: AppContext, file: FileRow): Promise<Buffer> {
  const bytes = file.blob_key ? await readObject(ctx.blobs, file.blob_key) : null;
  if (!bytes) throw new PermanentJobError(`the original of image ${file.id} is missing from the store`);
  return bytes;
}

/** Renders and stores the four variants; the file row then points at them. Throws PermanentJobError for an undecodable image. */
async function generateVariants(ctx: AppContext, file: FileRow, original: Buffer): Promise<RenderedImage> {
  const at = () => isoAt(ctx.clock.now());
  ctx.db.query("UPDATE files SET variant_status = 'processing', updated_at = ? WHERE id = ?").run(at(), file.id);
  let rendered: RenderedImage;
  try {
    rendered = await renderImage(original);
  } catch (err) {
    const why = err instanceof ImageDecodeError ? err.message : `variant generation failed: ${errorMessage(err)}`;
    ctx.db.query("UPDATE files SET variant_status = 'failed', processing_error = ?, updated_at = ? WHERE id = ?").run(why, at(), file.id);
    if (err instanceof ImageDecodeError) throw new PermanentJobError(why);
    throw err;
  }
  const dir = join(scratchRoot(ctx.config.dataDir), `variants-${crypto.randomUUID()}`);
  mkdirSync(dir, { recursive: true });
  try {
    for (const variant of rendered.variants) {
      const key = variantBlobKey(file.org_id, file.id, variant.type);
      const path = join(dir, variant.type);
      await Bun.write(path, variant.data);
      await ctx.blobs.importFile(key, path, VARIANT_CONTENT_TYPE);
      ctx.db
        .query(
          `INSERT INTO image_variants (file_id, variant_type, blob_key, width, height, size_bytes, content_type, created_at)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?)
           ON CONFLICT (file_id, variant_type) DO UPDATE SET blob_key = excluded.blob_key, width = excluded.width,
             height = excluded.height, size_bytes = excluded.size_bytes, created_at = excluded.created_at`,
        )
        .run(file.id, variant.type, key, variant.width, variant.height, variant.data.length, VARIANT_CONTENT_TYPE, at());
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  ctx.db
    .query(
      `UPDATE files SET variant_status = 'completed', variant_count = ?, width = ?, height = ?, format = ?, blur_hash = ?,
         content_created_at = coalesce(content_created_at, ?), updated_at = ? WHERE id = ?`,
    )
    .run(rendered.variants.length, rendered.width, rendered.height, rendered.format, rendered.blurHash, rendered.takenAt, at(), file.id);
  return rendered;
}

function variantData(rendered: RenderedImage, type: "large_1024" | "medium_750" | "tiny_64"): Buffer {
  return rendered.variants.find((v) => v.type === type)!.data;
}

/** Zero-shot choice among the spec's content categories by the vision endpoint; null when it cannot say. */
async function classifyWithEndpoint(ctx: AppContext, jpeg: Buffer): Promise<ContentCategory | null> {
  const schema = { type: "object", properties: { category: { type: "string", enum: [...CONTENT_CATEGORIES] } }, required: ["category"], additionalProperties: false };
  const hint = "Pick the one category that best fits this image. general means none of the others fits.";
  const answer = (await ctx.images.endpoint!.extractJson(jpeg, "image/jpeg", schema, hint).catch(() => null)) as { category?: unknown } | null;
  return CONTENT_CATEGORIES.includes(answer?.category as ContentCategory) ? (answer!.category as ContentCategory) : null;
}

/** Zero-shot choice by the CLIP model's text tower; null without CLIP, its text tower or the image's embedding. */
async function classifyWithClip(ctx: AppContext, embedding: ImageEmbedding | null): Promise<ContentCategory | null> {
  if (!embedding) return null;
  try {
    const similarities = await ctx.images.vision.textSimilarities(embedding.vector, Object.values(CATEGORY_PROMPTS));
    return similarities ? categoryFromSimilarities(similarities).category : null;
  } catch (err) {
    // A broken text tower costs the category, not the description.
    ctx.log.warn("CLIP zero-shot category failed", { err: errorMessage(err) });
    return null;
  }
}

async function describeImage(
  ctx: AppContext,
  file: FileRow,
  rendered: RenderedImage,
  facts: ImageFacts,
  embedding: ImageEmbedding | null,
  endpointJpeg: () => Promise<Buffer>,
) {
  const { captioner, endpoint } = ctx.images;
  const composed = composeDescription(facts);
  const items: { model: string; kind: string; text: string }[] = [];
  let endpointCategory: ContentCategory | null = null;
  if (endpoint) {
    const jpeg = await endpointJpeg();
    const answer = await endpoint.describe(jpeg, "image/jpeg");
    items.push({ model: answer.model, kind: "caption", text: answer.text });
    if (file.content_category === "general") endpointCategory = await classifyWithEndpoint(ctx, jpeg);
  } else if (captioner) {
    const { data, info } = await sharp(variantData(rendered, "medium_750")).removeAlpha().raw().toBuffer({ resolveWithObject: true });
    items.push({ model: `${captioner.modelName} (${captioner.folder})`, kind: "caption", text: await captioner.caption(data, info.width, info.height) });
  }
  items.push({ model: COMPOSED_MODEL, kind: "summary", text: composed });

  const current = fileById(ctx.db, file.id);
  if (!current) return items[0]!.text;
  const at = isoAt(ctx.clock.now());
  const category =
    current.content_category !== "general" ? current.content_category : (endpointCategory ?? (await classifyWithClip(ctx, embedding)) ?? categorize(facts));
  ctx.db.transaction(() => {
    ctx.db.query("DELETE FROM file_descriptions WHERE file_id = ?").run(file.id);
    for (const item of items) {
      ctx.db.query("INSERT INTO file_descriptions (id, file_id, model, kind, text, created_at) VALUES (?, ?, ?, ?, ?, ?)").run(
        crypto.randomUUID(), file.id, item.model, item.kind, item.text, at,
      );
    }
    ctx.db
      .query(
        `UPDATE files SET upload_description = ?, tags = ?, content_category = ?, description_status = 'completed',
           description_error = NULL, description_generated_at = ?, updated_at = ? WHERE id = ?`,
      )
      .run(items[0]!.text, JSON.stringify(mergeTags(tagsOf(current), factTags(facts))), category, at, at, file.id);
  })();
  return items[0]!.text;
}

export async function runImagePipeline(ctx: AppContext, job: JobContext<FileProcessingPayload>, fileId: string): Promise<PipelineReport> {
  const file = fileById(ctx.db, fileId);
  if (!file) return { summary: { file_id: fileId, skipped: "file deleted" }, warnings: null };
  const outcomes: Partial<Record<StageName, StageOutcome>> = {};
  const original = await readOriginal(ctx, file);

  const started = performance.now();
  let rendered: RenderedImage;
  try {
    rendered = await generateVariants(ctx, file, original);
  } catch (err) {
    recordStage(ctx, fileId, "variants", { status: "failed", duration_ms: Math.round(performance.now() - started), error: errorMessage(err) });
    if (file.description_status === "pending") {
      ctx.db
        .query("UPDATE files SET description_status = 'failed', description_error = ?, updated_at = ? WHERE id = ?")
        .run(`not described: ${errorMessage(err)}`, isoAt(ctx.clock.now()), fileId);
    }
    throw err;
  }
  const variantsOutcome: StageOutcome = { status: "completed", duration_ms: Math.round(performance.now() - started) };
  outcomes.variants = variantsOutcome;
  recordStage(ctx, fileId, "variants", variantsOutcome);
  job.progress(20);

  const ocr: OcrResult | null = await runStage(ctx, fileId, "ocr", outcomes, async () => {
    const result = await ctx.images.ocr.recognize(rendered.readable);
    const regions = result.regions.map((r) => ({ text: r.text, bounding_box: r.bounding_box, confidence: r.confidence }));
    ctx.db.transaction(() => {
      saveExtraction(ctx.db, ctx.clock, fileId, "text_regions", ctx.images.ocr.modelDescription, { regions });
      ctx.db.query("UPDATE files SET visible_text = ?, updated_at = ? WHERE id = ?").run(result.text || null, isoAt(ctx.clock.now()), fileId);
    })();
    return result;
  });
  job.progress(40);

  const large = variantData(rendered, EMBEDDED_VARIANT);
  // Endpoints take JPEG everywhere (WebP support varies between servers); made once, when first needed.
  let jpeg: Promise<Buffer> | undefined;
  const endpointJpeg = () => (jpeg ??= sharp(large).jpeg({ quality: 85 }).toBuffer());
  const embedding = await runStage(ctx, fileId, "embedding", outcomes, () => storeImageEmbedding(ctx, file, large));
  job.progress(60);

  const wantsDescription = file.description_status === "pending";
  const wantsSchema = file.custom_schema_id !== null;
  let analysis: ImageAnalysis | null = null;
  let analysisError: string | null = null;
  if (wantsDescription || wantsSchema) {
    analysis = await runStage(ctx, fileId, "objects", outcomes, () => ctx.images.vision.analyze(large));
    if (!analysis) analysisError = `object and face detection failed: ${outcomes.objects?.error}`;
  } else {
    skipStage(ctx, fileId, "objects", outcomes, "no description or custom schema asked for");
  }
  const tiny = await sharp(variantData(rendered, "tiny_64")).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  const facts: ImageFacts = {
    width: rendered.width,
    height: rendered.height,
    format: rendered.format,
    objects: analysis?.objects ?? [],
    faces: analysis?.faces ?? 0,
    ocrLines: ocr?.regions.map((r) => r.text) ?? [],
    colours: dominantColours(tiny.data, tiny.info.channels),
  };

  let description: string | null = null;
  if (!wantsDescription) {
    skipStage(ctx, fileId, "description", outcomes, file.description_error ?? "auto_describe is false");
  } else {
    ctx.db.query("UPDATE files SET description_status = 'processing', updated_at = ? WHERE id = ?").run(isoAt(ctx.clock.now()), fileId);
    description = await runStage(ctx, fileId, "description", outcomes, async () => {
      if (analysisError) throw new Error(analysisError);
      return describeImage(ctx, file, rendered, facts, embedding, endpointJpeg);
    });
    if (description === null) {
      ctx.db
        .query("UPDATE files SET description_status = 'failed', description_error = ?, updated_at = ? WHERE id = ?")
        .run(outcomes.description?.error ?? "description failed", isoAt(ctx.clock.now()), fileId);
    }
  }
  job.progress(80);

  if (!wantsSchema) skipStage(ctx, fileId, "custom_schema", outcomes, "no custom_schema_id");
  else {
    await runStage(ctx, fileId, "custom_schema", outcomes, async () => {
      if (analysisError) throw new Error(analysisError);
      const schema = getCustomSchema(ctx.db, file.org_id, file.custom_schema_id!);
      const current = fileById(ctx.db, fileId)!;
      const evidence = {
        description: current.upload_description,
        tags: tagsOf(current),
        objects: facts.objects,
        faces: facts.faces,
        ocrText: ocr?.text ?? "",
        ocrLines: facts.ocrLines,
        width: rendered.width,
        height: rendered.height,
        format: rendered.format,
        takenAt: current.content_created_at,
        dominantColours: facts.colours,
      };
      const { endpoint } = ctx.images;
      // The endpoint fills the whole schema; without one, the local evidence does (and says what it could not).
      const filled = endpoint
        ? { source: "vision endpoint", value: await endpoint.extractJson(await endpointJpeg(), "image/jpeg", schema.schema, schema.prompt_hint ?? undefined), filled: null, unfilled: null }
        : { source: "mediabox schema-fill (local evidence)", ...fillSchema(schema.schema, evidence) };
      saveExtraction(ctx.db, ctx.clock, fileId, "custom_schema", filled.source, {
        schema_id: schema.id,
        schema_name: schema.name,
        value: filled.value,
        filled: filled.filled,
        unfilled: filled.unfilled,
      });
    });
  }

  if (!file.compliance_type || !file.compliance_standard) skipStage(ctx, fileId, "compliance", outcomes, "no compliance_type");
  else {
    await runStage(ctx, fileId, "compliance", outcomes, async () => {
      const result = evaluateCompliance({
        standard: file.compliance_standard!,
        type: file.compliance_type as ComplianceType,
        imageType: (file.compliance_image_type ?? "main") as ComplianceImageType,
        width: rendered.width,
        height: rendered.height,
        sizeBytes: file.size_bytes,
        format: rendered.format,
        ocrRegions: ocr?.regions ?? [],
        borderMeanRgb: rendered.border.mean,
        borderStdDev: rendered.border.stdDev,
      });
      ctx.db.transaction(() => {
        saveExtraction(ctx.db, ctx.clock, fileId, "mls_compliance", `mediabox compliance rules (${result.type}/${result.standard})`, result);
        ctx.db.query("UPDATE files SET compliance_status = ?, updated_at = ? WHERE id = ?").run(result.status, isoAt(ctx.clock.now()), fileId);
      })();
    });
  }
  job.progress(100);

  const final = fileById(ctx.db, fileId);
  const failed = Object.entries(outcomes).filter(([, o]) => o.status === "failed");
  const summary = {
    file_id: fileId,
    image_id: fileId,
    variant_status: final?.variant_status ?? null,
    description_status: final?.description_status ?? null,
    description: final?.upload_description ?? description,
    tags: final ? tagsOf(final) : [],
    visible_text: final?.visible_text ?? null,
    stages: outcomes,
  };
  return { summary, warnings: failed.length ? failed.map(([stage, o]) => `${stage}: ${o.error}`).join("; ") : null };
}

/** Re-renders an image's variants only (POST /files/{id}/trigger-variants). */
export const IMAGE_VARIANTS_QUEUE = "image.variants";

export function imageVariantsQueue(ctx: AppContext): QueueDefinition<FileProcessingPayload> {
  return {
    name: IMAGE_VARIANTS_QUEUE,
    concurrency: 1,
    timeoutMs: 10 * 60 * 1000,
    async handler(job) {
      const file = fileById(ctx.db, job.payload.fileId);
      if (!file || file.deleted_at) return [{ file_id: job.payload.fileId, skipped: "file deleted" }];
      const started = performance.now();
      const rendered = await generateVariants(ctx, file, await readOriginal(ctx, file));
      recordStage(ctx, file.id, "variants", { status: "completed", duration_ms: Math.round(performance.now() - started) });
      return [{ file_id: file.id, variant_status: "completed", variant_count: rendered.variants.length }];
    },
  };
}

export const imagePipeline: MediaPipeline = {
  mediaType: "image",
  produces: { thumbnails: true, analysis: true },
  run: runImagePipeline,
};
