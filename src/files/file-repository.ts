/**
 * The one module that writes the `files` table. Every change to a file's row is a named
 * transition here (created, edited, deleted, variants done, text extracted, ...), so what can
 * happen to a file reads in one place and no other module holds SQL that writes the row (a test
 * checks). Reads that other modules need by id or by the API's file reference are here too;
 * listings and search keep their own read queries.
 *
 * Methods run single statements; callers that must commit several together (a file and its
 * processing job, a stage's results and its state) wrap them in their transaction.
 */
import type { Database } from "bun:sqlite";
import { isoAt, type Clock } from "../clock.ts";
import { ApiError, forTenants, forTenantsOrNull } from "../errors.ts";
import { parseFileRef, type DetectedType, type FileRow, type MediaType, type ProcessingStatus } from "./file.ts";

/** A file about to be recorded: its bytes are already in the store under `blobKey`. */
export interface NewFileRecord {
  id: string;
  orgId: string;
  projectId: string;
  folderId: string | null;
  filename: string;
  size: number;
  sha256: string;
  type: DetectedType;
  blobKey: string;
  uploadMethod: "streaming" | "presigned";
  sessionId: string | null;
  uploadedBy: string | null;
  processingJobId: string;
  title: string | null;
  tags: string[];
  storageTarget: string;
  autoDescribe: boolean;
  contentCategory: string;
  customSchemaId: string | null;
  /**
   * Images and videos: the AI description's reservation (pending, with the credits it holds) or
   * why there is none (skipped).
   */
  description: { status: "pending" | "skipped"; error: string | null; credits: number } | null;
}

/**
 * A file announced before its bytes arrive (a cloud import): the client gets its id at once; the
 * import fills it (`placeholderFilled`) or fails it (`placeholderFailed`). Until then the row has
 * no blob, no hash, and the media type its name and declared type suggest.
 */
export interface NewPlaceholder {
  id: string;
  orgId: string;
  projectId: string;
  folderId: string | null;
  filename: string;
  mediaType: Exclude<MediaType, "link">;
  contentType: string;
  size: number;
  tags: string[];
  uploadedBy: string | null;
  sourceUrl: string | null;
}

/** What the row keeps of a video's probe (its stream facts are the video kind's, video/video-facts.ts). */
export interface ProbedVideo {
  width: number | null;
  height: number | null;
  createdAt: string | null;
}

/** The metadata a user edits; undefined leaves a field as it is. */
export interface FileEdit {
  title?: string | null;
  tags?: string[];
  userDescription?: string | null;
}

export interface RenderedImageContent {
  width: number;
  height: number;
  format: string;
  /** Capture time from the image's metadata; kept only when the file has none yet. */
  takenAt: string | null;
}

export interface DocumentText {
  text: string;
  /** What the library's search index holds of the text. */
  searchText: string | null;
}

/** A machine-made summary of a document: the AI description (null: none). Its keyphrases are tag suggestions, kept apart. */
export interface DocumentSummary {
  text: string | null;
}

/** A link about to be recorded: only its URL so far; the crawl (its processing job) reads the page. */
export interface NewLinkRecord {
  id: string;
  orgId: string;
  projectId: string;
  folderId: string | null;
  /** The URL as validated (serialized), kept as the file's source_url. */
  url: string;
  filename: string;
  title: string | null;
  tags: string[];
  uploadedBy: string | null;
  processingJobId: string;
}

/** What a crawl read from the page itself. */
export interface PageRead {
  /** Becomes the title only when the file has none (a title the user gave wins). */
  title: string | null;
  description: string | null;
  publishedAt: string | null;
  byteLength: number;
}

export class FileRepository {
  constructor(
    private readonly db: Database,
    private readonly clock: Clock,
  ) {}

  private now(): string {
    return isoAt(this.clock.now());
  }

  // ---- reads --------------------------------------------------------------------------------

