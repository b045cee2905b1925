/**
 * What a video is, from one ffprobe run over its headers (nothing is decoded): duration, frame
 * rate, codec, upright size, container, audio, creation time. A file ffprobe cannot open is
 * told apart as "not a video" (no container signature we know) or "corrupt" (a video container
 * whose index is missing, as in an MP4 cut before its moov box). A file whose header survives
 * but whose data is cut short probes fine and is marked `truncated`: what the header says is
 * still true, the frames past the cut are not there, so its duration is the span of the packets
 * actually present (counted when the file is suspiciously small for what its header states).
 */
import { open } from "node:fs/promises";
import { resolve } from "node:path";
import { tailText, VideoToolError, type VideoTools } from "./ffmpeg-tools.ts";

export interface VideoProbe {
  /**
   * How long the video the file holds is: what the header states, or, for a file cut short, the
   * span of the packets actually present. Null when neither the container nor the stream states it.
   */
  durationSeconds: number | null;
  /** What the header states (differs from durationSeconds only for a truncated file). */
  declaredDurationSeconds: number | null;
  /** Average frames per second (the nominal rate when no average is known); null if unknown. */
  frameRate: number | null;
  /** ffprobe's codec name of the video stream: "h264", "hevc", "vp9", "h263", ... */
  codec: string;
  /** Upright size as displayed: the stored size with width and height swapped for a 90/270 rotation. */
  width: number;
  height: number;
  /** Clockwise degrees (0, 90, 180, 270) the stored frames are turned for display. */
  rotation: number;
  /** Width of a stored pixel over its height (1 for square pixels; anamorphic DV is 8/9 or 32/27). */
  pixelAspect: number;
  /** Short container name: "mp4", "mov", "3gp", "3g2", "m4v", "webm", "mkv", "avi", "mpegts", ... */
  container: string;
  hasAudio: boolean;
  audioCodec: string | null;
  /** Bits per second over the whole file; null if unknown. */
  bitRate: number | null;
  /** ISO 8601 creation time from the container's tags (else the video stream's), or null. */
  createdAt: string | null;
  /** Frames in the video stream when the container says (MP4 does, WebM does not). */
  frameCount: number | null;
  /** The file holds less data than its header describes (a cut-off upload or copy). */
  truncated: boolean;
  /** Index of the video stream in the file, for ffmpeg's -map. */
  streamIndex: number;
  /** The container's metadata tags over the video stream's (camera-tags.ts reads make, model, place and date from them). */
  tags: Record<string, string>;
}

interface FfprobeStream {
  index?: number;
  codec_type?: string;
  codec_name?: string;
  width?: number;
  height?: number;
  sample_aspect_ratio?: string;
  avg_frame_rate?: string;
  r_frame_rate?: string;
  duration?: string;
  bit_rate?: string;
  nb_frames?: string;
  disposition?: { attached_pic?: number };
  tags?: Record<string, string>;
  side_data_list?: { side_data_type?: string; rotation?: number }[];
}

interface FfprobeOutput {
  streams?: FfprobeStream[];
  format?: { format_name?: string; duration?: string; start_time?: string; size?: string; bit_rate?: string; tags?: Record<string, string> };
}

/** Header bytes read to name the container and to tell a damaged video from something else. */
const HEADER_BYTES = 64;

async function readHeader(path: string): Promise<Buffer> {
  const file = await open(path, "r");
  try {
    const buffer = Buffer.alloc(HEADER_BYTES);
    const { bytesRead } = await file.read(buffer, 0, HEADER_BYTES, 0);
    return buffer.subarray(0, bytesRead);
  } finally {
    await file.close();
  }
}

/** True when the bytes start like a video container (ISO BMFF/QuickTime, EBML, RIFF AVI, FLV, MPEG-TS/PS, Ogg, ASF). */
export function looksLikeVideoContainer(header: Buffer): boolean {
  const ascii = (start: number, end: number) => header.toString("latin1", start, end);
  const box = ascii(4, 8);
  if (["ftyp", "moov", "mdat", "free", "wide", "skip"].includes(box)) return true;
  if (header.readUInt32BE(0) === 0x1a45dfa3) return true;
  if (ascii(0, 4) === "RIFF" && ascii(8, 11) === "AVI") return true;
  if (ascii(0, 3) === "FLV" || ascii(0, 4) === "OggS") return true;
  if (header[0] === 0x47 && (header.length < 189 || header[188] === 0x47)) return true;
  if (header.length >= 4 && header.readUInt32BE(0) === 0x000001ba) return true;
  return header.length >= 4 && header.readUInt32BE(0) === 0x3026b275;
}

