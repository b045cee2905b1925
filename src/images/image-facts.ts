/**
 * What rendering an image made of it (its variants' state and count, the BlurHash) and the model
 * of its image embedding, in the image kind's own table `image_facts` (this module is its only
 * writer). A video's poster is rendered and embedded by the same code, so videos have a row too.
 * Changes a person would see move the file's updated_at, as when these were columns of its row.
 * Writers take a `SqlClient`: a port transaction's `tx` (the pipeline's, with the row's part) or
 * the group-commit client; a change and its updated_at commit together either way.
 */
import { atomically, type SqlClient } from "../db/sql-client.ts";
import type { FileRepository } from "../files/file-repository.ts";
import { factsRowsOf, setFacts } from "../files/facts-table.ts";

export interface StoredImageFacts {
  /** pending at upload, processing, completed or failed; null: the file is rendered by no pipeline. */
  variantStatus: string | null;
  variantCount: number;
  blurHash: string | null;
  /** The model whose vector the file has in the image space (null: not embedded yet). */
  embeddingModel: string | null;
}

interface ImageFactsRow {
  variant_status: string | null;
  variant_count: number;
  blur_hash: string | null;
  embedding_model: string | null;
}

const NONE: StoredImageFacts = { variantStatus: null, variantCount: 0, blurHash: null, embeddingModel: null };

const IMAGE_FACTS_COLUMNS = "variant_status, variant_count, blur_hash, embedding_model";

function toFacts(row: ImageFactsRow | null | undefined): StoredImageFacts {
  if (!row) return NONE;
  return { variantStatus: row.variant_status, variantCount: row.variant_count, blurHash: row.blur_hash, embeddingModel: row.embedding_model };
}

/** A file without a row (a document, a link, an image not recorded yet) has none of these facts. */
export async function imageFactsOf(sql: SqlClient, fileId: string): Promise<StoredImageFacts> {
  return toFacts(await sql.one<ImageFactsRow>(`SELECT ${IMAGE_FACTS_COLUMNS} FROM image_facts WHERE file_id = ?`, [fileId]));
}

/** The facts of several files in one read (a listing page's), by file id; every id is in the map. */
export async function imageFactsOfFiles(sql: SqlClient, fileIds: readonly string[]): Promise<Map<string, StoredImageFacts>> {
  const rows = await factsRowsOf<ImageFactsRow>(sql, "image_facts", IMAGE_FACTS_COLUMNS, fileIds);
  return new Map(fileIds.map((id) => [id, toFacts(rows.get(id))]));
}

/** The model of the file's vector in the image space (null: not embedded yet), read through the port (either database). */
export async function embeddingModelOf(sql: SqlClient, fileId: string): Promise<string | null> {
  return (await sql.one<{ embedding_model: string | null }>("SELECT embedding_model FROM image_facts WHERE file_id = ?", [fileId]))?.embedding_model ?? null;
}

/** Sets some of the file's facts (the row is made by the first write). */
function upsert(sql: SqlClient, fileId: string, set: Partial<ImageFactsRow>): Promise<void> {
  return setFacts(sql, "image_facts", fileId, set as Record<string, string | number | null>);
}

/** The file's variants are still to be rendered (at upload, and when its processing is queued again), in the caller's transaction. */
export function variantsPending(sql: SqlClient, fileId: string): Promise<void> {
  return upsert(sql, fileId, { variant_status: "pending" });
}

/** With the file's updated_at (`files` tells it), in the caller's transaction or one of its own. */
export function variantsStarted(sql: SqlClient, files: FileRepository, fileId: string): Promise<void> {
  return atomically(sql, async (tx) => {
    await upsert(tx, fileId, { variant_status: "processing" });
    await files.withTx(tx).touched(fileId);
  });
}

/** Written with the row's part of the failure (FileRepository.imageNotRendered), which moves updated_at. */
export function variantsFailed(sql: SqlClient, fileId: string): Promise<void> {
  return upsert(sql, fileId, { variant_status: "failed" });
}

/** Written with the row's part of the rendering (FileRepository.imageRendered, a poster's touched), which moves updated_at. */
export function variantsRendered(sql: SqlClient, fileId: string, rendered: { count: number; blurHash: string }): Promise<void> {
  return upsert(sql, fileId, { variant_status: "completed", variant_count: rendered.count, blur_hash: rendered.blurHash });
}

/** Written with the vector (in the transaction that upserts it into the image space). */
export function imageEmbedded(sql: SqlClient, fileId: string, model: string): Promise<void> {
  return upsert(sql, fileId, { embedding_model: model });
}

/**
 * Live images whose variants are rendered but whose vector is missing or of another model than
 * `model`. Files whose processing is queued or running (here or in another process sharing the
 * database) are left out: their pipeline's embedding stage stores the configured model's vector.
 */
export function imagesToEmbed(sql: SqlClient, model: string): Promise<{ id: string; org_id: string }[]> {
  return sql.all<{ id: string; org_id: string }>(
    `SELECT f.id, f.org_id FROM files f JOIN image_facts i ON i.file_id = f.id
     WHERE f.media_type = 'image' AND f.deleted_at IS NULL AND i.variant_status = 'completed'
       AND f.processing_status NOT IN ('queued', 'processing')
       AND (i.embedding_model IS NULL OR i.embedding_model != ?)`,
    [model],
  );
}
