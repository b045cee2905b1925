/**
 * Still frames of a video: the keyframes that stand for its shots, and the poster among them.
 *
 * sampleKeyframes decodes the video once, in one ffmpeg run that picks frames as they go by:
 * the first frame, the first frame after each scene cut, and a frame whenever the video has gone
 * on without one for a while (so a single long shot is still sampled). Only those are scaled and
 * encoded, as JPEG, on ffmpeg's stdout; their times and scene scores come from the metadata
 * filter on stderr. No two kept frames are closer than the minimum gap and there are never more
 * than the cap; ffmpeg's picks are bounded too, so memory is bounded whatever the video's length.
 *
 * choosePoster shrinks each keyframe to grey with sharp, measures it (brightness, contrast,
 * entropy, Laplacian sharpness) and takes an early frame among those that are neither black,
 * blank nor blurry.
 */
import { resolve } from "node:path";
import sharp from "sharp";
import { tailText, VideoToolError, type VideoTools } from "./ffmpeg-tools.ts";
import { JpegSplitter, JpegStreamError } from "./jpeg-stream.ts";
import type { VideoProbe } from "./probe.ts";

export interface KeyFrame {
  /** Seconds from the start of the video. */
  timeSeconds: number;
  jpeg: Buffer;
  width: number;
  height: number;
}

export interface KeyframeOptions {
  /** At most this many frames. Default 48. */
  maxFrames?: number;
  /** No two frames closer than this. Default 2 s. On a long video the gap grows to duration / maxFrames, so frames spread over all of it. */
  minGapSeconds?: number;
  /** Frames are scaled down (never up) so their longer side is at most this. Default 1024. */
  maxSide?: number;
  /** ffmpeg's scene score (0-1) above which a frame starts a new shot. Default 0.3. */
  sceneThreshold?: number;
  /** JPEG quality as ffmpeg's -q:v (2 best, 31 worst). Default 3. */
  jpegQuality?: number;
  timeoutMs?: number;
  signal?: AbortSignal;
  /** Told of each JPEG as it arrives, while ffmpeg goes on decoding (keyframesAndPoster measures them there); a few may not be kept. */
  onFrame?: (jpeg: Buffer, index: number) => void;
}

/**
 * ffmpeg 4.1 computes the scene score on RGB only, so every frame compared is converted at full
 * size. Comparing one frame every quarter second or so (every 6th at 25 fps, every 7th at 30)
 * instead of each one costs a sixth as much and still places a cut within a quarter second.
 * (0.23 rather than 0.25: frame times are not exact binary fractions.)
 */
const SCENE_STEP_SECONDS = 0.23;

/** Output size: the display size (pixel aspect applied, unless implausible), fitted in maxSide, even. */
export function frameSize(probe: Pick<VideoProbe, "width" | "height" | "rotation" | "pixelAspect">, maxSide: number): { width: number; height: number } {
  // A pixel aspect outside 1:2..2:1 is a broken header, not a real anamorphic format.
  const par = probe.pixelAspect >= 0.5 && probe.pixelAspect <= 2 ? probe.pixelAspect : 1;
  const turned = probe.rotation === 90 || probe.rotation === 270;
  const displayWidth = turned ? probe.width : probe.width * par;
  const displayHeight = turned ? probe.height * par : probe.height;
  const scale = Math.min(1, maxSide / Math.max(displayWidth, displayHeight));
  const even = (n: number) => Math.max(2, 2 * Math.round((n * scale) / 2));
  return { width: even(displayWidth), height: even(displayHeight) };
}

export interface Selection {
  /** No two kept frames closer than this: the minimum gap, or duration / maxFrames on a long video. */
  gap: number;
  /** A shot without cuts gets a frame every `fill` seconds. */
  fill: number;
  /** Frames compared for scene cuts are this far apart. */
  step: number;
  sceneThreshold: number;
}

export function selectionFor(durationSeconds: number | null, options: { maxFrames: number; minGapSeconds: number; sceneThreshold: number }): Selection {
  const duration = durationSeconds ?? 0;
  const gap = Math.max(options.minGapSeconds, duration / options.maxFrames);
  // Twice the gap, so cuts have room between fills, but at least about four frames in a short clip.
  const fill = Math.max(gap, Math.min(2 * gap, duration / 4 || 2 * gap));
  return { gap, fill, step: Math.min(SCENE_STEP_SECONDS, gap / 2), sceneThreshold: options.sceneThreshold };
}

