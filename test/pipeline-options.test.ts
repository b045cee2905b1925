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
  MEDIABOX_STAGE_BUDGETS: "link.fetch=2, document.extraction=1200, image.ocr=0.5",
});

test("the link pipeline's options: fetching off, the fetch budget from the timeout, the image limits", () => {
  expect(linkPipelineOptions(config)).toEqual({ fetch: false, fetchBudgetMs: 2 * 7_000 + 60_000, maxImages: 3, maxImageBytes: config.linkMaxImageBytes, stageBudgets: { fetch: 2_000 } });
});

test("the video pipeline's options: the analysis limits and the keyframes budget from the ffmpeg timeout", () => {
  expect(videoPipelineOptions(config)).toEqual({ maxDurationSeconds: 90, maxMb: 12, maxKeyframes: 5, keyframesBudgetMs: 2 * 30_000 + 60_000, maxPixels: config.imageMaxPixels, stageBudgets: {} });
});

test("the image and document pipelines' options; each pipeline gets the stage budgets of its own media type, by stage", () => {
  expect(imagePipelineOptions(config)).toEqual({ maxPixels: config.imageMaxPixels, stageBudgets: { ocr: 500 } });
  expect(documentPipelineOptions(config)).toEqual({ modelsDir: config.modelsDir, layoutModel: "none", stageBudgets: { extraction: 1_200_000 } });
});