/** ffprobe names every ISO BMFF flavour "mov,mp4,m4a,3gp,3g2,mj2" and Matroska "matroska,webm"; the file's brand or doctype tells which it is. */
function containerName(formatName: string, majorBrand: string | undefined, header: Buffer): string {
  const names = formatName.split(",");
  if (names.includes("mov")) {
    const brand = (majorBrand ?? "").trim().toLowerCase();
    if (!brand || brand === "qt") return "mov";
    if (brand.startsWith("3gp") || brand.startsWith("3ge") || brand.startsWith("3gg")) return "3gp";
    if (brand.startsWith("3g2")) return "3g2";
    if (brand === "m4v" || brand === "m4vh" || brand === "m4vp") return "m4v";
    return "mp4";
  }
  if (names.includes("matroska")) return header.toString("latin1").includes("webm") ? "webm" : "mkv";
  return names[0] ?? "unknown";
}

const positive = (value: string | number | undefined): number | null => {
  const n = Number(value);
  return Number.isFinite(n) && n > 0 ? n : null;
};

/** "30000/1001" as a number; null for "0/0" and the like. */
function ratio(value: string | undefined): number | null {
  if (!value) return null;
  const [num, den] = value.split(/[/:]/).map(Number);
  if (den === undefined) return positive(num);
  return num !== undefined && Number.isFinite(num) && Number.isFinite(den) && num > 0 && den > 0 ? num / den : null;
}

/** Clockwise degrees from the display matrix (ffprobe: counter-clockwise, so -90 is 90 clockwise), else the legacy `rotate` tag (clockwise). */
function rotationOf(stream: FfprobeStream): number {
  const matrix = stream.side_data_list?.find((side) => typeof side.rotation === "number");
  const degrees = matrix ? -(matrix.rotation as number) : Number(stream.tags?.rotate ?? 0);
  if (!Number.isFinite(degrees)) return 0;
  return (((Math.round(degrees / 90) * 90) % 360) + 360) % 360;
}

/** A creation_time tag as ISO 8601; null when absent, unparseable, or a zero date (1904/1970 epochs written by muxers that had no time). */
function creationTime(tags: Record<string, string> | undefined): string | null {
  const raw = tags?.creation_time;
  if (!raw) return null;
  const date = new Date(raw);
  if (Number.isNaN(date.getTime()) || date.getUTCFullYear() < 1971) return null;
  return date.toISOString();
}

/**
 * Whether the file is smaller than its streams' stated bit rates over its duration imply. Only
 * containers that state per-stream rates from their index (MP4/MOV) can tell; the 10% margin
 * covers rounding of the rates.
 */
function shorterThanIndexed(output: FfprobeOutput, duration: number | null): boolean {
  const size = positive(output.format?.size);
  if (!size || !duration) return false;
  const rates = (output.streams ?? []).map((stream) => positive(stream.bit_rate));
  if (rates.length === 0 || rates.some((rate) => rate === null)) return false;
  const indexedBytes = (rates as number[]).reduce((sum, rate) => sum + rate, 0) * (duration / 8);
  return size < indexedBytes * 0.9;
}

const TRUNCATION = /partial file|ended prematurely|truncat|unexpected end of/i;

/**
 * Below this many bits per pixel per frame over the stated duration, a file is suspiciously small
 * for its header: a phone's H.264 spends ~0.2, web video 0.05-0.15, a still screencast ~0.001.
 * Such a file has its packets counted (below), which is the truth; the ratio only decides
 * whether counting is worth a read of the file.
 */
const SUSPICIOUS_BITS_PER_PIXEL = 0.02;

function suspiciouslySmall(output: FfprobeOutput, duration: number | null, width: number, height: number, frameRate: number | null): boolean {
  const size = positive(output.format?.size);
  if (!size || !duration) return false;
  return (size * 8) / (duration * width * height * (frameRate ?? 25)) < SUSPICIOUS_BITS_PER_PIXEL;
}

/** Packet listings are ~20 bytes a line; 32 MB is three hours at 60 fps. */
const PACKET_LISTING_BYTES = 32 * 1024 * 1024;

/**
 * The span of the video packets present in the file (last packet's end less the start time),
 * read from the container without decoding; null when it cannot be told.
 */
async function presentDuration(tools: VideoTools, path: string, streamIndex: number, startTime: number, options: { timeoutMs?: number; signal?: AbortSignal }): Promise<number | null> {
  const result = await tools
    .run("ffprobe", ["-v", "error", "-select_streams", String(streamIndex), "-show_entries", "packet=pts_time,dts_time,duration_time", "-of", "csv=p=0", `file:${path}`], {
      timeoutMs: options.timeoutMs,
      signal: options.signal,
      maxStdoutBytes: PACKET_LISTING_BYTES,
    })
    .catch(() => null);
  if (!result) return null;
  let end = -Infinity;
  for (const line of result.stdout.toString("utf8").split("\n")) {
    const [pts, dts, duration] = line.split(",").map(Number);
    const at = Number.isFinite(pts) ? pts! : dts!;
    if (Number.isFinite(at)) end = Math.max(end, at + (Number.isFinite(duration) ? duration! : 0));
  }
  return Number.isFinite(end) ? Math.max(0, end - startTime) : null;
}

