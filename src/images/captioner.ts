/**
 * Image captioning through @huggingface/transformers (`image-to-text`, e.g. a ViT-GPT2 or BLIP
 * export), loaded only from `<modelsDir>/<name>/` with remote loading disabled. No registry
 * package carries captioning weights (docs/models.md lists those checked), so this path runs only
 * where a site has installed a model folder; a configured but missing folder is an error naming it.
 */
import { stat } from "node:fs/promises";
import path from "node:path";
import type { ModelCheck } from "../models/model-verifier.ts";
import { offlineTransformers } from "../models/transformers.ts";

type CaptionPipeline = (image: unknown, options?: Record<string, unknown>) => Promise<{ generated_text: string }[]>;

export class Captioner {
  private loaded: Promise<CaptionPipeline> | null = null;

  constructor(
    private readonly modelsDir: string,
    readonly modelName: string,
    /** Runs before the folder is used (the models manifest check); rejecting refuses the model. */
    private readonly check?: ModelCheck,
  ) {}

  get folder(): string {
    return path.resolve(this.modelsDir, this.modelName);
  }

  private load(): Promise<CaptionPipeline> {
    this.loaded ??= (async () => {
      const folder = this.folder;
      if (!(await stat(folder).catch(() => null))?.isDirectory()) {
        throw new Error(`captioning model "${this.modelName}" not found: folder ${folder} does not exist`);
      }
      await this.check?.(this.modelName);
      const transformers = await offlineTransformers(this.modelsDir);
      const pipe = await transformers.pipeline("image-to-text", this.modelName, { local_files_only: true, dtype: "q8", device: "cpu" });
      return pipe as unknown as CaptionPipeline;
    })();
    // A failed load is retried on the next image (the site may install the folder meanwhile).
    this.loaded.catch(() => (this.loaded = null));
    return this.loaded;
  }

  /** `rgb` is 3-channel pixels of the upright image. */
  async caption(rgb: Uint8Array, width: number, height: number): Promise<string> {
    const pipe = await this.load();
    const { RawImage } = await import("@huggingface/transformers");
    const image = new (RawImage as unknown as new (d: Uint8Array, w: number, h: number, c: number) => unknown)(rgb, width, height, 3);
    const out = await pipe(image, { max_new_tokens: 40 });
    return (out[0]?.generated_text ?? "").trim();
  }
}
