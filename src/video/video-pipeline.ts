/**
 * The video pipeline: what happens to a video after upload, as a list of stages over one
 * VideoWork (run by processing/stage-runner.ts). The probe comes first and is required: a file
 * ffprobe cannot read is no video to analyse, and the reason is kept (`analysis_status: failed`).
 * Keyframes are sampled in one ffmpeg run and the poster chosen among them; the poster becomes
 * the file's image variants. OCR, embeddings and detectors then look at the keyframes, and the
 * description says what was seen over time. A video too long or too large for the configured
 * limits is probed and kept, not analysed. The two AI-description credits reserved at upload
 * are given back when no description is made.
 */
import type { Config } from "../config.ts";
import { analysisEnded, storeVideoFacts, videoAnalysisOf } from "./video-facts.ts";
import { imageEmbedded, variantsRendered } from "../images/image-facts.ts";
import sharp from "sharp";
import type { VideoDeps } from "./deps.ts";
import { errorMessage } from "../errors.ts";
import { saveExtraction } from "../extractions/extractions.ts";
import { tagsOf, type FileRow } from "../files/file.ts";
import { categorize, dominantColours, factTags, mergeTags } from "../images/describe.ts";
import { storeVariants } from "../images/variant-store.ts";
import { renderImage } from "../images/variants.ts";
import type { FileJobPayload } from "../jobs/catalogue.ts";
import { PermanentJobError, type JobContext } from "../jobs/runner.ts";
import { replaceDescriptions, type DescriptionItem } from "../processing/descriptions.ts";
import type { PipelineReport } from "../kinds/media-kind.ts";
import { failedStages, runStages, stageBudgetsOf, type FileWork, type PipelineOptions, type Stage } from "../processing/stage-runner.ts";
import { objectOnDisk, type ObjectOnDisk } from "../storage/object-on-disk.ts";
import { releaseUsage } from "../usage/usage.ts";
import { VideoToolError, type VideoTools } from "./ffmpeg-tools.ts";
import { keyframesAndPoster, type KeyFrame } from "./frames.ts";
import { frameAnalysed, frameTextRead, keyframeItemId, removeKeyframes, storeKeyframes, type StoredKeyframe } from "./keyframe-store.ts";
import { probeVideo, type VideoProbe } from "./probe.ts";
import { cameraFactsFromVideoTags } from "./camera-tags.ts";
import { storeCameraFacts } from "../camera/camera-facts.ts";
import { frameSignature, readingPlan } from "./frame-likeness.ts";
import type { OcrResult } from "../ocr/ocr.ts";
import { composeVideoDescription, dedupeLines, seenThings, VIDEO_COMPOSED_MODEL, videoFacts, type FrameFindings, type VideoShape } from "./video-summary.ts";
import type { WritableSpace } from "../vectors/vector-spaces.ts";

/** Detectors look at this many keyframes at most, spread over the video (each costs ~250 ms). */
const ANALYSED_FRAMES = 12;

/** What the video pipeline takes from the settings, read once when the kind is built (videoPipelineOptions). */
export interface VideoPipelineOptions extends PipelineOptions {
  /** MEDIABOX_VIDEO_MAX_DURATION_SECONDS: longer videos are probed and kept, not analysed. */
  maxDurationSeconds: number;
  /** MEDIABOX_VIDEO_MAX_MB: larger videos are probed and kept, not analysed. */
  maxMb: number;
  /** MEDIABOX_VIDEO_MAX_KEYFRAMES. */
  maxKeyframes: number;
  /** The keyframes stage's budget: its ffmpeg runs each have MEDIABOX_VIDEO_TIMEOUT_SECONDS; sampling and the poster take two. */
  keyframesBudgetMs: number;
  /** MEDIABOX_IMAGE_MAX_PIXELS, for the poster's variants. */
  maxPixels: number;
}

export function videoPipelineOptions(
  config: Pick<Config, "videoMaxDurationSeconds" | "videoMaxMb" | "videoMaxKeyframes" | "videoTimeoutSeconds" | "imageMaxPixels" | "stageBudgets">,
): VideoPipelineOptions {
  return {
    maxDurationSeconds: config.videoMaxDurationSeconds,
    maxMb: config.videoMaxMb,
    maxKeyframes: config.videoMaxKeyframes,
    keyframesBudgetMs: 2 * config.videoTimeoutSeconds * 1000 + 60_000,
    maxPixels: config.imageMaxPixels,
    stageBudgets: stageBudgetsOf(config, "video"),
  };
}

