/**
 * bench:bombs' hostile files of the kinds added after issue 36: camera RAWs (LibRaw develops the
 * sensor data), AVCHD transport streams (ffmpeg) and mail messages (IMAP intake).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import sharp from "sharp";
import { resolveFfmpegPaths } from "../../src/video/ffmpeg-tools.ts";
import { cr2, noise } from "../../test/support/photo-fixtures.ts";

/** A CR2 whose full-size preview is a JPEG that declares 65,500 × 65,500 pixels (4.3 gigapixels) in a few hundred bytes. */
export async function gigapixelPreviewCr2(): Promise<Uint8Array> {
  const jpeg = new Uint8Array(await sharp({ create: { width: 16, height: 16, channels: 3, background: "#808080" } }).jpeg().toBuffer());
  for (let i = 0; i < jpeg.length - 8; i++) {
    // SOF0/SOF2: FF C0|C2, length (2), precision (1), height (2), width (2).
    if (jpeg[i] === 0xff && (jpeg[i + 1] === 0xc0 || jpeg[i + 1] === 0xc2)) {
      jpeg.set([0xff, 0xdc, 0xff, 0xdc], i + 5);
      break;
    }
  }
  return cr2({ preview: jpeg, sensor: { width: 6000, height: 4000 } });
}

/** MPEG-TS packets (sync byte 0x47 every 188 bytes) of noise: a stream ffprobe has to search through. */
export function noiseTransportStream(bytes: number): Uint8Array {
  const out = noise(bytes - (bytes % 188), 7);
  for (let i = 0; i < out.length; i += 188) out[i] = 0x47;
  return out;
}

/** An AVCHD-like .MTS written by ffmpeg from a plain colour: H.264 in MPEG-TS. */
export function transportStream(dir: string, name: string, size: string, seconds: number, rate: number, ...encoder: string[]): Uint8Array {
  const out = join(dir, name);
  const run = Bun.spawnSync([
    resolveFfmpegPaths().ffmpeg, "-nostdin", "-v", "error", "-y",
    "-f", "lavfi", "-i", `color=c=gray:size=${size}:rate=${rate}:duration=${seconds}`,
    "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", ...encoder, "-f", "mpegts", out,
  ]);
  if (run.exitCode !== 0) throw new Error(`ffmpeg: ${run.stderr.toString()}`);
  return new Uint8Array(readFileSync(out));
}

/** A message whose multipart bodies nest `depth` levels, an attachment at the bottom. */
export function nestedMessage(depth: number, subject: string): string {
  const lines = [`From: Mallory <mallory@example.com>`, "To: scanner@example.com", `Subject: ${subject}`, `Message-ID: <${crypto.randomUUID()}@example.com>`, "MIME-Version: 1.0"];
  for (let i = 0; i < depth; i++) lines.push(`Content-Type: multipart/mixed; boundary="b${i}"`, "", `--b${i}`);
  lines.push("Content-Type: text/plain; name=\"deep.txt\"", "Content-Disposition: attachment; filename=\"deep.txt\"", "", "found at the bottom");
  for (let i = depth - 1; i >= 0; i--) lines.push(`--b${i}--`);
  lines.push("");
  return lines.join("\r\n");
}
