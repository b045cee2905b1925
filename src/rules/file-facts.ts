/**
 * What conditions see of a file: its row's fields, its text (a document's or page's whole text,
 * else what OCR read in an image or a video's keyframes) and how it arrived. Read through the
 * caller's client or transaction, and only the facts the conditions name: a rule over tags reads
 * nothing beyond the row, and the model's predictions are computed only for a rule that asks;
 * each kind's own facts come from its `MediaKind.conditionFacts`, through the same client.
 */
import type { SqlClient } from "../db/sql-client.ts";
import type { FileRepository } from "../files/file-repository.ts";
import type { MediaKinds } from "../kinds/media-kind.ts";
import { tagsOf, type FileRow } from "../files/file.ts";
import type { FileFacts } from "./conditions.ts";
import { textOf } from "./file-text.ts";
import { facesOfFile } from "../people/people.ts";
import { predictionsFor } from "./auto-match.ts";

/** How the file arrived: a watched folder or a mail account (file_origins), a cloud import, a saved link (and its page images), else an upload. */
export async function sourceOf(sql: SqlClient, file: FileRow): Promise<string> {
  const origin = await sql.one<{ source: string }>("SELECT source FROM file_origins WHERE file_id = ?", [file.id]);
  if (origin) return origin.source;
  if (file.media_type === "link" || file.parent_file_id) return "link";
  const cloud = await sql.one("SELECT 1 FROM cloud_job_items i JOIN cloud_jobs j ON j.id = i.job_id WHERE i.file_id = ? AND j.type = 'import'", [file.id]);
  return cloud ? "cloud" : "upload";
}

/** The detectors' count of people (never fewer than the faces recognised); without their findings, the faces recognised; null when neither looked. */
async function peopleCountOf(sql: SqlClient, fileId: string): Promise<number | null> {
  // The one figure of image_findings the rules read (images/image-findings.ts writes it).
  const findings = await sql.one<{ people: number }>("SELECT people FROM image_findings WHERE file_id = ?", [fileId]);
  const faces = (await facesOfFile(sql, fileId)).length;
  if (findings) return Math.max(findings.people, faces);
  return faces || null;
}

interface CameraFacts {
  make: string | null;
  model: string | null;
  lens: string | null;
  city: string | null;
  region: string | null;
  country: string | null;
  country_code: string | null;
}

/** What conditions read of the camera's facts (camera/camera-facts.ts writes them; its own reader is still on the SQLite handle). */
function cameraOf(sql: SqlClient, fileId: string): Promise<CameraFacts | null> {
  return sql.one<CameraFacts>("SELECT make, model, lens, city, region, country, country_code FROM camera_facts WHERE file_id = ?", [fileId]);
}

/** What conditions and rules read besides the database: the files' rows and each file's kind (its own facts). */
export interface FactSources {
  files: FileRepository;
  kinds: MediaKinds;
}

export type FactName = keyof FileFacts;

const CAMERA: readonly FactName[] = ["camera", "lens", "place", "country_code"];
const KIND_OWN: readonly FactName[] = ["page_count", "duration_seconds", "domain"];

/**
 * The file's facts for conditions naming `wanted`, read through `sql` (a client or the caller's
 * transaction); the facts not wanted are left empty.
 */
export async function factsOf(sql: SqlClient, { files, kinds }: FactSources, file: FileRow, wanted: ReadonlySet<FactName>): Promise<FileFacts> {
  const wants = (...names: readonly FactName[]) => names.some((n) => wanted.has(n));
  // Whatever its kind, a file has camera facts when its pipeline read some (photos and videos do).
  const camera = wants(...CAMERA) ? await cameraOf(sql, file.id) : null;
  const own = wants(...KIND_OWN) ? ((await kinds.for(file.media_type)?.conditionFacts?.(sql, file.id)) ?? {}) : {};
  const predictions = wants("predicted_tags", "predicted_folder_id") ? await predictionsFor(sql, files.withTx(sql), file) : null;
  // Only images have findings and faces: other files have no count and nobody in them.
  const faces = wants("people") ? await facesOfFile(sql, file.id) : [];
  return {
    media_type: file.media_type,
    document_type: file.document_type,
    content_type: file.content_type,
    filename: file.filename,
    title: file.title,
    text: wants("text") ? await textOf(files.withTx(sql), file) : "",
    description: file.user_description ?? file.upload_description,
    tags: tagsOf(file),
    category: file.content_category,
    source: wants("source") ? await sourceOf(sql, file) : "",
    size_bytes: file.size_bytes,
    page_count: own.page_count ?? null,
    duration_seconds: own.duration_seconds ?? null,
    domain: own.domain ?? null,
    project_id: file.project_id,
    folder_id: file.folder_id,
    camera: [camera?.make, camera?.model].filter(Boolean).join(" ") || null,
    lens: camera?.lens ?? null,
    place: [camera?.city, camera?.region, camera?.country].filter(Boolean).join(", ") || null,
    country_code: camera?.country_code ?? null,
    people_count: wants("people_count") ? await peopleCountOf(sql, file.id) : null,
    people: [...new Set(faces.flatMap((f) => (f.personName ? [f.personName] : [])))],
    predicted_tags: predictions?.tags ?? null,
    predicted_folder_id: predictions?.folders ?? null,
  };
}
