/**
 * Which text model embeds document chunks and search queries: the built-in one (use-lite-sif,
 * from npm, always there) unless MEDIABOX_TEXT_EMBEDDING_MODEL names a folder of the models
 * directory (MiniLM, bge, ... through transformers.js). A configured folder that is missing,
 * incomplete or refused by the models manifest does not leave search without vectors: the
 * built-in model stands in, and `fallbackReason` says why, until the folder becomes usable (it is
 * checked again on every unavailableReason() call, so installing it needs only the restart that
 * re-embeds the library with it).
 */
import type { SqlClient } from "../db/sql-client.ts";
import type { Database } from "bun:sqlite";
import type { ModelCheck } from "../models/model-verifier.ts";
import { type EmbedPurpose, TextEmbedder, type TextEmbedding, type TokenCounter } from "./text-embedder.ts";
import { BUILTIN_TEXT_MODEL, UseSifEmbedder } from "./use-sif-embedder.ts";

export { BUILTIN_TEXT_MODEL };

export interface TextModelOptions {
  modelsDir: string;
  /** Where the built-in model keeps its word vectors across restarts (none: memory only). */
  db?: Database;
  /** BUILTIN_TEXT_MODEL or a folder name under modelsDir. */
  model: string;
  check?: ModelCheck;
}

export function createTextEmbedding(options: TextModelOptions): TextEmbedding {
  const builtin = new UseSifEmbedder(options.db ?? null);
  if (options.model === BUILTIN_TEXT_MODEL) return builtin;
  return new FolderOrBuiltin(new TextEmbedder(options), builtin);
}

/**
 * The configured folder model while it is usable, else the built-in one. The choice is made by
 * unavailableReason() and kept until its next call, so a job that checks, then embeds and labels
 * its vectors with modelId sees one model throughout.
 */
export class FolderOrBuiltin implements TextEmbedding {
  private active: TextEmbedding;
  /** Why the configured folder model is not the one in use; null while it is. */
  fallbackReason: string | null = null;

  constructor(
    readonly configured: TextEmbedder,
    readonly builtin: TextEmbedding,
  ) {
    this.active = configured;
  }

  get modelId(): string {
    return this.active.modelId;
  }

  /** The configured folder's: its tokenizer sizes chunks even while the built-in model stands in. */
  get tokenizerFolder(): string {
    return this.configured.tokenizerFolder;
  }

  /** The configured model's tokenizer (its folder may hold the tokenizer even without weights). */
  tokenizer(): Promise<TokenCounter> {
    return this.configured.tokenizer();
  }

  chunkWindow(): Promise<number> {
    return this.configured.chunkWindow();
  }

  async unavailableReason(): Promise<string | null> {
    const why = await this.configured.unavailableReason();
    this.fallbackReason = why;
    this.active = why ? this.builtin : this.configured;
    return why ? this.builtin.unavailableReason() : null;
  }

  embed(texts: string[], purpose?: EmbedPurpose): Promise<Float32Array[]> {
    return this.active.embed(texts, purpose);
  }

  embedNow(texts: string[]): Float32Array[] | null {
    return this.active.embedNow?.(texts) ?? null;
  }

  dimension(): Promise<number> {
    return this.active.dimension();
  }

  async close(): Promise<void> {
    await Promise.all([this.configured.close(), this.builtin.close()]);
  }
}

/** Why the configured model is not in use (the built-in one stands in), or null. */
export function textModelFallbackReason(embedding: TextEmbedding): string | null {
  return embedding instanceof FolderOrBuiltin ? embedding.fallbackReason : null;
}

/** The built-in model of `embedding` (itself, or the one standing in for a folder model), if any. */
export function builtinTextModel(embedding: TextEmbedding): UseSifEmbedder | null {
  if (embedding instanceof UseSifEmbedder) return embedding;
  if (embedding instanceof FolderOrBuiltin && embedding.builtin instanceof UseSifEmbedder) return embedding.builtin;
  return null;
}

/**
 * Document chunks waiting for their vectors (new documents, or the library being re-embedded
 * after a model change), counted on the partial index of pending chunks: as cheap as the backlog is short.
 */
export async function pendingEmbeddingChunks(sql: SqlClient): Promise<number> {
  return (await sql.one<{ n: number }>("SELECT count(*) AS n FROM document_chunks WHERE embedding_status = 'pending'"))!.n;
}