  /** A file row by its full id, deleted or not (jobs and routes re-reading a row they already resolved). */
  byId(id: string): FileRow | null {
    return this.db.query<FileRow, [string]>("SELECT * FROM files WHERE id = ?").get(id);
  }

  /** A file of the organization by id, deleted or not, or null (batch operations report each id). */
  ofOrg(orgId: string, id: string): FileRow | null {
    return this.db.query<FileRow, [string, string]>("SELECT * FROM files WHERE id = ? AND org_id = ?").get(id, orgId);
  }

  /**
   * The organization's file named by `ref` (a UUID or its 8-character prefix). A prefix matching
   * several files is 409 (the caller must use more of the id); deleted files are 404 unless
   * `includeDeleted`.
   */
  find(orgId: string, ref: string, options: { includeDeleted?: boolean } = {}): FileRow {
    const parsed = parseFileRef(ref);
    const visible = options.includeDeleted ? "" : "AND deleted_at IS NULL";
    if (parsed.kind === "id") {
      const row = this.db.query<FileRow, [string, string]>(`SELECT * FROM files WHERE id = ? AND org_id = ? ${visible}`).get(parsed.value, orgId);
      if (!row) throw new ApiError("FILE_NOT_FOUND", `file ${ref} not found`);
      return row;
    }
    // A range over the primary key, so a prefix lookup is an index seek.
    const rows = this.db
      .query<FileRow, [string, string, string]>(`SELECT * FROM files WHERE id >= ? AND id < ? AND org_id = ? ${visible} LIMIT 2`)
      .all(parsed.value, `${parsed.value}g`, orgId);
    if (rows.length === 0) throw new ApiError("FILE_NOT_FOUND", `no file id starts with ${parsed.value}`);
    if (rows.length > 1) throw new ApiError("FILE_ID_AMBIGUOUS", `more than one file id starts with ${parsed.value}; use the full id`);
    return rows[0]!;
  }

  /** find() for endpoints that only make sense for some media types (spec: 400 for the others). */
  findOfType(orgId: string, ref: string, mediaType: MediaType | MediaType[]): FileRow {
    const row = this.find(orgId, ref);
    const types = Array.isArray(mediaType) ? mediaType : [mediaType];
    if (!types.includes(row.media_type)) {
      throw new ApiError("WRONG_MEDIA_TYPE", `file ${row.id} is a ${row.media_type}; this endpoint is for ${types.map((t) => `${t}s`).join(" and ")}`);
    }
    return row;
  }

  /** The organization's oldest live file with this content, if any (skip_duplicates). */
  findDuplicate(orgId: string, sha256: string): { id: string; filename: string } | null {
    return (
      this.db
        .query<{ id: string; filename: string }, [string, string]>(
          "SELECT id, filename FROM files WHERE org_id = ? AND sha256 = ? AND deleted_at IS NULL ORDER BY created_at LIMIT 1",
        )
        .get(orgId, sha256) ?? null
    );
  }

  exists(id: string): boolean {
    return this.db.query("SELECT 1 FROM files WHERE id = ?").get(id) !== null;
  }

  /** Files deleted at or before `cutoff`, oldest first, for the purge. */
  deletedBefore(cutoff: string, limit: number): { id: string; blob_key: string | null }[] {
    return this.db
      .query<{ id: string; blob_key: string | null }, [string, number]>("SELECT id, blob_key FROM files WHERE deleted_at IS NOT NULL AND deleted_at <= ? LIMIT ?")
      .all(cutoff, limit);
  }

  // ---- life of a file ---------------------------------------------------------------------

