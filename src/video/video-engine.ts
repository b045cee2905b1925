/**
 * The server's ffmpeg and ffprobe: found on first use (a server that never sees a video never
 * looks), run under the configured time and memory limits, and every process they started
 * killed when the server stops.
 */
import type { Config } from "../config.ts";
import { unpackBundledBinaries } from "./bundled-binaries.ts";
import { resolveFfmpegPaths, VideoTools } from "./ffmpeg-tools.ts";

export class VideoEngine {
  private tools: VideoTools | null = null;
  private unpacked: Promise<void> | null = null;

  constructor(private readonly config: Pick<Config, "ffmpegPath" | "ffprobePath" | "videoTimeoutSeconds" | "videoMemoryMb">) {}

  /** Rejects with VideoToolError ("missing-binary") naming the binary that is not there. */
  async get(): Promise<VideoTools> {
    // Settings that name both tools need nothing unpacked.
    if (!this.config.ffmpegPath || !this.config.ffprobePath) {
      this.unpacked ??= unpackBundledBinaries().catch((err) => {
        this.unpacked = null; // a full disk may have room next time
        throw err;
      });
      await this.unpacked;
    }
    this.tools ??= new VideoTools(resolveFfmpegPaths({ ffmpeg: this.config.ffmpegPath, ffprobe: this.config.ffprobePath }), {
      timeoutMs: this.config.videoTimeoutSeconds * 1000,
      memoryBytes: this.config.videoMemoryMb * 1024 * 1024,
    });
    return this.tools;
  }

  async close(): Promise<void> {
    await this.tools?.close();
  }
}
