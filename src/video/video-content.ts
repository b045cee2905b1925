/** Which uploaded content is a video. */
import type { UploadedContent } from "../kinds/media-kind.ts";
import { FIXED_LIMITS } from "../tenancy/tiers.ts";

/** "mts": MPEG transport streams (AVCHD camcorders' .mts/.m2ts, broadcast and screen recorders' .ts), told by their 188/192-byte packets. */
const VIDEO_FORMATS = new Set(["mp4", "mov", "webm", "mkv", "avi", "m4v", "mpg", "3gp", "mts"]);

export const VIDEO_CONTENT: UploadedContent = {
  type: "video",
  detect: ({ ext, mime }) => (VIDEO_FORMATS.has(ext) ? { mime, format: ext } : null),
  accepts: "videos (mp4, mov, webm, mkv, avi, mpeg, 3gp, mts/m2ts/ts)",
  maxStreamingBytes: FIXED_LIMITS.maxImageBytes,
  hints: { contentTypes: /^video\//, names: /\.(mp4|m4v|mov|webm|mkv|avi|mpe?g|3gp|mts|m2ts|ts)$/i },
};