  /** Records a stored file, `queued` for its processing job (enqueued in the same transaction). */
  create(file: NewFileRecord): void {
    const at = this.now();
    const { type } = file;
    this.db
      .query(
        `INSERT INTO files (id, org_id, project_id, folder_id, media_type, filename, created_at, updated_at,
           title, tags, size_bytes, content_type, format, document_type, sha256, blob_key, upload_method, session_id,
           storage_target, auto_describe, content_category, custom_schema_id, uploaded_by, processing_status, processing_job_id,
           description_status, description_error, reserved_credits)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'queued', ?, ?, ?, ?)`,
      )
      .run(
        file.id, file.orgId, file.projectId, file.folderId, type.mediaType, file.filename, at, at,
        file.title, JSON.stringify(file.tags), file.size, type.mime, type.format, type.documentType, file.sha256, file.blobKey,
        file.uploadMethod, file.sessionId, file.storageTarget, file.autoDescribe ? 1 : 0, file.contentCategory, file.customSchemaId,
        file.uploadedBy,
        file.processingJobId,
        ...initialStates(file.description),
      );
  }

  /** Records a placeholder: `queued`, without bytes (see NewPlaceholder). */
  createPlaceholder(file: NewPlaceholder): void {
    const at = this.now();
    this.db
      .query(
        `INSERT INTO files (id, org_id, project_id, folder_id, media_type, filename, created_at, updated_at, tags, size_bytes,
           content_type, uploaded_by, source_url, processing_status)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'queued')`,
      )
      .run(file.id, file.orgId, file.projectId, file.folderId, file.mediaType, file.filename, at, at, JSON.stringify(file.tags), file.size,
        file.contentType, file.uploadedBy, file.sourceUrl);
  }

  /** True while the file is a placeholder whose bytes have not been stored. */
  isPlaceholder(id: string): boolean {
    return this.db.query("SELECT 1 FROM files WHERE id = ? AND blob_key IS NULL AND processing_status = 'queued'").get(id) !== null;
  }

  /**
   * The placeholder's bytes are stored: it becomes a file like any upload's, `queued` for its
   * processing job, with what detection found (the media type may differ from the guess).
   */
  placeholderFilled(file: NewFileRecord): void {
    const { type } = file;
    this.db
      .query(
        `UPDATE files SET media_type = ?, filename = ?, updated_at = ?, title = ?, tags = ?, size_bytes = ?, content_type = ?, format = ?,
           document_type = ?, sha256 = ?, blob_key = ?, storage_target = ?, auto_describe = ?, content_category = ?, custom_schema_id = ?,
           processing_status = 'queued', processing_job_id = ?, processing_error = NULL,
           description_status = ?, description_error = ?, reserved_credits = ?
         WHERE id = ? AND blob_key IS NULL`,
      )
      .run(
        type.mediaType, file.filename, this.now(), file.title, JSON.stringify(file.tags), file.size, type.mime, type.format, type.documentType,
        file.sha256, file.blobKey, file.storageTarget, file.autoDescribe ? 1 : 0, file.contentCategory, file.customSchemaId, file.processingJobId,
        ...initialStates(file.description),
        file.id,
      );
  }

  /** The placeholder's bytes will never come (download failed, unsafe file, import cancelled). */
  placeholderFailed(id: string, why: string): void {
    const at = this.now();
    this.db
      .query(
        `UPDATE files SET processing_status = 'failed', processing_error = ?, processing_completed_at = ?, last_error_at = ?, updated_at = ?
         WHERE id = ? AND blob_key IS NULL`,
      )
      .run(forTenants(why), at, at, at, id);
  }

  /** Applies a user's metadata edit (values already validated). */
  edit(id: string, edit: FileEdit): void {
    const sets: string[] = [];
    const params: (string | null)[] = [];
    if (edit.title !== undefined) {
      sets.push("title = ?");
      params.push(edit.title);
    }
    if (edit.tags !== undefined) {
      sets.push("tags = ?");
      params.push(JSON.stringify(edit.tags));
    }
    if (edit.userDescription !== undefined) {
      sets.push("user_description = ?");
      params.push(edit.userDescription);
    }
    if (!sets.length) return;
    this.db.query(`UPDATE files SET ${sets.join(", ")}, updated_at = ? WHERE id = ?`).run(...params, this.now(), id);
  }