/** Probes `path` (a local file). Throws VideoToolError: "not-video", "corrupt", or a run failure (timeout, ...). */
export async function probeVideo(tools: VideoTools, path: string, options: { timeoutMs?: number; signal?: AbortSignal } = {}): Promise<VideoProbe> {
  const absolute = resolve(path);
  let header: Buffer;
  try {
    header = await readHeader(absolute);
  } catch (err) {
    throw new VideoToolError("not-video", `not a video: the file cannot be read (${(err as Error).message})`);
  }
  if (header.length === 0) throw new VideoToolError("not-video", "not a video: the file is empty");

  const result = await tools.run("ffprobe", ["-v", "error", "-print_format", "json", "-show_format", "-show_streams", `file:${absolute}`], {
    timeoutMs: options.timeoutMs,
    signal: options.signal,
    maxStdoutBytes: 4 * 1024 * 1024,
  });
  const problem = tailText(result.stderrTail);
  if (result.exitCode !== 0) {
    // ffprobe's message alone cannot tell a cut-off MP4 ("moov atom not found") from a text file named .mp4: the signature can.
    if (looksLikeVideoContainer(header)) throw new VideoToolError("corrupt", `truncated or corrupt: ${problem}`);
    throw new VideoToolError("not-video", `not a video: ${problem}`);
  }
  let output: FfprobeOutput;
  try {
    output = JSON.parse(result.stdout.toString("utf8")) as FfprobeOutput;
  } catch {
    throw new VideoToolError("failed", `ffprobe printed no readable answer: ${problem}`);
  }

  const formatName = output.format?.format_name ?? "";
  const streams = output.streams ?? [];
  // Cover art in an audio file is a one-picture "video" stream; it does not make the file a video.
  const video = streams.find((stream) => stream.codec_type === "video" && !stream.disposition?.attached_pic);
  if (!video) {
    const what = streams.length ? `no video stream (${streams.map((stream) => stream.codec_type ?? "unknown").join(", ")})` : "no streams";
    throw new VideoToolError("not-video", `not a video: ${what} in ${formatName || "the file"}`);
  }
  const storedWidth = positive(video.width);
  const storedHeight = positive(video.height);
  if (!storedWidth || !storedHeight) throw new VideoToolError("corrupt", `truncated or corrupt: the ${video.codec_name ?? "video"} stream has no frame size`);

  const rotation = rotationOf(video);
  const turned = rotation === 90 || rotation === 270;
  const audio = streams.find((stream) => stream.codec_type === "audio");
  const declaredDurationSeconds = positive(output.format?.duration) ?? positive(video.duration);
  const nbFrames = Number(video.nb_frames);
  const frameRate = ratio(video.avg_frame_rate) ?? ratio(video.r_frame_rate);
  let truncated = result.stderrTail.some((line) => TRUNCATION.test(line)) || shorterThanIndexed(output, declaredDurationSeconds);
  let durationSeconds = declaredDurationSeconds;
  if (truncated || suspiciouslySmall(output, declaredDurationSeconds, storedWidth, storedHeight, frameRate)) {
    const present = await presentDuration(tools, absolute, video.index ?? 0, Number(output.format?.start_time) || 0, options);
    // A second's slack: the last packet's duration and the stated one are both rounded.
    if (present !== null && declaredDurationSeconds !== null && present < declaredDurationSeconds - 1 && present < declaredDurationSeconds * 0.97) {
      truncated = true;
      durationSeconds = Math.round(present * 1000) / 1000;
    }
  }

  return {
    durationSeconds,
    declaredDurationSeconds,
    frameRate,
    codec: video.codec_name ?? "unknown",
    width: turned ? storedHeight : storedWidth,
    height: turned ? storedWidth : storedHeight,
    rotation,
    pixelAspect: ratio(video.sample_aspect_ratio) ?? 1,
    container: containerName(formatName, output.format?.tags?.major_brand, header),
    hasAudio: audio !== undefined,
    audioCodec: audio?.codec_name ?? null,
    bitRate: positive(output.format?.bit_rate),
    createdAt: creationTime(output.format?.tags) ?? creationTime(video.tags),
    frameCount: Number.isInteger(nbFrames) && nbFrames > 0 ? nbFrames : null,
    truncated,
    streamIndex: video.index ?? 0,
    tags: { ...video.tags, ...output.format?.tags },
  };
}