/**
 * What the video pipeline's stages use of the services (the compiler checks each stage against
 * it): ffmpeg, the image models and OCR for the frames, the stores, the files row and its kind's
 * tables, the scratch space for the original.
 */
type VideoStageDeps = Pick<
  VideoDeps,
  "clock" | "metrics" | "progress" | "files" | "blobs" | "dataDir" | "video" | "images" | "ocr" | "sql" | "spaces"
>;

interface VideoWork extends FileWork<VideoStageDeps> {
  options: VideoPipelineOptions;
  source: ObjectOnDisk | null;
  probe: VideoProbe | null;
  /** Why the video is not analysed beyond its probe (a configured limit), or null. */
  overLimit: string | null;
  frames: KeyFrame[];
  stored: StoredKeyframe[];
  findings: FrameFindings[];
  /** Keyframes OCR actually read (blank frames and frames like the last one read are not). */
  framesRead: number;
}

/** What ffmpeg says about a file that will say the same next time: failing again would waste the retries. */
const FINAL_FAILURES = new Set(["missing-binary", "timeout", "memory", "not-video", "corrupt", "output-too-large"]);

function asJobError(err: unknown): unknown {
  return err instanceof VideoToolError && FINAL_FAILURES.has(err.reason) ? new PermanentJobError(err.message) : err;
}

const probed = (work: VideoWork): VideoProbe => {
  if (!work.probe) throw new Error("the probe stage has not run");
  return work.probe;
};

async function tools(work: VideoWork): Promise<VideoTools> {
  try {
    return await work.ctx.video.get();
  } catch (err) {
    throw asJobError(err);
  }
}

const MB = 1024 * 1024;

const probeStage: Stage<VideoWork> = {
  name: "probe",
  required: true,
  async run(work) {
    const { ctx, file } = work;
    if (!file.blob_key) throw new PermanentJobError(`the original of video ${file.id} is missing from the store`);
    const ffmpeg = await tools(work);
    work.source = await objectOnDisk(ctx.blobs, file.blob_key, ctx.dataDir.scratch);
    if (!work.source) throw new PermanentJobError(`the original of video ${file.id} is missing from the store`);
    let probe: VideoProbe;
    try {
      probe = await probeVideo(ffmpeg, work.source.path, { signal: work.signal });
    } catch (err) {
      throw asJobError(err);
    }
    work.probe = probe;
    const camera = cameraFactsFromVideoTags(probe.tags);
    await ctx.sql.transaction(async (tx) => {
      await ctx.files.withTx(tx).videoProbed(file.id, {
        width: probe.width,
        height: probe.height,
        // A phone's creationdate is when it was filmed; creation_time is when the file was written.
        createdAt: camera.takenAt ?? probe.createdAt,
      });
      await storeVideoFacts(tx, file.id, {
        durationSeconds: probe.durationSeconds,
        frameRate: probe.frameRate,
        codec: probe.codec,
        container: probe.container,
        hasAudio: probe.hasAudio,
        bitRate: probe.bitRate,
      });
    });
    await storeCameraFacts(ctx.sql, file.org_id, file.id, camera);
    const { maxDurationSeconds, maxMb } = work.options;
    if (probe.durationSeconds !== null && probe.durationSeconds > maxDurationSeconds) {
      work.overLimit = `the video is ${Math.round(probe.durationSeconds)} s long; videos over ${maxDurationSeconds} s are stored but not analysed (MEDIABOX_VIDEO_MAX_DURATION_SECONDS)`;
    } else if (file.size_bytes > maxMb * MB) {
      work.overLimit = `the video is ${Math.round(file.size_bytes / MB)} MB; videos over ${maxMb} MB are stored but not analysed (MEDIABOX_VIDEO_MAX_MB)`;
    }
  },
};

const withinLimits = (work: VideoWork) => work.overLimit ?? true;