  /** Puts a file into a project, at its top level (folderId null) or inside one of its folders. */
  place(id: string, projectId: string, folderId: string | null): void {
    this.db.query("UPDATE files SET project_id = ?, folder_id = ?, updated_at = ? WHERE id = ?").run(projectId, folderId, this.now(), id);
  }

  /** Soft delete; returns the deletion time (a file already deleted keeps its first one). */
  softDelete(id: string): string {
    const at = this.now();
    this.db.query("UPDATE files SET deleted_at = ?, updated_at = ? WHERE id = ? AND deleted_at IS NULL").run(at, at, id);
    return at;
  }

  restore(id: string): string {
    const at = this.now();
    this.db.query("UPDATE files SET deleted_at = NULL, updated_at = ? WHERE id = ?").run(at, id);
    return at;
  }

  /** Removes the row of a file deleted at or before `cutoff` (its blobs and derived rows went first). */
  purge(id: string, cutoff: string): void {
    this.db.query("DELETE FROM files WHERE id = ? AND deleted_at IS NOT NULL AND deleted_at <= ?").run(id, cutoff);
  }

  // ---- processing as a whole --------------------------------------------------------------

  /** The processing job's attempt started; `attempt` > 1 counts as a retry. */
  processingStarted(id: string, attempt: number): void {
    const at = this.now();
    this.db
      .query("UPDATE files SET processing_status = 'processing', processing_error = NULL, processing_started_at = ?, retry_count = ?, updated_at = ? WHERE id = ?")
      .run(at, Math.max(0, attempt - 1), at, id);
  }

  /**
   * The processing job's outcome: `stored` (no pipeline for the type), `completed` (with the
   * warnings of stages that failed), `failed` (for good), or back to `processing` with the error of
   * an attempt that will be retried.
   */
  processingEnded(id: string, status: Exclude<ProcessingStatus, "queued">, error: string | null): void {
    const at = this.now();
    const terminal = status !== "processing";
    this.db
      .query(
        `UPDATE files SET processing_status = ?, processing_error = ?, updated_at = ?,
           processing_completed_at = CASE WHEN ? THEN ? ELSE processing_completed_at END,
           last_error_at = CASE WHEN ? IS NULL THEN last_error_at ELSE ? END
         WHERE id = ?`,
      )
      .run(status, forTenantsOrNull(error), at, terminal ? 1 : 0, at, error, at, id);
  }

  /**
   * The file is queued again for a new processing job `jobId` (POST /files/{id}/reprocess): its
   * failure is cleared and the states its pipeline sets again go back to where an upload leaves
   * them (the kind's own states are the kind's: MediaKind.queued), so the job runs it as it runs a new file. Returns false, changing nothing, for a file
   * without stored bytes or while a processing job is queued or running, unless `orphaned`: that
   * job ended (cancelled) without finishing the file, so nothing would ever move it on.
   * Descriptions are left as they are: a new one would spend credits nobody asked for.
   */
  reprocessQueued(id: string, jobId: string, orphaned: boolean): boolean {
    const changed = this.db
      .query(
        `UPDATE files SET processing_status = 'queued', processing_job_id = ?, processing_error = NULL, processing_started_at = NULL,
           processing_completed_at = NULL, retry_count = 0, updated_at = ?
         WHERE id = ? AND blob_key IS NOT NULL AND (processing_status NOT IN ('queued', 'processing') OR ?)`,
      )
      .run(jobId, this.now(), id, orphaned ? 1 : 0);
    return changed.changes > 0;
  }

  // ---- images -------------------------------------------------------------------------------
  // (the variants' state, count and BlurHash are the image kind's: images/image-facts.ts)