/**
 * The two select filters. The first passes a frame every `step` seconds. The second picks the
 * first frame; a cut (scene score over the threshold) at least `gap` after the last picked cut
 * (register 1 holds its time); else a fill, `fill` after the last picked frame of any kind.
 * Cuts are measured from cuts only, so a fill never hides the cut that follows it; keepSpaced
 * then drops such a fill. The first frame counts as a fill: a video that opens on black or a
 * title card and cuts a second later is represented by the shot after the cut.
 * (select keeps a frame whose value is not 0; st() returns what it stores.)
 */
export function selectionFilters(selection: Selection): string[] {
  const { gap, fill, step, sceneThreshold } = selection;
  return [
    `select='isnan(prev_selected_t)+gte(t-prev_selected_t,${step})'`,
    `select='if(isnan(prev_selected_t),st(1,-1e9)*0+1,if(gt(scene,${sceneThreshold})*gte(t-ld(1),${gap}),st(1,t)*0+1,gte(t-prev_selected_t,${fill})))'`,
  ];
}

export interface Candidate {
  timeSeconds: number;
  sceneScore: number;
}

/**
 * Which of ffmpeg's picks to keep (their indices): it re-labels each as cut or fill the way the
 * select expression did, then keeps frames at least `gap` apart, a cut taking the place of a
 * fill just before it. Times are as ffmpeg prints them (6 significant digits), hence the
 * millisecond of slack.
 */
export function keepSpaced(candidates: Candidate[], selection: Selection): number[] {
  const kept: { index: number; time: number; cut: boolean }[] = [];
  let lastCut = Number.NEGATIVE_INFINITY;
  candidates.forEach((candidate, index) => {
    const time = candidate.timeSeconds;
    const cut = index > 0 && candidate.sceneScore > selection.sceneThreshold && time - lastCut >= selection.gap - 1e-3;
    if (cut) lastCut = time;
    const last = kept.at(-1);
    if (!last || time - last.time >= selection.gap - 1e-3) kept.push({ index, time, cut });
    else if (cut && !last.cut) kept[kept.length - 1] = { index, time, cut };
  });
  return kept.map((frame) => frame.index);
}

/** "[Parsed_metadata_3 @ 0x..] frame:2    pts:30720   pts_time:2.4" and, on the next line, "... lavfi.scene_score=0.024597". */
const PICKED = /Parsed_metadata_\d+.*\bframe:\s*\d+.*\bpts_time:\s*(\S+)/;
const SCORE = /Parsed_metadata_\d+.*\blavfi\.scene_score=([\d.]+)/;