/** Keyframes sampled at scene cuts (and through long shots), stored with their times; the poster chosen among them. */
const keyframesStage: Stage<VideoWork> = {
  name: "keyframes",
  required: true,
  weight: 3,
  budgetMs: (work) => work.options.keyframesBudgetMs,
  appliesTo: withinLimits,
  async run(work) {
    const { ctx, file } = work;
    const probe = probed(work);
    let result: Awaited<ReturnType<typeof keyframesAndPoster>>;
    try {
      result = await keyframesAndPoster(await tools(work), work.source!.path, probe, { maxFrames: work.options.maxKeyframes, signal: work.signal });
    } catch (err) {
      throw asJobError(err);
    }
    // A retry samples again: what an earlier attempt stored goes first.
    await removeKeyframes(ctx, file.id);
    work.frames = result.frames;
    work.stored = await storeKeyframes(ctx, file, result.frames, result.poster?.index ?? null);
    work.findings = result.frames.map((frame) => ({ timeSeconds: frame.timeSeconds, lines: null, objects: null, faces: null }));
    // Past this point the work needs the frames only.
    work.source?.release();
    const poster = result.poster ?? { ...result.frames[0]!, index: 0 };
    const image = await renderImage(poster.jpeg, { maxPixels: work.options.maxPixels });
    await storeVariants(ctx, file, image.variants);
    await ctx.sql.transaction(async (tx) => {
      await variantsRendered(tx, file.id, { count: image.variants.length, blurHash: image.blurHash });
      await ctx.files.withTx(tx).touched(file.id);
    });
  },
};

/** A blank frame's reading: nothing. */
const NOTHING_READ: OcrResult = { text: "", regions: [], width: 0, height: 0 };

const ocrStage: Stage<VideoWork> = {
  name: "ocr",
  appliesTo: withinLimits,
  async run(work, progress) {
    const { ctx, file } = work;
    const regions: { text: string; bounding_box: unknown; confidence: number; time_seconds: number }[] = [];
    const plan = readingPlan(await Promise.all(work.frames.map((frame) => frameSignature(frame.jpeg))));
    const results: OcrResult[] = [];
    for (const [index, frame] of work.frames.entries()) {
      // A stopping server or a cancelled job ends the loop between frames, not after all of them.
      work.signal.throwIfAborted();
      const step = plan[index]!;
      const result = step.kind === "blank" ? NOTHING_READ : step.kind === "same-as" ? results[step.frame]! : await ctx.ocr.recognize(frame.jpeg, { input: "video-frame" });
      if (step.kind === "read") work.framesRead += 1;
      results.push(result);
      const lines = result.regions.map((r) => r.text);
      work.findings[index]!.lines = lines;
      await frameTextRead(ctx, file.id, index, result.text || null);
      for (const r of result.regions) regions.push({ text: r.text, bounding_box: r.bounding_box, confidence: r.confidence, time_seconds: frame.timeSeconds });
      progress((index + 1) / work.frames.length, { done: index + 1, total: work.frames.length, unit: "frame" });
    }
    const text = dedupeLines(work.findings).join("\n");
    await ctx.sql.transaction(async (tx) => {
      await saveExtraction(tx, ctx.clock, file.id, "text_regions", `${ctx.ocr.modelFor("video-frame")} (video keyframes)`, { regions });
      await ctx.files.withTx(tx).visibleTextFound(file.id, text || null);
    });
  },
};

/** The poster's vector under the file's id and each keyframe's under its own, in the image space. */
const embeddingStage: Stage<VideoWork> = {
  name: "embedding",
  appliesTo: withinLimits,
  async run(work, progress) {
    const { ctx, file } = work;
    const vision = ctx.images.vision;
    const vectors: { item: string; vector: Float32Array; model: string }[] = [];
    for (const [index, frame] of work.frames.entries()) {
      work.signal.throwIfAborted();
      const embedding = await vision.embed(frame.jpeg);
      vectors.push({ item: keyframeItemId(file.id, index), vector: embedding.vector, model: embedding.model });
      if (work.stored[index]?.isPoster) vectors.push({ item: file.id, vector: embedding.vector, model: embedding.model });
      progress((index + 1) / work.frames.length, { done: index + 1, total: work.frames.length, unit: "frame" });
    }
    if (!vectors.some((v) => v.item === file.id) && vectors[0]) vectors.push({ ...vectors[0], item: file.id });
    const spaces = new Map<string, WritableSpace>();
    for (const v of vectors) if (!spaces.has(v.model)) spaces.set(v.model, await ctx.spaces.open("image", v.model, v.vector.length));
    // The vectors and the model they are recorded under commit together.
    await ctx.sql.transaction(async (tx) => {
      for (const v of vectors) await spaces.get(v.model)!.upsert(v.item, file.org_id, v.vector, tx);
      await imageEmbedded(tx, file.id, vectors[0]!.model);
    });
  },
};

