/**
 * The image pipeline: what happens to an image after upload, as a list of stages over one
 * ImageWork (run by processing/stage-runner.ts, which records each stage's outcome and time).
 * Variants (with blurhash, dimensions and capture time) come first because everything else reads
 * them; an image that cannot be decoded stops there and fails for good. OCR, embedding, objects,
 * description, custom schema and compliance each succeed or fail on their own.
 */
import { complianceChecked, complianceOf, type ComplianceRequest } from "../compliance/image-compliance.ts";
import type { Config } from "../config.ts";
import sharp from "sharp";
import { replaceDescriptions, type DescriptionItem } from "../processing/descriptions.ts";
import type { ImageDeps } from "./deps.ts";
import { saveExtraction } from "../extractions/extractions.ts";
import { readObject } from "../storage/blob-store.ts";
import { PermanentJobError, type JobContext, type QueueDefinition } from "../jobs/runner.ts";
import { tagsOf, type FileRow } from "../files/file.ts";
import type { PipelineReport } from "../kinds/media-kind.ts";
import { fileJob } from "../processing/file-job.ts";
import type { FileJobPayload } from "../jobs/catalogue.ts";
import { failedStages, runStages, stageBudgetsOf, type FileWork, type PipelineOptions, type Stage } from "../processing/stage-runner.ts";
import { getCustomSchema } from "../custom-schemas/custom-schemas.ts";
import { CONTENT_CATEGORIES, type ContentCategory } from "../files/file-fields.ts";
import { evaluateCompliance, type ComplianceImageType, type ComplianceType } from "../compliance/compliance.ts";
import { CATEGORY_PROMPTS, categorize, categoryFromSimilarities, composeDescription, COMPOSED_MODEL, dominantColours, factTags, mergeTags, type ImageFacts } from "./describe.ts";
import type { OcrResult } from "../ocr/ocr.ts";
import { EMBEDDED_VARIANT, storeImageEmbedding } from "./image-embeddings.ts";
import { storeFindings } from "./image-findings.ts";
import { fillAndStore } from "./schema-run.ts";
import { ImageDecodeError, renderImage, type RenderedImage } from "./variants.ts";
import { storeVariants } from "./variant-store.ts";
import { imageFactsOf, variantsFailed, variantsRendered, variantsStarted } from "./image-facts.ts";
import { TEXT_GATE_MODEL, textLikelihoodOf } from "./text-gate.ts";
import type { ImageAnalysis, ImageEmbedding } from "./vision.ts";
import { errorMessage } from "../errors.ts";
import { storeCameraFacts } from "../camera/camera-facts.ts";
import { recordFingerprint } from "../duplicates/duplicate-store.ts";
import { fingerprint } from "../duplicates/fingerprint.ts";
import { storeFaces } from "../people/people.ts";
import { enqueueClustering } from "../people/people-jobs.ts";

/** One image on its way through the stages; each stage leaves its result here for the next. */
/** What the image pipeline takes from the settings, read once when the kind (or the variants queue) is built. */
export interface ImagePipelineOptions extends PipelineOptions {
  /** MEDIABOX_IMAGE_MAX_PIXELS: larger images are refused as decompression bombs. */
  maxPixels: number;
}

export function imagePipelineOptions(config: Pick<Config, "imageMaxPixels" | "stageBudgets">): ImagePipelineOptions {
  return { maxPixels: config.imageMaxPixels, stageBudgets: stageBudgetsOf(config, "image") };
}

/** What the image pipeline's stages use of the services (the compiler checks each stage against it). */
type ImageStageDeps = Pick<
  ImageDeps,
  "sql" | "clock" | "metrics" | "progress" | "log" | "files" | "blobs" | "jobs" | "images" | "ocr" | "spaces"
>;

interface ImageWork extends FileWork<ImageStageDeps> {
  options: ImagePipelineOptions;
  /** The compliance check asked at upload, or null. */
  compliance: ComplianceRequest | null;
  original: Buffer;
  rendered: RenderedImage | null;
  ocr: OcrResult | null;
  embedding: ImageEmbedding | null;
  analysis: ImageAnalysis | null;
  /** What the detectors found, composed once for the description and the schema filling. */
  facts: Promise<ImageFacts> | null;
  /** The JPEG a vision endpoint is sent (endpoints take JPEG everywhere), made once when first needed. */
  jpeg: Promise<Buffer> | null;
}

async function readOriginal(ctx: ImageDeps, file: FileRow): Promise<Buffer> {
  const bytes = file.blob_key ? await readObject(ctx.blobs, file.blob_key) : null;
  if (!bytes) throw new PermanentJobError(`the original of image ${file.id} is missing from the store`);
  return bytes;
}

