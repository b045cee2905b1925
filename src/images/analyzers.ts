/**
 * The image models one server holds: the OCR engine, the vision models (objects, faces,
 * embeddings), the optional captioning model and the optional OpenAI-compatible endpoint. Built
 * once per server from configuration; each loads lazily on first use and is closed at shutdown.
 */
import type { Config } from "../config.ts";
import type { ModelCheck } from "../models/model-verifier.ts";
import { Captioner } from "./captioner.ts";
import { OcrEngine } from "./ocr.ts";
import { VisionEndpoint } from "./vision-endpoint.ts";
import { VisionModels } from "./vision.ts";

export class ImageAnalyzers {
  readonly ocr: OcrEngine;
  readonly vision: VisionModels;
  readonly captioner: Captioner | null;
  readonly endpoint: VisionEndpoint | null;

  /** `scratchDir` is DataDir's scratch: OCR writes its temporary images there. */
  constructor(config: Config, scratchDir: string, check?: ModelCheck) {
    this.ocr = new OcrEngine({
      workers: config.ocrWorkers,
      languages: config.ocrLanguages,
      modelsDir: config.modelsDir,
      scratchDir,
      ...(check ? { check } : {}),
    });
    this.vision = new VisionModels({
      modelsDir: config.modelsDir,
      ...(config.imageEmbeddingModel ? { imageEmbeddingModel: config.imageEmbeddingModel } : {}),
      ...(check ? { check } : {}),
    });
    this.captioner = config.captionModel ? new Captioner(config.modelsDir, config.captionModel, check) : null;
    this.endpoint =
      config.visionEndpointUrl && config.visionEndpointModel
        ? new VisionEndpoint({
            baseUrl: config.visionEndpointUrl,
            model: config.visionEndpointModel,
            ...(config.visionEndpointApiKey ? { apiKey: config.visionEndpointApiKey } : {}),
          })
        : null;
  }

  async close(): Promise<void> {
    await Promise.allSettled([this.ocr.close(), this.vision.close()]);
  }
}
