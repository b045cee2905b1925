/**
 * The File entity: the `files` row as the code reads it, the words for its media types and
 * states, and how a file is named by the API (a full UUID or its first 8 hex characters).
 * Writes to the row go through FileRepository (file-repository.ts), the one module that owns it.
 */
import { badRequest } from "../errors.ts";
import { UUID_PATTERN } from "../ids.ts";

/**
 * A file's media type names its kind (src/kinds/): any kind the composition root registers, so
 * the type is open; what a kind does with its files is asked of the registry, never switched on.
 */
export type MediaType = string;
/** The kinds of src/images, documents, video and links; src/app.ts checks its KINDS list against these. */
export const BUILTIN_MEDIA_TYPES = ["image", "document", "video", "link"] as const;
export type BuiltinMediaType = (typeof BUILTIN_MEDIA_TYPES)[number];
export const DOCUMENT_TYPES = ["pdf", "docx", "txt", "md"] as const;
export type DocumentType = (typeof DOCUMENT_TYPES)[number];

/** What a file's bytes are, judged by their content (ingest/detect.ts). */
export interface DetectedType {
  /** A registered kind whose files arrive as bytes. */
  mediaType: MediaType;
  /** Canonical MIME type from the content. */
  mime: string;
  /** Short format name: jpeg, png, pdf, docx, mp4, ... */
  format: string;
  documentType: DocumentType | null;
}

/** The file as a whole: `queued` at upload, then what its pipeline made of it (`stored` = no pipeline for its type). */
export type ProcessingStatus = "queued" | "processing" | "stored" | "completed" | "failed";
/** A link's crawl: `pending` until a worker takes it (and between retries), then `crawling`, then one of the outcomes. */
export type CrawlStatus = "pending" | "crawling" | "completed" | "failed" | "blocked";
/** One aspect's progress (variants, description, text extraction, embeddings, ...). */
export type AspectStatus = "pending" | "processing" | "completed" | "failed" | "skipped";

export interface FileRow {
  id: string;
  org_id: string;
  project_id: string;
  folder_id: string | null;
  media_type: MediaType;
  filename: string;
  created_at: string;
  updated_at: string;
  deleted_at: string | null;
  title: string | null;
  tags: string;
  size_bytes: number;
  content_type: string;
  format: string | null;
  document_type: string | null;
  sha256: string | null;
  blob_key: string | null;
  upload_method: string;
  session_id: string | null;
  storage_target: string;
  auto_describe: number;
  content_category: string;
  custom_schema_id: string | null;
  uploaded_by: string | null;
  processing_status: ProcessingStatus;
  processing_job_id: string | null;
  processing_error: string | null;
  processing_started_at: string | null;
  processing_completed_at: string | null;
  description_status: string | null;
  description_error: string | null;
  description_generated_at: string | null;
  user_description: string | null;
  upload_description: string | null;
  visible_text: string | null;
  source_url: string | null;
  content_created_at: string | null;
  width: number | null;
  height: number | null;
  reserved_credits: number;
  parent_file_id: string | null;
}

const PREFIX = /^[0-9a-f]{8}$/;

/** Accepts a full UUID or its first 8 hex characters (case-insensitive). */
export function parseFileRef(ref: string): { kind: "id" | "prefix"; value: string } {
  const value = ref.trim().toLowerCase();
  if (UUID_PATTERN.test(value)) return { kind: "id", value };
  if (PREFIX.test(value)) return { kind: "prefix", value };
  throw badRequest("file_id: must be a UUID or its first 8 hexadecimal characters");
}

export function tagsOf(row: Pick<FileRow, "tags">): string[] {
  return JSON.parse(row.tags) as string[];
}
