/**
 * The services the video feature uses: ffmpeg and ffprobe, and the image feature's (keyframes
 * and posters go through the image variants, models and OCR). The composition root (src/app.ts)
 * builds them once and passes its context, which satisfies this interface.
 */
import type { ImageDeps } from "../images/deps.ts";
import type { VideoEngine } from "./video-engine.ts";

export interface VideoDeps extends ImageDeps {
  /** ffmpeg and ffprobe for videos, found on first use. */
  video: VideoEngine;
}
