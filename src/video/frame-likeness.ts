/**
 * Whether a keyframe can show anything new to read: OCR (~0.3 s a frame) is skipped on blank
 * frames (a uniform card or a fade has no text) and on frames that look like the last frame read
 * (a static shot sampled again, a slide held for a minute), whose reading is reused. Frames are
 * compared block by block on a small grey copy, so a change confined to one area (a new subtitle
 * line, a slide's next bullet) still counts as new.
 */
import sharp from "sharp";
import { BLANK_STDEV } from "./frames.ts";

// Measured on a 720p frame with 28 px subtitles: one changed digit moves its 10×10 block by 4.4
// grey levels at this size, encoding the same picture again by 1.2 (quality 60) to 1.9 (quality 30).
// The threshold sits well under the first: a frame is reused only when nearly identical (a static
// screen, a held slide); real camera noise makes frames differ, and they are read again.
const WIDTH = 320;
const HEIGHT = 180;
const BLOCK_W = 10;
const BLOCK_H = 10;
const BLOCK_CHANGE = 1.5;

export interface FrameSignature {
  grey: Uint8Array;
  stdev: number;
}

export async function frameSignature(jpeg: Buffer): Promise<FrameSignature> {
  const grey = new Uint8Array(await sharp(jpeg).resize(WIDTH, HEIGHT, { fit: "fill" }).greyscale().raw().toBuffer());
  let sum = 0;
  let squares = 0;
  for (const v of grey) (sum += v), (squares += v * v);
  const mean = sum / grey.length;
  return { grey, stdev: Math.sqrt(Math.max(0, squares / grey.length - mean * mean)) };
}

/** A blank card (as the poster choice judges one) has no strokes to read. */
export const isBlank = (frame: FrameSignature) => frame.stdev < BLANK_STDEV;

/** True when no block of the two frames differs by BLOCK_CHANGE grey levels or more on average. */
export function looksAlike(a: FrameSignature, b: FrameSignature): boolean {
  for (let by = 0; by < HEIGHT; by += BLOCK_H) {
    for (let bx = 0; bx < WIDTH; bx += BLOCK_W) {
      let diff = 0;
      for (let y = by; y < by + BLOCK_H; y++) for (let x = bx; x < bx + BLOCK_W; x++) diff += Math.abs(a.grey[y * WIDTH + x]! - b.grey[y * WIDTH + x]!);
      if (diff / (BLOCK_W * BLOCK_H) >= BLOCK_CHANGE) return false;
    }
  }
  return true;
}

/** For each frame: read it, or it is blank, or its reading is that of an earlier frame that was read. */
export type FramePlan = { kind: "read" } | { kind: "blank" } | { kind: "same-as"; frame: number };

/** Which frames OCR reads: the first of each run of look-alike frames, never a blank one. */
export function readingPlan(frames: FrameSignature[]): FramePlan[] {
  let lastRead = -1;
  return frames.map((frame, index): FramePlan => {
    if (isBlank(frame)) return { kind: "blank" };
    if (lastRead >= 0 && looksAlike(frame, frames[lastRead]!)) return { kind: "same-as", frame: lastRead };
    lastRead = index;
    return { kind: "read" };
  });
}