const wantsDescription = (file: FileRow) => file.description_status === "pending";

/** Indexes of up to `count` frames spread evenly over the list, the poster among them. */
function spreadIndexes(total: number, count: number, poster: number | null): number[] {
  const picked = new Set<number>();
  if (poster !== null) picked.add(poster);
  for (let i = 0; picked.size < Math.min(total, count) && i < count; i++) picked.add(Math.round((i * (total - 1)) / Math.max(1, count - 1)));
  return [...picked].sort((a, b) => a - b);
}

const objectsStage: Stage<VideoWork> = {
  name: "objects",
  appliesTo: (work) => {
    if (work.overLimit) return work.overLimit;
    return wantsDescription(work.file) || "no description asked for";
  },
  async run(work, progress) {
    const { ctx, file } = work;
    const poster = work.stored.find((f) => f.isPoster)?.index ?? null;
    const indexes = spreadIndexes(work.frames.length, ANALYSED_FRAMES, poster);
    for (const [n, index] of indexes.entries()) {
      work.signal.throwIfAborted();
      // One pass per frame, as before people were counted in tiles: a tiled second look on each
      // of up to 12 keyframes would multiply this stage's time (group photos are the case for it).
      const analysis = await ctx.images.vision.analyze(work.frames[index]!.jpeg, { tiles: false });
      const objects = analysis.objects.map((o) => ({ label: o.label, score: o.score }));
      work.findings[index]!.objects = objects;
      work.findings[index]!.faces = analysis.faces;
      await frameAnalysed(ctx, file.id, index, objects, analysis.faces);
      progress((n + 1) / indexes.length);
    }
  },
};

async function posterColours(work: VideoWork): Promise<string[]> {
  const poster = work.frames[work.stored.find((f) => f.isPoster)?.index ?? 0];
  if (!poster) return [];
  const tiny = await sharp(poster.jpeg).resize(64, 64, { fit: "inside" }).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  return dominantColours(tiny.data, tiny.info.channels);
}

const descriptionStage: Stage<VideoWork> = {
  name: "description",
  appliesTo: (work) => {
    if (!wantsDescription(work.file)) return work.file.description_error ?? "auto_describe is false";
    return work.overLimit ?? true;
  },
  async run(work) {
    const { ctx, file } = work;
    await ctx.files.descriptionStarted(file.id);
    const objects = work.outcomes.objects;
    if (objects?.status === "failed") throw new Error(`object and face detection failed: ${objects.error}`);
    const probe = probed(work);
    const shape: VideoShape = { durationSeconds: probe.durationSeconds, width: probe.width, height: probe.height, codec: probe.codec, hasAudio: probe.hasAudio };
    const things = seenThings(work.findings);
    const lines = dedupeLines(work.findings);
    const colours = await posterColours(work);
    const items: DescriptionItem[] = [];
    const endpoint = ctx.images.endpoint;
    if (endpoint) {
      // The endpoint sees the poster; what happens over time is in the composed summary beside it.
      const poster = work.frames[work.stored.find((f) => f.isPoster)?.index ?? 0]!;
      const answer = await endpoint.describe(poster.jpeg, "image/jpeg");
      items.push({ model: answer.model, kind: "caption", text: answer.text });
    }
    items.push({ model: VIDEO_COMPOSED_MODEL, kind: "summary", text: composeVideoDescription(shape, things, lines, colours) });
    const facts = videoFacts(shape, things, lines, colours, work.findings);
    // The user may have edited tags or the category while the models ran: merge into the row as it is now.
    const current = await ctx.files.byId(file.id);
    if (!current) return;
    const category = current.content_category !== "general" ? current.content_category : categorize(facts);
    await ctx.sql.transaction(async (tx) => {
      await replaceDescriptions(tx, ctx.clock, file.id, items);
      await ctx.files.withTx(tx).described(file.id, { text: items[0]!.text, tags: mergeTags(tagsOf(current), factTags(facts)), category });
    });
  },
  async onFailure(work, error) {
    await work.ctx.files.descriptionFailed(work.file.id, error);
  },
};

