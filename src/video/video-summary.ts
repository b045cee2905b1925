/**
 * What a video showed over time, put into words: the text read in its frames without repeats,
 * the things the detectors saw with when they were seen, and a machine-made description built
 * only from those findings (labelled as such by VIDEO_COMPOSED_MODEL wherever it is shown).
 */
import type { ImageFacts } from "../images/describe.ts";

export const VIDEO_COMPOSED_MODEL = "mediabox-composer (video keyframes: human centernet + blazeface, tesseract, colour histogram)";

export interface FrameFindings {
  timeSeconds: number;
  /** OCR lines of the frame, null when it was not read. */
  lines: string[] | null;
  /** Null when the detectors did not look at the frame. */
  objects: { label: string; score: number }[] | null;
  faces: number | null;
  colours?: string[];
}

export interface VideoShape {
  durationSeconds: number | null;
  width: number;
  height: number;
  codec: string | null;
  hasAudio: boolean;
}

export interface SeenThing {
  label: string;
  /** Frames it was seen in, and the first and last time. */
  frames: number;
  firstSeconds: number;
  lastSeconds: number;
  bestScore: number;
}

const normalize = (line: string) => line.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, " ").trim();

/**
 * The lines read across frames, each once, in the order first seen. A line that a longer kept
 * line already contains (the same caption read partly in another frame) is dropped too.
 */
export function dedupeLines(frames: FrameFindings[]): string[] {
  const kept: { line: string; key: string }[] = [];
  for (const frame of [...frames].sort((a, b) => a.timeSeconds - b.timeSeconds)) {
    for (const raw of frame.lines ?? []) {
      const line = raw.replace(/\s+/g, " ").trim();
      const key = normalize(line);
      if (key.length < 2) continue;
      if (kept.some((k) => k.key.includes(key))) continue;
      // A longer reading replaces shorter ones it contains.
      for (let i = kept.length - 1; i >= 0; i--) if (key.includes(kept[i]!.key)) kept.splice(i, 1);
      kept.push({ line, key });
    }
  }
  return kept.map((k) => k.line);
}

/** Each label the detectors reported, with how often and when; most frequent first. */
export function seenThings(frames: FrameFindings[]): SeenThing[] {
  const byLabel = new Map<string, SeenThing>();
  for (const frame of frames) {
    const labels = new Map<string, number>();
    for (const o of frame.objects ?? []) labels.set(o.label, Math.max(labels.get(o.label) ?? 0, o.score));
    if ((frame.faces ?? 0) > 0 && !labels.has("person")) labels.set("person", 0);
    for (const [label, score] of labels) {
      const seen = byLabel.get(label);
      if (!seen) byLabel.set(label, { label, frames: 1, firstSeconds: frame.timeSeconds, lastSeconds: frame.timeSeconds, bestScore: score });
      else {
        seen.frames++;
        seen.firstSeconds = Math.min(seen.firstSeconds, frame.timeSeconds);
        seen.lastSeconds = Math.max(seen.lastSeconds, frame.timeSeconds);
        seen.bestScore = Math.max(seen.bestScore, score);
      }
    }
  }
  return [...byLabel.values()].sort((a, b) => b.frames - a.frames || b.bestScore - a.bestScore);
}

/** m:ss, or h:mm:ss past an hour. */
export function clockTime(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const rest = String(s % 60).padStart(2, "0");
  return h ? `${h}:${String(m).padStart(2, "0")}:${rest}` : `${m}:${rest}`;
}

function lengthPhrase(seconds: number | null): string {
  if (seconds === null) return "";
  if (seconds < 90) return `${Math.max(1, Math.round(seconds))}-second `;
  if (seconds < 5400) return `${Math.round(seconds / 60)}-minute `;
  return `${(seconds / 3600).toFixed(1)}-hour `;
}

const orientation = (w: number, h: number) => (w / h > 1.1 ? "landscape" : w / h < 0.9 ? "portrait" : "square");

function listPhrase(items: string[]): string {
  return items.length <= 1 ? items.join("") : `${items.slice(0, -1).join(", ")} and ${items.at(-1)}`;
}

const article = (label: string) => (/^[aeiou]/.test(label) ? `an ${label}` : `a ${label}`);

export function composeVideoDescription(shape: VideoShape, things: SeenThing[], lines: string[], colours: string[]): string {
  const sentences: string[] = [];
  const codec = shape.codec ? `, ${shape.codec.toUpperCase()}` : "";
  sentences.push(
    `A ${lengthPhrase(shape.durationSeconds)}${orientation(shape.width, shape.height)} video (${shape.width}×${shape.height}${codec}) ${shape.hasAudio ? "with sound" : "without sound"}.`,
  );
  const shown = things.slice(0, 6).map((t) => {
    const when = t.firstSeconds === t.lastSeconds ? clockTime(t.firstSeconds) : `${clockTime(t.firstSeconds)}–${clockTime(t.lastSeconds)}`;
    return `${article(t.label)} (${when})`;
  });
  sentences.push(shown.length ? `It shows ${listPhrase(shown)}.` : "No objects were recognized in its keyframes.");
  if (colours.length) sentences.push(`Mostly ${listPhrase(colours)}.`);
  const text = lines.join(" ").replace(/\s+/g, " ").trim();
  if (text) sentences.push(`Visible text: "${text.length > 300 ? `${text.slice(0, 297)}...` : text}".`);
  return sentences.join(" ");
}

/** The findings as one image's facts, for the tag and category rules images use. */
export function videoFacts(shape: VideoShape, things: SeenThing[], lines: string[], colours: string[], frames: FrameFindings[]): ImageFacts {
  // A thing seen in one frame out of many is as likely a false detection as a subject.
  const looked = frames.filter((f) => f.objects !== null).length;
  const steady = things.filter((t) => looked <= 2 || t.frames >= 2 || t.bestScore >= 0.6);
  return {
    width: shape.width,
    height: shape.height,
    format: "video",
    objects: steady.map((t) => ({ label: t.label, score: t.bestScore })),
    faces: Math.max(0, ...frames.map((f) => f.faces ?? 0)),
    ocrLines: lines,
    colours,
  };
}
