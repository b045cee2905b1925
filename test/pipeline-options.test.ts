/**
 * Each pipeline's options are built once from the settings (the kind's descriptor builds them):
 * the environment variables a user sets reach the stages through them.
 */
import { expect, test } from "bun:test";
import { loadConfig } from "../src/config.ts";
import { documentPipelineOptions } from "../src/documents/document-pipeline.ts";
import { imagePipelineOptions } from "../src/images/image-pipeline.ts";
import { linkPipelineOptions } from "../src/links/link-pipeline.ts";
import { videoPipelineOptions } from "../src/video/video-pipeline.ts";

const config = loadConfig({}, {
  MEDIABOX_DATA_DIR: "/tmp/unused",
  MEDIABOX_LINK_FETCH: "false",
  MEDIABOX_LINK_TIMEOUT_SECONDS: "7",
  MEDIABOX_LINK_MAX_IMAGES: "3",
  MEDIABOX_VIDEO_MAX_DURATION_SECONDS: "90",
  MEDIABOX_VIDEO_MAX_MB: "12",
  MEDIABOX_VIDEO_MAX_KEYFRAMES: "5",
  MEDIABOX_VIDEO_TIMEOUT_SECONDS: "30",
  MEDIABOX_LAYOUT_MODEL: "none",
});

test("the link pipeline's options: fetching off, the fetch budget from the timeout, the image limits", () => {
  expect(linkPipelineOptions(config)).toEqual({ fetch: false, fetchBudgetMs: 2 * 7_000 + 60_000, maxImages: 3, maxImageBytes: config.linkMaxImageBytes });
});

test("the video pipeline's options: the analysis limits and the keyframes budget from the ffmpeg timeout", () => {
  expect(videoPipelineOptions(config)).toEqual({ maxDurationSeconds: 90, maxMb: 12, maxKeyframes: 5, keyframesBudgetMs: 2 * 30_000 + 60_000, maxPixels: config.imageMaxPixels });
});

test("the image and document pipelines' options", () => {
  expect(imagePipelineOptions(config)).toEqual({ maxPixels: config.imageMaxPixels });
  expect(documentPipelineOptions(config)).toEqual({ modelsDir: config.modelsDir, layoutModel: "none" });
});