/** Samples keyframes of the video at `path` (already probed). Throws VideoToolError. */
export async function sampleKeyframes(tools: VideoTools, path: string, probe: VideoProbe, options: KeyframeOptions = {}): Promise<KeyFrame[]> {
  const maxFrames = Math.max(1, Math.floor(options.maxFrames ?? 48));
  const selection = selectionFor(probe.durationSeconds, {
    maxFrames,
    minGapSeconds: Math.max(0, options.minGapSeconds ?? 2),
    sceneThreshold: options.sceneThreshold ?? 0.3,
  });
  // Fills that a cut displaces are the only picks beyond the gap's own bound: at most one per
  // fill interval, and fills are at least twice the gap apart; this bounds ffmpeg's output
  // (and so memory) even when the duration is unknown.
  const maxPicks = 2 * maxFrames + 2;
  const size = frameSize(probe, options.maxSide ?? 1024);
  const filters = [
    ...selectionFilters(selection),
    "metadata=mode=print:key=lavfi.scene_score",
    `scale=${size.width}:${size.height}`,
    "setsar=1",
    "format=yuvj420p",
  ];
  const args = [
    "-v", "info",
    "-i", `file:${resolve(path)}`,
    "-map", `0:${probe.streamIndex}`, "-an", "-sn", "-dn",
    "-vf", filters.join(","),
    "-vsync", "0", "-frames:v", String(maxPicks),
    "-f", "image2pipe", "-c:v", "mjpeg", "-q:v", String(options.jpegQuality ?? 3),
    "pipe:1",
  ];

  const candidates: Candidate[] = [];
  const images: Buffer[] = [];
  const splitter = new JpegSplitter();
  let result;
  try {
    result = await tools.run("ffmpeg", args, {
      timeoutMs: options.timeoutMs,
      signal: options.signal,
      // Generous for JPEGs of at most maxSide², small enough to stop a runaway.
      maxStdoutBytes: maxPicks * 4 * 1024 * 1024,
      onStdout: (chunk) => {
        for (const image of splitter.push(chunk)) {
          images.push(image);
          options.onFrame?.(image, images.length - 1);
        }
      },
      onStderrLine: (line) => {
        const picked = PICKED.exec(line);
        if (picked) candidates.push({ timeSeconds: Number(picked[1]), sceneScore: 0 });
        const score = SCORE.exec(line);
        if (score && candidates.length) candidates[candidates.length - 1]!.sceneScore = Number(score[1]);
      },
    });
  } catch (err) {
    if (err instanceof JpegStreamError) throw new VideoToolError("failed", `ffmpeg wrote no readable JPEG stream: ${err.message}`);
    throw err;
  }

  if (images.length === 0) {
    // A decoder that gave up part-way still leaves the frames before the damage; none at all means nothing decodes.
    const reason = result.exitCode === 0 ? "no frame could be decoded" : tailText(result.stderrTail);
    throw new VideoToolError("corrupt", `truncated or corrupt: ${reason}`);
  }
  // A frame picked but not encoded (the run ended in between) has no image: only the pairs count.
  const picks = candidates.slice(0, images.length);
  if (picks.length === 0) throw new VideoToolError("failed", `ffmpeg printed no frame times: ${tailText(result.stderrTail)}`);
  return keepSpaced(picks, selection)
    .slice(0, maxFrames)
    .map((index) => ({ timeSeconds: picks[index]!.timeSeconds, jpeg: images[index]!, ...size }));
}

export interface FrameQuality {
  /** Mean grey level, 0-255. */
  brightness: number;
  /** Standard deviation of the grey levels. */
  contrast: number;
  /** Shannon entropy of the grey histogram, in bits (0-8). */
  entropy: number;
  /** Variance of the Laplacian: high for crisp edges, low for blur. */
  sharpness: number;
  verdict: "good" | "black" | "blank" | "blurry";
}

export interface PosterChoice extends KeyFrame {
  /** Index of the chosen frame in the input. */
  index: number;
  /** What was measured, for every input frame (same order). */
  qualities: FrameQuality[];
}

/** Frames are judged at this size (never enlarged): the same for all, so their sharpness compares, and small, so it is quick. */
const JUDGE_SIDE = 256;

/**
 * Grey-level statistics and the variance of the Laplacian (4-neighbour kernel) of a small grey
 * image, in one pass. sharp decodes and shrinks the frame; the statistics are computed here
 * because sharp's stats() and convolve() cost ~10 ms of pipeline set-up each on an image this
 * small, several times the arithmetic.
 */
export function greyStats(grey: Uint8Array, width: number, height: number): FrameMeasure {
  const histogram = new Float64Array(256);
  let sum = 0;
  let squares = 0;
  for (const v of grey) {
    histogram[v]! += 1;
    sum += v;
    squares += v * v;
  }
  const n = grey.length;
  const mean = sum / n;
  let entropy = 0;
  for (const count of histogram) if (count > 0) entropy -= (count / n) * Math.log2(count / n);

  let lapSum = 0;
  let lapSquares = 0;
  let inner = 0;
  for (let y = 1; y < height - 1; y++) {
    for (let x = 1; x < width - 1; x++) {
      const i = y * width + x;
      const lap = grey[i - width]! + grey[i + width]! + grey[i - 1]! + grey[i + 1]! - 4 * grey[i]!;
      lapSum += lap;
      lapSquares += lap * lap;
      inner++;
    }
  }
  const lapMean = inner ? lapSum / inner : 0;
  return {
    brightness: mean,
    contrast: Math.sqrt(Math.max(0, squares / n - mean * mean)),
    entropy,
    sharpness: inner ? lapSquares / inner - lapMean * lapMean : 0,
  };
}