/** Every video goes through these, in this order. */
export const VIDEO_STAGES: Stage<VideoWork>[] = [probeStage, keyframesStage, ocrStage, embeddingStage, objectsStage, descriptionStage];

/** What analysis_error says of a file cut short: how much it holds of what its header declares. */
function truncationNote(probe: VideoProbe): string {
  const { durationSeconds: present, declaredDurationSeconds: declared } = probe;
  const seconds = (n: number) => `${n < 10 ? n.toFixed(1) : Math.round(n)} s`;
  const how = present !== null && declared !== null && present < declared ? `the file holds ${seconds(present)} of the ${seconds(declared)} its header declares` : "the file holds less than its header describes";
  return `truncated: ${how}; analysed as far as its frames go`;
}

/** The reserved description credits go back when no description was made. */
async function settleCredits(ctx: Pick<VideoDeps, "sql" | "files">, fileId: string): Promise<void> {
  const row = await ctx.files.byId(fileId);
  if (!row || row.reserved_credits <= 0 || row.description_status === "completed" || row.description_status === "pending") return;
  await ctx.sql.transaction(async (tx) => {
    await releaseUsage(tx, row.org_id, "ai_descriptions", row.reserved_credits, Date.parse(row.created_at));
    await ctx.files.withTx(tx).creditsReleased(fileId);
  });
}

export async function runVideoPipeline(ctx: VideoDeps, options: VideoPipelineOptions, job: JobContext<FileJobPayload>, file: FileRow): Promise<PipelineReport> {
  const work: VideoWork = { ctx, options, job, file, outcomes: {}, signal: job.signal, source: null, probe: null, overLimit: null, frames: [], stored: [], findings: [], framesRead: 0 };
  try {
    await runStages(work, VIDEO_STAGES);
  } catch (err) {
    const final = job.attempt >= job.maxAttempts || err instanceof PermanentJobError;
    if (final) {
      await analysisEnded(ctx.sql, ctx.files, file.id, "failed", errorMessage(err));
      if ((await ctx.files.byId(file.id))?.description_status === "pending") await ctx.files.descriptionFailed(file.id, `not described: ${errorMessage(err)}`);
      await settleCredits(ctx, file.id);
    }
    throw err;
  } finally {
    work.source?.release();
  }
  const failed = failedStages(work.outcomes);
  const truncated = work.probe?.truncated ? truncationNote(work.probe) : null;
  const warnings = [truncated, failed].filter(Boolean).join("; ") || null;
  if (work.overLimit) await analysisEnded(ctx.sql, ctx.files, file.id, "skipped", work.overLimit);
  else await analysisEnded(ctx.sql, ctx.files, file.id, failed ? "failed" : "completed", warnings);
  if (work.overLimit && (await ctx.files.byId(file.id))?.description_status === "pending") await ctx.files.descriptionSkipped(file.id, work.overLimit);
  await settleCredits(ctx, file.id);
  const final = await ctx.files.byId(file.id);
  return {
    summary: {
      file_id: file.id,
      duration_seconds: work.probe?.durationSeconds ?? null,
      resolution: final?.width && final.height ? `${final.width}x${final.height}` : null,
      keyframe_count: work.frames.length,
      ocr_frames_read: work.framesRead,
      analysis_status: final ? (await videoAnalysisOf(ctx.sql, file.id)).status : null,
      description_status: final?.description_status ?? null,
      visible_text: final?.visible_text ?? null,
      stages: work.outcomes,
    },
    warnings: [work.overLimit, warnings].filter(Boolean).join("; ") || null,
  };
}
