/**
 * CLIP-style image embeddings through @huggingface/transformers (onnxruntime), loaded only from a
 * folder under the models directory: `<modelsDir>/<name>/` with `config.json`,
 * `preprocessor_config.json` and `onnx/vision_model_quantized.onnx`. Remote loading is disabled;
 * a missing folder or file is an error naming what was looked for. When the folder also holds
 * the text tower (`onnx/text_model_quantized.onnx` with `tokenizer.json` and
 * `tokenizer_config.json`), texts embed into the same space, for zero-shot classification.
 * Used only through vision.ts.
 */
import { modelsReady } from "../native/packages.ts";
import { stat } from "node:fs/promises";
import path from "node:path";
import type { ModelCheck } from "../models/model-verifier.ts";
import { offlineTransformers } from "../models/transformers.ts";
import { errorMessage } from "../errors.ts";

// Required files, checked up front so the error names the exact path instead of surfacing
// whatever transformers.js reports for an absent file.
const REQUIRED_FILES = ["config.json", "preprocessor_config.json", path.join("onnx", "vision_model_quantized.onnx")];
const TEXT_TOWER_FILES = ["tokenizer.json", "tokenizer_config.json", path.join("onnx", "text_model_quantized.onnx")];

/** Callable shapes of the transformers.js objects used here (the library types them loosely). */
interface ClipImageProcessor {
  (image: unknown): Promise<{ pixel_values: unknown }>;
}
interface ClipVisionModel {
  (inputs: Record<string, unknown>): Promise<Record<string, { data: ArrayLike<number>; dims: number[] } | undefined>>;
  dispose(): Promise<unknown>;
}
interface ClipTokenizer {
  (texts: string[], options: { padding: boolean; truncation: boolean }): Record<string, unknown>;
}
type RawImageCtor = new (data: Uint8Array | Uint8ClampedArray, width: number, height: number, channels: 3) => unknown;

export interface ClipEmbedder {
  readonly folder: string;
  embed(rgb: Uint8Array, width: number, height: number): Promise<Float32Array>;
  /** One vector per text in the image embedding space; null when the folder has no text tower. */
  embedTexts(texts: string[]): Promise<Float32Array[] | null>;
  dispose(): Promise<void>;
}

const isFile = async (file: string) => (await stat(file).catch(() => null))?.isFile() ?? false;

export async function loadClipEmbedder(modelsDir: string, name: string, check?: ModelCheck): Promise<ClipEmbedder> {
  // Hub-style "owner/model" names are folders too, but the name must stay inside modelsDir.
  if (path.isAbsolute(name) || name.split(/[\\/]/).some((part) => part === ".." || part === "")) {
    throw new Error(`image embedding model name "${name}" must be a folder name relative to the models directory`);
  }
  const folder = path.resolve(modelsDir, name);
  await modelsReady(path.resolve(modelsDir)); // the compiled binary's embedded models, written out after start
  const folderStat = await stat(folder).catch(() => null);
  if (!folderStat?.isDirectory()) {
    throw new Error(`image embedding model "${name}" not found: folder ${folder} does not exist`);
  }
  for (const file of REQUIRED_FILES) {
    const full = path.join(folder, file);
    if (!(await isFile(full))) {
      throw new Error(`image embedding model "${name}" is incomplete: ${full} is missing (folder ${folder})`);
    }
  }
  await check?.(name);

  const transformers = await offlineTransformers(modelsDir);

  let processor: ClipImageProcessor;
  let model: ClipVisionModel;
  try {
    const options = { local_files_only: true } as const;
    // The image processor alone (not AutoProcessor's CLIPProcessor) so a vision-only folder
    // without tokenizer files is enough.
    processor = (await transformers.AutoImageProcessor.from_pretrained(name, options)) as unknown as ClipImageProcessor;
    model = (await transformers.CLIPVisionModelWithProjection.from_pretrained(name, {
      ...options,
      dtype: "q8", // selects onnx/vision_model_quantized.onnx
      device: "cpu",
    })) as unknown as ClipVisionModel;
  } catch (err) {
    throw new Error(`could not load image embedding model from ${folder}: ${errorMessage(err)}`, {
      cause: err,
    });
  }
  const RawImage = transformers.RawImage as unknown as RawImageCtor;

  // Loaded on first use: similarity search needs only the vision tower.
  let textTower: Promise<{ tokenizer: ClipTokenizer; model: ClipVisionModel } | null> | undefined;
  const loadTextTower = async () => {
    for (const file of TEXT_TOWER_FILES) if (!(await isFile(path.join(folder, file)))) return null;
    try {
      const options = { local_files_only: true } as const;
      const tokenizer = (await transformers.AutoTokenizer.from_pretrained(name, options)) as unknown as ClipTokenizer;
      const textModel = (await transformers.CLIPTextModelWithProjection.from_pretrained(name, {
        ...options,
        dtype: "q8", // selects onnx/text_model_quantized.onnx
        device: "cpu",
      })) as unknown as ClipVisionModel;
      return { tokenizer, model: textModel };
    } catch (err) {
      throw new Error(`could not load the text tower of ${folder}: ${errorMessage(err)}`, { cause: err });
    }
  };

  return {
    folder,
    async embed(rgb, width, height) {
      const { pixel_values } = await processor(new RawImage(rgb, width, height, 3));
      const output = await model({ pixel_values });
      const embeds = output.image_embeds;
      if (!embeds) throw new Error(`model in ${folder} has no image_embeds output (expected a CLIPVisionModelWithProjection export)`);
      return Float32Array.from(embeds.data);
    },
    async embedTexts(texts) {
      textTower ??= loadTextTower();
      textTower.catch(() => (textTower = undefined));
      const tower = await textTower;
      if (!tower) return null;
      const output = await tower.model(tower.tokenizer(texts, { padding: true, truncation: true }));
      const embeds = output.text_embeds;
      if (!embeds) throw new Error(`text tower in ${folder} has no text_embeds output (expected a CLIPTextModelWithProjection export)`);
      const dim = embeds.dims.at(-1)!;
      return texts.map((_, i) => Float32Array.from(Array.prototype.slice.call(embeds.data, i * dim, (i + 1) * dim) as number[]));
    },
    async dispose() {
      await model.dispose();
      const tower = await textTower?.catch(() => null);
      await tower?.model.dispose();
    },
  };
}