async function startWork(ctx: ImageDeps, options: ImagePipelineOptions, job: JobContext<unknown>, file: FileRow): Promise<ImageWork> {
  return { ctx, options, compliance: await complianceOf(ctx.sql, file.id), job, file, outcomes: {}, signal: job.signal, original: await readOriginal(ctx, file), rendered: null, ocr: null, embedding: null, analysis: null, facts: null, jpeg: null };
}

const rendered = (work: ImageWork): RenderedImage => {
  if (!work.rendered) throw new Error("the variants stage has not run");
  return work.rendered;
};

function variantData(image: RenderedImage, type: "large_1024" | "medium_750" | "tiny_64"): Buffer {
  return image.variants.find((v) => v.type === type)!.data;
}

const endpointJpeg = (work: ImageWork) => (work.jpeg ??= sharp(variantData(rendered(work), EMBEDDED_VARIANT)).jpeg({ quality: 85 }).toBuffer());

/** Renders and stores the four variants; the file row then points at them. */
async function generateVariants(work: ImageWork): Promise<void> {
  const { ctx, file } = work;
  await variantsStarted(ctx.sql, ctx.files, file.id);
  let image: RenderedImage;
  try {
    image = await renderImage(work.original, { maxPixels: work.options.maxPixels });
  } catch (err) {
    const why = err instanceof ImageDecodeError ? err.message : `variant generation failed: ${errorMessage(err)}`;
    await ctx.sql.transaction(async (tx) => {
      await variantsFailed(tx, file.id);
      await ctx.files.withTx(tx).imageNotRendered(file.id, why, err instanceof ImageDecodeError ? err.takenAt : null);
    });
    if (err instanceof ImageDecodeError && err.camera) await storeCameraFacts(ctx.sql, file.org_id, file.id, err.camera);
    // An image that does not decode never will: fail for good rather than retry.
    if (err instanceof ImageDecodeError) throw new PermanentJobError(why);
    throw err;
  }
  await storeVariants(ctx, file, image.variants);
  await ctx.sql.transaction(async (tx) => {
    await variantsRendered(tx, file.id, { count: image.variants.length, blurHash: image.blurHash });
    await ctx.files.withTx(tx).imageRendered(file.id, { width: image.width, height: image.height, format: image.format, takenAt: image.takenAt });
  });
  await storeCameraFacts(ctx.sql, file.org_id, file.id, image.camera);
  work.rendered = image;
}

const variantsStage: Stage<ImageWork> = {
  name: "variants",
  required: true,
  weight: 2,
  run: generateVariants,
  async onFailure(work, error) {
    if (work.file.description_status === "pending") await work.ctx.files.descriptionFailed(work.file.id, `not described: ${error}`);
  },
};

/** Zero-shot choice among the spec's content categories by the vision endpoint; null when it cannot say. */
async function classifyWithEndpoint(ctx: Pick<ImageDeps, "images">, jpeg: Buffer): Promise<ContentCategory | null> {
  const schema = { type: "object", properties: { category: { type: "string", enum: [...CONTENT_CATEGORIES] } }, required: ["category"], additionalProperties: false };
  const hint = "Pick the one category that best fits this image. general means none of the others fits.";
  const answer = (await ctx.images.endpoint!.extractJson(jpeg, "image/jpeg", schema, hint).catch(() => null)) as { category?: unknown } | null;
  return CONTENT_CATEGORIES.includes(answer?.category as ContentCategory) ? (answer!.category as ContentCategory) : null;
}

