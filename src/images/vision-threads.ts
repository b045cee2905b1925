/**
 * The vision models' threads (vision-worker.ts), one per core: two images analysed side by side
 * run their models side by side instead of taking turns on the event loop. Each thread holds its
 * own copy of the models (~100 MB). A request goes to the thread with the fewest requests
 * waiting. Threads start on first use and never keep the process alive; where they cannot start
 * or one fails, the models run on the calling thread (vision-tfjs.ts), as before threads.
 */
import { cpus } from "node:os";
import { WorkerThread } from "../native/worker-thread.ts";
import { assetsReady, isCompiled } from "../native/packages.ts";
import { detectFaceDescriptors, mobileNetDimension, mobileNetFeatures, type FaceDescriptor } from "./vision-tfjs.ts";
import { detectWithTiles, type TiledDetections } from "./vision-tiles.ts";
import type { VisionReply, VisionRequest } from "./vision-worker.ts";

type VisionThread = WorkerThread<VisionRequest, VisionReply>;

/** Most vision threads, whatever the cores: each holds its own copy of the models. */
const MAX_THREADS = 4;

export class VisionThreads {
  private readonly threads: { thread: VisionThread; waiting: number }[] = [];
  private failed = false;

  /** `size`: threads to run (default: one per core, at most MAX_THREADS); 0 runs the models on the calling thread. */
  constructor(private readonly size = Math.min(MAX_THREADS, cpus().length)) {}

  /** CenterNet objects and BlazeFace faces (with the tiled second look) of an RGB image; with `recognize`, the faces' descriptors too. */
  async detect(rgb: Uint8Array, width: number, height: number, options: { tiles: boolean; recognize: boolean }): Promise<TiledDetections> {
    const reply = await this.ask({ op: "detect", rgb, width, height, ...options, assets: await compiledAssets() });
    if (!reply) return detectWithTiles(rgb, width, height, options);
    return expect(reply, "detections").detections;
  }

  /** BlazeFace faces of an RGB image, each with its faceres descriptor. */
  async faces(rgb: Uint8Array, width: number, height: number): Promise<FaceDescriptor[]> {
    const reply = await this.ask({ op: "faces", rgb, width, height, assets: await compiledAssets() });
    if (!reply) return detectFaceDescriptors(rgb, width, height);
    return expect(reply, "faces").faces;
  }

  /** MobileNetV2 features of a 224x224 RGB image. */
  async features(rgb: Uint8Array): Promise<Float32Array> {
    const reply = await this.ask({ op: "features", rgb, assets: await compiledAssets() });
    if (!reply) return mobileNetFeatures(rgb);
    return expect(reply, "vector").vector;
  }

  async dimension(): Promise<number> {
    const reply = await this.ask({ op: "dimension", assets: await compiledAssets() });
    if (!reply) return mobileNetDimension();
    return expect(reply, "dimension").dimension;
  }

  /** Ends the threads; later calls start new ones. */
  close(): void {
    for (const { thread } of this.threads.splice(0)) thread.terminate();
  }

  /** The reply of the least busy thread; null when no thread can answer (then the caller runs the model). */
  private async ask(request: VisionRequest): Promise<VisionReply | null> {
    const slot = this.pick();
    if (!slot) return null;
    slot.waiting++;
    try {
      const reply = await slot.thread.ask(request);
      // A thread that died: the next request starts another in its place; this one runs here.
      return reply instanceof Error ? null : reply;
    } finally {
      slot.waiting--;
    }
  }

  private pick(): { thread: VisionThread; waiting: number } | null {
    if (this.failed || this.size <= 0) return null;
    try {
      for (let i = 0; i < this.size; i++) {
        if (!this.threads[i] || this.threads[i]!.thread.broken) this.threads[i] = { thread: new WorkerThread<VisionRequest, VisionReply>("images/vision-worker.ts", "vision model thread"), waiting: 0 };
      }
    } catch {
      this.failed = true; // no worker threads here: the models run on the calling thread
      return null;
    }
    return this.threads.reduce((best, slot) => (slot.waiting < best.waiting ? slot : best));
  }
}

/** Where the models' files are for the threads: the compiled binary's unpacked assets, or null (node_modules). */
async function compiledAssets(): Promise<string | null> {
  return isCompiled ? await assetsReady() : null;
}

function expect<K extends "detections" | "vector" | "faces" | "dimension">(reply: VisionReply, key: K): Extract<VisionReply, Record<K, unknown>> {
  if ("error" in reply) throw new Error(reply.error);
  if (!(key in reply)) throw new Error(`the vision model thread answered without ${key}`);
  return reply as Extract<VisionReply, Record<K, unknown>>;
}