export type FrameMeasure = Omit<FrameQuality, "verdict">;

/** A frame's measurements, for choosePoster. */
export async function measureFrame(jpeg: Buffer): Promise<FrameMeasure> {
  const { data, info } = await sharp(jpeg).resize(JUDGE_SIDE, JUDGE_SIDE, { fit: "inside", withoutEnlargement: true }).greyscale().raw().toBuffer({ resolveWithObject: true });
  return greyStats(data, info.width, info.height);
}

/** A frame this dark is black (a fade, a lens cap), unless it still shows detail. */
const BLACK_MEAN = 24;
/** Grey levels this uniform are a blank card, whatever its colour. */
export const BLANK_STDEV = 10;
/** Blurry: less than this share of the sharpest frame's edge energy. */
const BLURRY_SHARE = 0.25;
/** Among good frames the earliest scoring at least this share of the best is taken. */
const GOOD_ENOUGH_SHARE = 0.6;

function verdictOf(q: FrameMeasure, sharpest: number): FrameQuality["verdict"] {
  if (q.brightness < BLACK_MEAN && q.contrast < 2 * BLANK_STDEV) return "black";
  if (q.contrast < BLANK_STDEV) return "blank";
  if (q.sharpness < BLURRY_SHARE * sharpest) return "blurry";
  return "good";
}

const score = (q: FrameMeasure) => q.entropy * Math.sqrt(q.sharpness);

/**
 * The poster: the earliest good frame (not black, blank or blurry) that scores at least 60% of
 * the best good frame (entropy × √sharpness), so an early frame wins over a marginally better late
 * one but not over a clearly better one. When no frame is good, the best-scoring one. Null for
 * no frames. `measured` (measureFrame of each frame, same order) saves measuring them again.
 */
export async function choosePoster(frames: KeyFrame[], measured?: FrameMeasure[]): Promise<PosterChoice | null> {
  if (frames.length === 0) return null;
  measured ??= await Promise.all(frames.map((frame) => measureFrame(frame.jpeg)));
  if (measured.length !== frames.length) throw new Error(`choosePoster: ${measured.length} measurements for ${frames.length} frames`);
  // Blank frames have no edges to compare with; the sharpest among the others sets the bar.
  const sharpest = Math.max(0, ...measured.filter((q) => q.contrast >= BLANK_STDEV).map((q) => q.sharpness));
  const qualities: FrameQuality[] = measured.map((q) => ({ ...q, verdict: verdictOf(q, sharpest) }));
  const good = qualities.map((q, i) => ({ q, i })).filter(({ q }) => q.verdict === "good");
  let index: number;
  if (good.length > 0) {
    const best = Math.max(...good.map(({ q }) => score(q)));
    index = good.find(({ q }) => score(q) >= GOOD_ENOUGH_SHARE * best)!.i;
  } else {
    index = qualities.reduce((bestIndex, q, i) => (score(q) > score(qualities[bestIndex]!) ? i : bestIndex), 0);
  }
  return { ...frames[index]!, index, qualities };
}

/**
 * sampleKeyframes and choosePoster together, each frame measured as soon as ffmpeg delivers it:
 * on a short clip that hides the measuring behind the decoding of the rest.
 */
export async function keyframesAndPoster(
  tools: VideoTools,
  path: string,
  probe: VideoProbe,
  options: Omit<KeyframeOptions, "onFrame"> = {},
): Promise<{ frames: KeyFrame[]; poster: PosterChoice | null }> {
  // Every frame ffmpeg delivers is measured on arrival; the ones kept are looked up by their buffer.
  const measures = new Map<Buffer, Promise<FrameMeasure>>();
  let frames: KeyFrame[];
  try {
    frames = await sampleKeyframes(tools, path, probe, { ...options, onFrame: (jpeg) => measures.set(jpeg, measureFrame(jpeg)) });
  } catch (err) {
    // Measurements still in flight settle before the failure is reported, so none rejects unobserved.
    await Promise.allSettled(measures.values());
    throw err;
  }
  const measured = await Promise.all(frames.map((frame) => measures.get(frame.jpeg) ?? measureFrame(frame.jpeg)));
  await Promise.allSettled(measures.values());
  return { frames, poster: await choosePoster(frames, measured) };
}
