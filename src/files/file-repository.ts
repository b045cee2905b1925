/**
 * The one module that writes the `files` table. Every change to a file's row is a named
 * transition here (created, edited, deleted, variants done, text extracted, ...), so what can
 * happen to a file reads in one place and no other module holds SQL that writes the row (a test
 * checks). Reads that other modules need by id or by the API's file reference are here too;
 * listings and search keep their own read queries.
 *
 * It runs on the data-access port (docs/scale-out.md). Methods run single statements through the
 * client it was built over (the appliance's: single writes join the turn's group commit); callers
 * that must commit several together (a file and its processing job, a stage's results and its
 * state) run them through `withTx(tx)`, the same methods inside their transaction.
 */
import { atomically, type SqlClient } from "../db/sql-client.ts";
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
    private readonly db: SqlClient,
    private readonly clock: Clock,
  ) {}

  /** The same methods, their statements run inside the caller's transaction `tx`. */
  withTx(tx: SqlClient): FileRepository {
    return new FileRepository(tx, this.clock);
  }

  private now(): string {
    return isoAt(this.clock.now());
  }

  // ---- reads --------------------------------------------------------------------------------

  /** A file row by its full id, deleted or not (jobs and routes re-reading a row they already resolved). */
  byId(id: string): Promise<FileRow | null> {
    return this.db.one<FileRow>("SELECT * FROM files WHERE id = ?", [id]);
  }

  /** A file of the organization by id, deleted or not, or null (batch operations report each id). */
  ofOrg(orgId: string, id: string): Promise<FileRow | null> {
    return this.db.one<FileRow>("SELECT * FROM files WHERE id = ? AND org_id = ?", [id, orgId]);
  }

  /**
   * The organization's file named by `ref` (a UUID or its 8-character prefix). A prefix matching
   * several files is 409 (the caller must use more of the id); deleted files are 404 unless
   * `includeDeleted`.
   */
  async find(orgId: string, ref: string, options: { includeDeleted?: boolean } = {}): Promise<FileRow> {
    const parsed = parseFileRef(ref);
    const visible = options.includeDeleted ? "" : "AND deleted_at IS NULL";
    if (parsed.kind === "id") {
      const row = await this.db.one<FileRow>(`SELECT * FROM files WHERE id = ? AND org_id = ? ${visible}`, [parsed.value, orgId]);
      if (!row) throw new ApiError("FILE_NOT_FOUND", `file ${ref} not found`);
      return row;
    }
    // A range over the primary key, so a prefix lookup is an index seek.
    const rows = await this.db.all<FileRow>(`SELECT * FROM files WHERE id >= ? AND id < ? AND org_id = ? ${visible} LIMIT 2`, [parsed.value, `${parsed.value}g`, orgId]);
    if (rows.length === 0) throw new ApiError("FILE_NOT_FOUND", `no file id starts with ${parsed.value}`);
    if (rows.length > 1) throw new ApiError("FILE_ID_AMBIGUOUS", `more than one file id starts with ${parsed.value}; use the full id`);
    return rows[0]!;
  }

  /** find() for endpoints that only make sense for some media types (spec: 400 for the others). */
  async findOfType(orgId: string, ref: string, mediaType: MediaType | MediaType[]): Promise<FileRow> {
    const row = await this.find(orgId, ref);
    const types = Array.isArray(mediaType) ? mediaType : [mediaType];
    if (!types.includes(row.media_type)) {
      throw new ApiError("WRONG_MEDIA_TYPE", `file ${row.id} is a ${row.media_type}; this endpoint is for ${types.map((t) => `${t}s`).join(" and ")}`);
    }
    return row;
  }

  /** The organization's oldest live file with this content, if any (skip_duplicates). */
  findDuplicate(orgId: string, sha256: string): Promise<{ id: string; filename: string } | null> {
    return this.db.one<{ id: string; filename: string }>(
      "SELECT id, filename FROM files WHERE org_id = ? AND sha256 = ? AND deleted_at IS NULL ORDER BY created_at LIMIT 1",
      [orgId, sha256],
    );
  }

  async exists(id: string): Promise<boolean> {
    return (await this.db.one("SELECT 1 AS one FROM files WHERE id = ?", [id])) !== null;
  }

  /** Files deleted at or before `cutoff`, oldest first, for the purge. */
  deletedBefore(cutoff: string, limit: number): Promise<{ id: string; blob_key: string | null }[]> {
    return this.db.all<{ id: string; blob_key: string | null }>("SELECT id, blob_key FROM files WHERE deleted_at IS NOT NULL AND deleted_at <= ? LIMIT ?", [cutoff, limit]);
  }

  // ---- life of a file ---------------------------------------------------------------------

  /** Records a stored file, `queued` for its processing job (enqueued in the same transaction). */
  async create(file: NewFileRecord): Promise<void> {
    const at = this.now();
    const { type } = file;
    await this.db.run(
      `INSERT INTO files (id, org_id, project_id, folder_id, media_type, filename, created_at, updated_at,
         title, tags, size_bytes, content_type, format, document_type, sha256, blob_key, upload_method, session_id,
         storage_target, auto_describe, content_category, custom_schema_id, uploaded_by, processing_status, processing_job_id,
         description_status, description_error, reserved_credits)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'queued', ?, ?, ?, ?)`,
      [
        file.id, file.orgId, file.projectId, file.folderId, type.mediaType, file.filename, at, at,
        file.title, JSON.stringify(file.tags), file.size, type.mime, type.format, type.documentType, file.sha256, file.blobKey,
        file.uploadMethod, file.sessionId, file.storageTarget, file.autoDescribe ? 1 : 0, file.contentCategory, file.customSchemaId,
        file.uploadedBy,
        file.processingJobId,
        ...initialStates(file.description),
      ],
    );
  }

  /** Records a placeholder: `queued`, without bytes (see NewPlaceholder). */
  async createPlaceholder(file: NewPlaceholder): Promise<void> {
    const at = this.now();
    await this.db.run(
      `INSERT INTO files (id, org_id, project_id, folder_id, media_type, filename, created_at, updated_at, tags, size_bytes,
         content_type, uploaded_by, source_url, processing_status)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'queued')`,
      [file.id, file.orgId, file.projectId, file.folderId, file.mediaType, file.filename, at, at, JSON.stringify(file.tags), file.size,
        file.contentType, file.uploadedBy, file.sourceUrl],
    );
  }

  /** True while the file is a placeholder whose bytes have not been stored. */
  async isPlaceholder(id: string): Promise<boolean> {
    return (await this.db.one("SELECT 1 AS one FROM files WHERE id = ? AND blob_key IS NULL AND processing_status = 'queued'", [id])) !== null;
  }

  /**
   * The placeholder's bytes are stored: it becomes a file like any upload's, `queued` for its
   * processing job, with what detection found (the media type may differ from the guess).
   */
  async placeholderFilled(file: NewFileRecord): Promise<void> {
    const { type } = file;
    await this.db.run(
      `UPDATE files SET media_type = ?, filename = ?, updated_at = ?, title = ?, tags = ?, size_bytes = ?, content_type = ?, format = ?,
         document_type = ?, sha256 = ?, blob_key = ?, storage_target = ?, auto_describe = ?, content_category = ?, custom_schema_id = ?,
         processing_status = 'queued', processing_job_id = ?, processing_error = NULL,
         description_status = ?, description_error = ?, reserved_credits = ?
       WHERE id = ? AND blob_key IS NULL`,
      [
        type.mediaType, file.filename, this.now(), file.title, JSON.stringify(file.tags), file.size, type.mime, type.format, type.documentType,
        file.sha256, file.blobKey, file.storageTarget, file.autoDescribe ? 1 : 0, file.contentCategory, file.customSchemaId, file.processingJobId,
        ...initialStates(file.description),
        file.id,
      ],
    );
  }

  /** The placeholder's bytes will never come (download failed, unsafe file, import cancelled). */
  async placeholderFailed(id: string, why: string): Promise<void> {
    const at = this.now();
    await this.db.run(
      `UPDATE files SET processing_status = 'failed', processing_error = ?, processing_completed_at = ?, last_error_at = ?, updated_at = ?
       WHERE id = ? AND blob_key IS NULL`,
      [forTenants(why), at, at, at, id],
    );
  }

  /** Applies a user's metadata edit (values already validated). */
  async edit(id: string, edit: FileEdit): Promise<void> {
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
    await this.db.run(`UPDATE files SET ${sets.join(", ")}, updated_at = ? WHERE id = ?`, [...params, this.now(), id]);
  }

  /** Puts a file into a project, at its top level (folderId null) or inside one of its folders. */
  async place(id: string, projectId: string, folderId: string | null): Promise<void> {
    await this.db.run("UPDATE files SET project_id = ?, folder_id = ?, updated_at = ? WHERE id = ?", [projectId, folderId, this.now(), id]);
  }

  /** Soft delete; returns the deletion time (a file already deleted keeps its first one). */
  async softDelete(id: string): Promise<string> {
    const at = this.now();
    await this.db.run("UPDATE files SET deleted_at = ?, updated_at = ? WHERE id = ? AND deleted_at IS NULL", [at, at, id]);
    return at;
  }

  async restore(id: string): Promise<string> {
    const at = this.now();
    await this.db.run("UPDATE files SET deleted_at = NULL, updated_at = ? WHERE id = ?", [at, id]);
    return at;
  }

  /** Removes the row of a file deleted at or before `cutoff` (its blobs and derived rows went first). */
  async purge(id: string, cutoff: string): Promise<void> {
    await this.db.run("DELETE FROM files WHERE id = ? AND deleted_at IS NOT NULL AND deleted_at <= ?", [id, cutoff]);
  }

  // ---- processing as a whole --------------------------------------------------------------

  /** The processing job's attempt started; `attempt` > 1 counts as a retry. */
  async processingStarted(id: string, attempt: number): Promise<void> {
    const at = this.now();
    await this.db.run(
      "UPDATE files SET processing_status = 'processing', processing_error = NULL, processing_started_at = ?, retry_count = ?, updated_at = ? WHERE id = ?",
      [at, Math.max(0, attempt - 1), at, id],
    );
  }

  /**
   * The processing job's outcome: `stored` (no pipeline for the type), `completed` (with the
   * warnings of stages that failed), `failed` (for good), or back to `processing` with the error of
   * an attempt that will be retried.
   */
  async processingEnded(id: string, status: Exclude<ProcessingStatus, "queued">, error: string | null): Promise<void> {
    const at = this.now();
    const terminal = status !== "processing";
    // The times kept when the value bound is null: one spelling on both engines (PostgreSQL
    // cannot type a bare `? IS NULL`).
    await this.db.run(
      `UPDATE files SET processing_status = ?, processing_error = ?, updated_at = ?,
         processing_completed_at = coalesce(?, processing_completed_at), last_error_at = coalesce(?, last_error_at)
       WHERE id = ?`,
      [status, forTenantsOrNull(error), at, terminal ? at : null, error === null ? null : at, id],
    );
  }

  /**
   * The file is queued again for a new processing job `jobId` (POST /files/{id}/reprocess): its
   * failure is cleared and the states its pipeline sets again go back to where an upload leaves
   * them (the kind's own states are the kind's: MediaKind.queued), so the job runs it as it runs a new file. Returns false, changing nothing, for a file
   * without stored bytes or while a processing job is queued or running, unless `orphaned`: that
   * job ended (cancelled) without finishing the file, so nothing would ever move it on.
   * Descriptions are left as they are: a new one would spend credits nobody asked for.
   */
  async reprocessQueued(id: string, jobId: string, orphaned: boolean): Promise<boolean> {
    const changed = await this.db.run(
      `UPDATE files SET processing_status = 'queued', processing_job_id = ?, processing_error = NULL, processing_started_at = NULL,
         processing_completed_at = NULL, retry_count = 0, updated_at = ?
       WHERE id = ? AND blob_key IS NOT NULL AND (processing_status NOT IN ('queued', 'processing') OR ? = 1)`,
      [jobId, this.now(), id, orphaned ? 1 : 0],
    );
    return changed.changes > 0;
  }

  // ---- images -------------------------------------------------------------------------------
  // (the variants' state, count and BlurHash are the image kind's: images/image-facts.ts)

  /** The image did not render; a capture date read from its metadata is kept all the same. */
  async imageNotRendered(id: string, why: string, takenAt: string | null = null): Promise<void> {
    await this.db.run(
      "UPDATE files SET processing_error = ?, content_created_at = coalesce(content_created_at, ?), updated_at = ? WHERE id = ?",
      [forTenants(why), takenAt, this.now(), id],
    );
  }

  /** What rendering the image found of its content: its size, its format, its capture date. */
  async imageRendered(id: string, rendered: RenderedImageContent): Promise<void> {
    await this.db.run(
      "UPDATE files SET width = ?, height = ?, format = ?, content_created_at = coalesce(content_created_at, ?), updated_at = ? WHERE id = ?",
      [rendered.width, rendered.height, rendered.format, rendered.takenAt, this.now(), id],
    );
  }

  // ---- videos --------------------------------------------------------------------------------

  /** The video was probed (its stream facts and analysis state are the video kind's). Width and height are as displayed. */
  async videoProbed(id: string, video: ProbedVideo): Promise<void> {
    await this.db.run(
      "UPDATE files SET width = ?, height = ?, content_created_at = coalesce(content_created_at, ?), updated_at = ? WHERE id = ?",
      [video.width, video.height, video.createdAt, this.now(), id],
    );
  }

  /** The reserved AI-description credits were given back (the description did not happen). */
  async creditsReleased(id: string): Promise<void> {
    await this.db.run("UPDATE files SET reserved_credits = 0 WHERE id = ?", [id]);
  }

  /** Text read in the media (OCR of an image or of a video's keyframes). */
  async visibleTextFound(id: string, text: string | null): Promise<void> {
    await this.db.run("UPDATE files SET visible_text = ?, updated_at = ? WHERE id = ?", [text, this.now(), id]);
  }

  async descriptionStarted(id: string): Promise<void> {
    await this.db.run("UPDATE files SET description_status = 'processing', updated_at = ? WHERE id = ?", [this.now(), id]);
  }

  /** The AI description, the tags after the AI's were merged in, and the content category. */
  async described(id: string, description: { text: string; tags: string[]; category: string }): Promise<void> {
    const at = this.now();
    await this.db.run(
      `UPDATE files SET upload_description = ?, tags = ?, content_category = ?, description_status = 'completed',
         description_error = NULL, description_generated_at = ?, updated_at = ? WHERE id = ?`,
      [description.text, JSON.stringify(description.tags), description.category, at, at, id],
    );
  }

  /** No description will be made (e.g. the video is over the analysis limits); why says so. */
  async descriptionSkipped(id: string, why: string): Promise<void> {
    await this.db.run("UPDATE files SET description_status = 'skipped', description_error = ?, updated_at = ? WHERE id = ?", [forTenants(why), this.now(), id]);
  }

  async descriptionFailed(id: string, why: string): Promise<void> {
    await this.db.run("UPDATE files SET description_status = 'failed', description_error = ?, updated_at = ? WHERE id = ?", [forTenants(why), this.now(), id]);
  }

  // ---- documents ----------------------------------------------------------------------------

  // (the states of its reading and of its chunks are the document kind's: documents/document-facts.ts)

  /** The document's text could not be read (this time, or for good): why. */
  async textNotExtracted(id: string, why: string): Promise<void> {
    await this.db.run("UPDATE files SET processing_error = ?, updated_at = ? WHERE id = ?", [forTenants(why), this.now(), id]);
  }

  /**
   * The document's text is stored, with its machine-made summary when there is one: the summary
   * becomes the AI description and the tags are `summary.tags` (the user's with the suggested ones
   * merged in after them). One statement of the row either way: every write of these columns
   * re-indexes the row's search entry, whole text included (~1 ms for a 1 KB note). The whole text
   * is kept apart from the row (see extractedText). The two statements commit together: in the
   * caller's transaction (withTx: the pipeline's, with the kind's state), else in their own.
   */
  textExtracted(id: string, extracted: DocumentText, summary: DocumentSummary | null = null): Promise<void> {
    return atomically(this.db, async (tx) => {
      await tx.run("INSERT INTO document_texts (file_id, text) VALUES (?, ?) ON CONFLICT (file_id) DO UPDATE SET text = excluded.text", [id, extracted.text]);
      if (!summary) {
        await tx.run("UPDATE files SET visible_text = ?, updated_at = ? WHERE id = ?", [extracted.searchText, this.now(), id]);
        return;
      }
      await tx.run(
        "UPDATE files SET visible_text = ?, updated_at = ?, upload_description = coalesce(?, upload_description) WHERE id = ?",
        [extracted.searchText, this.now(), summary.text, id],
      );
    });
  }

  /**
   * A document's (or a link's article) whole extracted text, or null before there is one. Kept in
   * its own table rather than the file's row, which every lookup reads and every status update
   * rewrites whole (migration 018).
   */
  async extractedText(id: string): Promise<string | null> {
    return (await this.db.one<{ text: string }>("SELECT text FROM document_texts WHERE file_id = ?", [id]))?.text ?? null;
  }

  /** No text model can embed now; the reason joins the file's processing error unless one is there. */
  async embeddingsWait(id: string, why: string): Promise<void> {
    await this.db.run("UPDATE files SET processing_error = coalesce(processing_error, ?), updated_at = ? WHERE id = ?", [forTenants(`embeddings pending: ${why}`), this.now(), id]);
  }

  // ---- links ---------------------------------------------------------------------------------

  /** Records a link `queued` for its crawl (the processing job and its crawl, links/link-crawls.ts, in the same transaction). */
  async createLink(link: NewLinkRecord): Promise<void> {
    const at = this.now();
    await this.db.run(
      // upload_method's CHECK knows only the two upload paths; a link took neither, and the
      // field is never shown for links.
      `INSERT INTO files (id, org_id, project_id, folder_id, media_type, filename, created_at, updated_at, title, tags,
         size_bytes, content_type, upload_method, storage_target, auto_describe, uploaded_by, processing_status, processing_job_id, source_url)
       VALUES (?, ?, ?, ?, 'link', ?, ?, ?, ?, ?, 0, 'text/html', 'streaming', 'default', 0, ?, 'queued', ?, ?)`,
      [
        link.id, link.orgId, link.projectId, link.folderId, link.filename, at, at, link.title, JSON.stringify(link.tags),
        link.uploadedBy, link.processingJobId, link.url,
      ],
    );
  }

  /** A link's crawl was queued again (links/link-crawls.ts said it may be) with `jobId`. */
  async recrawlQueued(id: string, jobId: string): Promise<void> {
    await this.db.run("UPDATE files SET processing_status = 'queued', processing_job_id = ?, processing_error = NULL, updated_at = ? WHERE id = ?", [jobId, this.now(), id]);
  }

  /** What the page said of itself, as the file's common fields. */
  async pageRead(id: string, page: PageRead): Promise<void> {
    await this.db.run(
      `UPDATE files SET title = coalesce(title, ?), upload_description = ?, content_created_at = coalesce(?, content_created_at),
         size_bytes = ?, updated_at = ? WHERE id = ?`,
      [page.title, page.description, page.publishedAt, page.byteLength, this.now(), id],
    );
  }

  /** Something the file's kind keeps of its own changed (its crawl, ...): the file's updated_at moves. */
  async touched(id: string): Promise<void> {
    await this.db.run("UPDATE files SET updated_at = ? WHERE id = ?", [this.now(), id]);
  }

  /** An image file stored from a link's page: the link it came from and its address there. */
  async extractedFrom(imageId: string, linkId: string, sourceUrl: string): Promise<void> {
    await this.db.run("UPDATE files SET parent_file_id = ?, source_url = ? WHERE id = ?", [linkId, sourceUrl, imageId]);
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
