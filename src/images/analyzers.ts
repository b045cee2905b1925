/**
 * The image models one server holds: the vision models (objects, faces, embeddings), the
 * optional captioning model and the optional OpenAI-compatible endpoint. Built once per server
 * from configuration; each loads lazily on first use and is closed at shutdown. OCR is not here:
 * images, scanned pages and video frames share it (`ctx.ocr`).
 */
import type { Config } from "../config.ts";
import type { ModelCheck } from "../models/model-verifier.ts";
import { Captioner } from "./captioner.ts";
import { VisionEndpoint } from "./vision-endpoint.ts";
import { VisionModels } from "./vision.ts";

export class ImageAnalyzers {
  readonly vision: VisionModels;
  readonly captioner: Captioner | null;
  readonly endpoint: VisionEndpoint | null;

  constructor(config: Config, check?: ModelCheck) {
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
    await this.vision.close();
  }
}
