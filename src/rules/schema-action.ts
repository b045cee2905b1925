/**
 * A rule's run_schema action: a custom extraction schema filled for a stored file, whenever the
 * rule applies, and stored as its `custom_schema` extraction (where an upload's
 * custom_schema_id puts it). An image is filled as its pipeline would have (images/schema-run.ts:
 * findings, OCR, the vision endpoint when configured); a document or saved page from its text,
 * read line by line from its pages' elements ("Total: 1,250.00" is a key-value line); a video
 * from the text read in its keyframes. Documents never go to the vision endpoint: it reads images.
 */
import type { SqlClient } from "../db/sql-client.ts";
import type { CustomSchema } from "../custom-schemas/custom-schemas.ts";
import { tagsOf, type FileRow } from "../files/file.ts";
import type { ImageDeps } from "../images/deps.ts";
import type { Evidence } from "../images/schema-fill.ts";
import { fillAndStore, storedImageEvidence, type SchemaRunResult } from "../images/schema-run.ts";
import { textOf } from "./file-text.ts";

/** Lines read from a document: enough for any label a schema looks for, bounded for a 10,000-page book. */
const MAX_LINES = 20_000;

/** A document's lines as its pages' elements give them (key-value pairs, table rows, paragraphs); null when it has no pages. */
async function documentLines(sql: SqlClient, fileId: string): Promise<string[] | null> {
  const pages = await sql.all<{ elements: string }>("SELECT elements FROM document_pages WHERE file_id = ? ORDER BY page_number", [fileId]);
  if (!pages.length) return null;
  const lines: string[] = [];
  for (const page of pages) {
    for (const element of JSON.parse(page.elements) as { content?: unknown }[]) {
      if (typeof element.content === "string") lines.push(...element.content.split("\n"));
      if (lines.length >= MAX_LINES) return lines.slice(0, MAX_LINES);
    }
  }
  return lines;
}

export async function runSchemaOnFile(ctx: ImageDeps, file: FileRow, schema: CustomSchema): Promise<SchemaRunResult> {
  if (file.media_type === "image") {
    const { evidence, jpeg } = await storedImageEvidence(ctx, file);
    return fillAndStore(ctx, file, schema, evidence, jpeg);
  }
  const text = await textOf(ctx.files, file);
  const evidence: Evidence = {
    description: file.user_description ?? file.upload_description,
    tags: tagsOf(file),
    takenAt: file.content_created_at,
    objects: [],
    faces: null,
    ocrText: text,
    // Only documents have pages; a page or a video is read from its text.
    ocrLines: (await documentLines(ctx.sql, file.id)) ?? text.split("\n"),
    width: file.width,
    height: file.height,
    format: file.document_type ?? file.format,
  };
  return fillAndStore(ctx, file, schema, evidence, null);
}