/** Zero-shot choice by the CLIP model's text tower; null without CLIP, its text tower or the image's embedding. */
async function classifyWithClip(ctx: Pick<ImageDeps, "images" | "log">, embedding: ImageEmbedding | null): Promise<ContentCategory | null> {
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

async function describeImage(work: ImageWork, facts: ImageFacts): Promise<void> {
  const { ctx, file } = work;
  const { captioner, endpoint } = ctx.images;
  const items: DescriptionItem[] = [];
  let endpointCategory: ContentCategory | null = null;
  if (endpoint) {
    const jpeg = await endpointJpeg(work);
    const answer = await endpoint.describe(jpeg, "image/jpeg");
    items.push({ model: answer.model, kind: "caption", text: answer.text });
    if (file.content_category === "general") endpointCategory = await classifyWithEndpoint(ctx, jpeg);
  } else if (captioner) {
    const { data, info } = await sharp(variantData(rendered(work), "medium_750")).removeAlpha().raw().toBuffer({ resolveWithObject: true });
    items.push({ model: `${captioner.modelName} (${captioner.folder})`, kind: "caption", text: await captioner.caption(data, info.width, info.height) });
  }
  items.push({ model: COMPOSED_MODEL, kind: "summary", text: composeDescription(facts) });

  // The user may have edited tags or the category while the models ran: merge into the row as it is now.
  const current = await ctx.files.byId(file.id);
  if (!current) return;
  const category =
    current.content_category !== "general" ? current.content_category : (endpointCategory ?? (await classifyWithClip(ctx, work.embedding)) ?? categorize(facts));
  await ctx.sql.transaction(async (tx) => {
    await replaceDescriptions(tx, ctx.clock, file.id, items);
    await ctx.files.withTx(tx).described(file.id, { text: items[0]!.text, tags: mergeTags(tagsOf(current), factTags(facts)), category });
  });
}

/** What the detectors and OCR found, with the dominant colours of the tiny variant. */
function factsOf(work: ImageWork): Promise<ImageFacts> {
  return (work.facts ??= (async () => {
    const image = rendered(work);
    const tiny = await sharp(variantData(image, "tiny_64")).removeAlpha().raw().toBuffer({ resolveWithObject: true });
    return {
      width: image.width,
      height: image.height,
      format: image.format,
      objects: work.analysis?.objects ?? [],
      faces: work.analysis?.faces ?? 0,
      people: work.analysis?.people ?? work.analysis?.faces ?? 0,
      ocrLines: work.ocr?.regions.map((r) => r.text) ?? [],
      colours: dominantColours(tiny.data, tiny.info.channels),
    };
  })());
}

/** Stages that read the detectors' findings cannot do without them. */
function requireObjects(work: ImageWork): void {
  const objects = work.outcomes.objects;
  if (objects?.status === "failed") throw new Error(`object and face detection failed: ${objects.error}`);
}

const wantsDescription = (file: FileRow) => file.description_status === "pending";

/**
 * OCR. Tesseract reads only where the text gate (text-gate.ts) finds rows of character-like
 * marks: on a photo without text it would spend hundreds of milliseconds finding nothing; such an
 * image is recorded as read with no text, naming the gate as the source. PP-OCR, where it reads
 * images, starts with its own trained detector, which is the gate; images under a compliance
 * check are always read (a three-letter watermark fails them, and the gate wants five marks).
 */
const ocrStage: Stage<ImageWork> = {
  name: "ocr",
  async run(work) {
    const { ctx, file } = work;
    const image = rendered(work);
    // A compliance check judges overlaid text of three letters, below what the gate looks for.
    const read = ctx.ocr.detectsTextFirst("image") || work.compliance !== null || (await textLikelihoodOf(image.pixels)).lines > 0;
    const result: OcrResult = read ? await ctx.ocr.recognize(image.readable, { input: "image" }) : { text: "", regions: [], width: image.width, height: image.height };
    const source = read ? ctx.ocr.modelFor("image") : TEXT_GATE_MODEL;
    const regions = result.regions.map((r) => ({ text: r.text, bounding_box: r.bounding_box, confidence: r.confidence }));
    await ctx.sql.transaction(async (tx) => {
      await saveExtraction(tx, ctx.clock, file.id, "text_regions", source, { regions });
      await ctx.files.withTx(tx).visibleTextFound(file.id, result.text || null);
    });
    work.ocr = result;
  },
};

const embeddingStage: Stage<ImageWork> = {
  name: "embedding",
  async run(work) {
    work.embedding = await storeImageEmbedding(work.ctx, work.file, rendered(work).pixels);
  },
};

/** The perceptual hashes, thumbnail and sharpness, and the near-duplicates they find (src/duplicates/). */
const duplicatesStage: Stage<ImageWork> = {
  name: "duplicates",
  async run(work) {
    const { ctx, file } = work;
    await recordFingerprint(ctx.sql, file, await fingerprint(rendered(work).pixels));
  },
};

const objectsStage: Stage<ImageWork> = {
  name: "objects",
  appliesTo: ({ file }) => wantsDescription(file) || file.custom_schema_id !== null || "no description or custom schema asked for",
  async run(work) {
    const { ctx, file } = work;
    // The faces stage reads the faces to recognize from this pass instead of detecting them again.
    const analysis = (work.analysis = await ctx.images.vision.analyze(rendered(work).pixels, { recognizeFaces: true }));
    // Kept for rules (people_count, a schema run later): the analysis itself lives only as long as this run.
    await storeFindings(ctx.sql, ctx.clock, file.id, { objects: analysis.objects, faces: analysis.faces, people: analysis.people, colours: (await factsOf(work)).colours });
  },
};

/** Faces large enough to recognize, each with its embedding, given the person of the most similar face (src/people/). */
const facesStage: Stage<ImageWork> = {
  name: "faces",
  // When the detectors already looked and found no face, there is none to recognize.
  appliesTo: (work) => work.analysis?.faces !== 0 || "no face detected",
  async run(work) {
    const { ctx, file } = work;
    // Without a description or schema the objects stage did not run, and the faces are detected here.
    const faces = work.analysis?.recognizedFaces ?? (await ctx.images.vision.faces(rendered(work).pixels));
    const joined = await storeFaces(ctx, file, faces);
    if (faces.length > joined) await enqueueClustering(ctx, file.org_id);
  },
};

const descriptionStage: Stage<ImageWork> = {
  name: "description",
  appliesTo: ({ file }) => wantsDescription(file) || (file.description_error ?? "auto_describe is false"),
  async run(work) {
    await work.ctx.files.descriptionStarted(work.file.id);
    requireObjects(work);
    await describeImage(work, await factsOf(work));
  },
  async onFailure(work, error) {
    await work.ctx.files.descriptionFailed(work.file.id, error);
  },
};

const customSchemaStage: Stage<ImageWork> = {
  name: "custom_schema",
  appliesTo: ({ file }) => file.custom_schema_id !== null || "no custom_schema_id",
  async run(work) {
    requireObjects(work);
    const { ctx, file } = work;
    const image = rendered(work);
    const facts = await factsOf(work);
    const schema = await getCustomSchema(ctx.sql, file.org_id, file.custom_schema_id!);
    const current = (await ctx.files.byId(file.id))!;
    const evidence = {
      description: current.upload_description,
      tags: tagsOf(current),
      objects: facts.objects,
      faces: facts.faces,
      ocrText: work.ocr?.text ?? "",
      ocrLines: facts.ocrLines,
      width: image.width,
      height: image.height,
      format: image.format,
      takenAt: current.content_created_at,
      dominantColours: facts.colours,
    };
    await fillAndStore(ctx, file, schema, evidence, () => endpointJpeg(work));
  },
};

const complianceStage: Stage<ImageWork> = {
  name: "compliance",
  appliesTo: ({ compliance }) => compliance !== null || "no compliance_type",
  async run(work) {
    const { ctx, file } = work;
    const image = rendered(work);
    const request = work.compliance!;
    const result = evaluateCompliance({
      standard: request.standard,
      type: request.type as ComplianceType,
      imageType: (request.imageType ?? "main") as ComplianceImageType,
      width: image.width,
      height: image.height,
      sizeBytes: file.size_bytes,
      format: image.format,
      ocrRegions: work.ocr?.regions ?? [],
      borderMeanRgb: image.border.mean,
      borderStdDev: image.border.stdDev,
    });
    await ctx.sql.transaction(async (tx) => {
      await saveExtraction(tx, ctx.clock, file.id, "mls_compliance", `mediabox compliance rules (${result.type}/${result.standard})`, result);
      await complianceChecked(tx, file.id, result.status);
      await ctx.files.withTx(tx).touched(file.id);
    });
  },
};

/** Every image goes through these, in this order. */
export const IMAGE_STAGES: Stage<ImageWork>[] = [variantsStage, ocrStage, embeddingStage, duplicatesStage, objectsStage, facesStage, descriptionStage, customSchemaStage, complianceStage];

export async function runImagePipeline(ctx: ImageDeps, options: ImagePipelineOptions, job: JobContext<FileJobPayload>, file: FileRow): Promise<PipelineReport> {
  const fileId = file.id;
  const work = await startWork(ctx, options, job, file);
  const outcomes = await runStages(work, IMAGE_STAGES);
  const final = await ctx.files.byId(fileId);
  const summary = {
    file_id: fileId,
    image_id: fileId,
    variant_status: final ? (await imageFactsOf(ctx.sql, fileId)).variantStatus : null,
    description_status: final?.description_status ?? null,
    description: final?.upload_description ?? null,
    tags: final ? tagsOf(final) : [],
    visible_text: final?.visible_text ?? null,
    stages: outcomes,
  };
  // A partly decoded file (a truncated JPEG) completes, and says it is damaged.
  const warnings = [work.rendered?.damaged ?? null, failedStages(outcomes)].filter(Boolean).join("; ") || null;
  return { summary: { ...summary, damaged: work.rendered?.damaged ?? null }, warnings };
}

/** Re-renders an image's variants only (POST /files/{id}/trigger-variants). */
export function imageVariantsQueue(ctx: ImageDeps): QueueDefinition<"image.variants"> {
  const options = imagePipelineOptions(ctx.config);
  return fileJob(ctx, {
    name: "image.variants",
    concurrency: 1,
    timeoutMs: 10 * 60 * 1000,
    async handle(file, job) {
      const work = await startWork(ctx, options, job, file);
      await runStages(work, [variantsStage]);
      return [{ file_id: file.id, variant_status: "completed", variant_count: rendered(work).variants.length }];
    },
  });
}