  /** The image did not render; a capture date read from its metadata is kept all the same. */
  imageNotRendered(id: string, why: string, takenAt: string | null = null): void {
    this.db
      .query("UPDATE files SET processing_error = ?, content_created_at = coalesce(content_created_at, ?), updated_at = ? WHERE id = ?")
      .run(forTenants(why), takenAt, this.now(), id);
  }

  /** What rendering the image found of its content: its size, its format, its capture date. */
  imageRendered(id: string, rendered: RenderedImageContent): void {
    this.db
      .query("UPDATE files SET width = ?, height = ?, format = ?, content_created_at = coalesce(content_created_at, ?), updated_at = ? WHERE id = ?")
      .run(rendered.width, rendered.height, rendered.format, rendered.takenAt, this.now(), id);
  }

  // ---- videos --------------------------------------------------------------------------------

  /** The video was probed (its stream facts and analysis state are the video kind's). Width and height are as displayed. */
  videoProbed(id: string, video: ProbedVideo): void {
    this.db
      .query("UPDATE files SET width = ?, height = ?, content_created_at = coalesce(content_created_at, ?), updated_at = ? WHERE id = ?")
      .run(video.width, video.height, video.createdAt, this.now(), id);
  }

  /** The reserved AI-description credits were given back (the description did not happen). */
  creditsReleased(id: string): void {
    this.db.query("UPDATE files SET reserved_credits = 0 WHERE id = ?").run(id);
  }

  /** Text read in the media (OCR of an image or of a video's keyframes). */
  visibleTextFound(id: string, text: string | null): void {
    this.db.query("UPDATE files SET visible_text = ?, updated_at = ? WHERE id = ?").run(text, this.now(), id);
  }

  descriptionStarted(id: string): void {
    this.db.query("UPDATE files SET description_status = 'processing', updated_at = ? WHERE id = ?").run(this.now(), id);
  }

  /** The AI description, the tags after the AI's were merged in, and the content category. */
  described(id: string, description: { text: string; tags: string[]; category: string }): void {
    const at = this.now();
    this.db
      .query(
        `UPDATE files SET upload_description = ?, tags = ?, content_category = ?, description_status = 'completed',
           description_error = NULL, description_generated_at = ?, updated_at = ? WHERE id = ?`,
      )
      .run(description.text, JSON.stringify(description.tags), description.category, at, at, id);
  }

  /** No description will be made (e.g. the video is over the analysis limits); why says so. */
  descriptionSkipped(id: string, why: string): void {
    this.db.query("UPDATE files SET description_status = 'skipped', description_error = ?, updated_at = ? WHERE id = ?").run(forTenants(why), this.now(), id);
  }

  descriptionFailed(id: string, why: string): void {
    this.db.query("UPDATE files SET description_status = 'failed', description_error = ?, updated_at = ? WHERE id = ?").run(forTenants(why), this.now(), id);
  }

  // ---- documents ----------------------------------------------------------------------------

  // (the states of its reading and of its chunks are the document kind's: documents/document-facts.ts)

  /** The document's text could not be read (this time, or for good): why. */
  textNotExtracted(id: string, why: string): void {
    this.db.query("UPDATE files SET processing_error = ?, updated_at = ? WHERE id = ?").run(forTenants(why), this.now(), id);
  }

  /**
   * The document's text is stored, with its machine-made summary when there is one: the summary
   * becomes the AI description and the tags are `summary.tags` (the user's with the suggested ones
   * merged in after them). One statement of the row either way: every write of these columns
   * re-indexes the row's search entry, whole text included (~1 ms for a 1 KB note). The whole text
   * is kept apart from the row (see extractedText).
   */
  textExtracted(id: string, extracted: DocumentText, summary: DocumentSummary | null = null): void {
    this.db
      .query("INSERT INTO document_texts (file_id, text) VALUES (?, ?) ON CONFLICT (file_id) DO UPDATE SET text = excluded.text")
      .run(id, extracted.text);
    if (!summary) {
      this.db.query("UPDATE files SET visible_text = ?, updated_at = ? WHERE id = ?").run(extracted.searchText, this.now(), id);
      return;
    }
    this.db
      .query("UPDATE files SET visible_text = ?, updated_at = ?, upload_description = coalesce(?, upload_description) WHERE id = ?")
      .run(extracted.searchText, this.now(), summary.text, id);
  }

