/**
 * transformers.js set up for local model folders only, for every loader (text embeddings, CLIP,
 * captioning): remote loading disabled, the models directory as the local path, and its
 * `env.fetch` replaced by one that refuses http(s) URLs, so even a library code path that ignores
 * those settings cannot reach the network. Process-wide settings; idempotent.
 */
import path from "node:path";

export type Transformers = typeof import("@huggingface/transformers");

let fetchGuarded = false;

export async function offlineTransformers(modelsDir: string): Promise<Transformers> {
  const lib = await import("@huggingface/transformers");
  const { env } = lib;
  env.allowRemoteModels = false;
  env.allowLocalModels = true;
  env.localModelPath = path.resolve(modelsDir);
  if (!fetchGuarded) {
    // transformers.js captured globalThis.fetch at import and uses it only for remote files (local
    // ones are read from disk). Refuse anything that would leave the machine; other URLs go to
    // the current globalThis.fetch.
    fetchGuarded = true;
    env.fetch = (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
      const url = typeof input === "string" ? input : input instanceof URL ? input.href : input.url;
      if (/^\s*https?:/i.test(url)) {
        return Promise.reject(new Error(`model files load only from the models directory; refused to fetch ${url}`));
      }
      return globalThis.fetch(input, init);
    };
  }
  return lib;
}