  /**
   * A document's (or a link's article) whole extracted text, or null before there is one. Kept in
   * its own table rather than the file's row, which every lookup reads and every status update
   * rewrites whole (migration 018).
   */
  extractedText(id: string): string | null {
    return this.db.query<{ text: string }, [string]>("SELECT text FROM document_texts WHERE file_id = ?").get(id)?.text ?? null;
  }

  /** No text model can embed now; the reason joins the file's processing error unless one is there. */
  embeddingsWait(id: string, why: string): void {
    this.db
      .query("UPDATE files SET processing_error = coalesce(processing_error, ?), updated_at = ? WHERE id = ?")
      .run(forTenants(`embeddings pending: ${why}`), this.now(), id);
  }

  // ---- links ---------------------------------------------------------------------------------

  /** Records a link `queued` for its crawl (the processing job and its crawl, links/link-crawls.ts, in the same transaction). */
  createLink(link: NewLinkRecord): void {
    const at = this.now();
    this.db
      .query(
        // upload_method's CHECK knows only the two upload paths; a link took neither, and the
        // field is never shown for links.
        `INSERT INTO files (id, org_id, project_id, folder_id, media_type, filename, created_at, updated_at, title, tags,
           size_bytes, content_type, upload_method, storage_target, auto_describe, uploaded_by, processing_status, processing_job_id, source_url)
         VALUES (?, ?, ?, ?, 'link', ?, ?, ?, ?, ?, 0, 'text/html', 'streaming', 'default', 0, ?, 'queued', ?, ?)`,
      )
      .run(
        link.id, link.orgId, link.projectId, link.folderId, link.filename, at, at, link.title, JSON.stringify(link.tags),
        link.uploadedBy, link.processingJobId, link.url,
      );
  }

  /** A link's crawl was queued again (links/link-crawls.ts said it may be) with `jobId`. */
  recrawlQueued(id: string, jobId: string): void {
    this.db
      .query("UPDATE files SET processing_status = 'queued', processing_job_id = ?, processing_error = NULL, updated_at = ? WHERE id = ?")
      .run(jobId, this.now(), id);
  }

  /** What the page said of itself, as the file's common fields. */
  pageRead(id: string, page: PageRead): void {
    this.db
      .query(
        `UPDATE files SET title = coalesce(title, ?), upload_description = ?, content_created_at = coalesce(?, content_created_at),
           size_bytes = ?, updated_at = ? WHERE id = ?`,
      )
      .run(page.title, page.description, page.publishedAt, page.byteLength, this.now(), id);
  }

  /** Something the file's kind keeps of its own changed (its crawl, ...): the file's updated_at moves. */
  touched(id: string): void {
    this.db.query("UPDATE files SET updated_at = ? WHERE id = ?").run(this.now(), id);
  }

  /** An image file stored from a link's page: the link it came from and its address there. */
  extractedFrom(imageId: string, linkId: string, sourceUrl: string): void {
    this.db.query("UPDATE files SET parent_file_id = ?, source_url = ? WHERE id = ?").run(linkId, sourceUrl, imageId);
  }
}

/**
 * The description a new file's pipeline has still to make (with the credits it reserved), in the
 * column order of the INSERT and UPDATE that record a file. What else its pipeline has to do is
 * its kind's (MediaKind.queued).
 */
function initialStates(description: { status: string; error: string | null; credits: number } | null | undefined): [string | null, string | null, number] {
  return [
    description?.status ?? null,
    description?.error ?? null,
    description?.status === "pending" ? description.credits : 0,
  ];
}
