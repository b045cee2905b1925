/**
 * What conditions see of a file: its row's fields, its text (a document's or page's whole text,
 * else what OCR read in an image or a video's keyframes) and how it arrived.
 */
import type { Database } from "bun:sqlite";
import { cameraFactsOf } from "../camera/camera-facts.ts";
import type { FileRepository } from "../files/file-repository.ts";
import type { MediaKinds } from "../kinds/media-kind.ts";
import { tagsOf, type FileRow } from "../files/file.ts";
import type { FileFacts } from "./conditions.ts";
import { textOf } from "./file-text.ts";
import { findingsOf } from "../images/image-findings.ts";
import { facesOfFile } from "../people/people.ts";
import { predictionsFor, type Predictions } from "./auto-match.ts";

/** How the file arrived: a watched folder or a mail account (file_origins), a cloud import, a saved link (and its page images), else an upload. */
export function sourceOf(db: Database, file: FileRow): string {
  const origin = db.query<{ source: string }, [string]>("SELECT source FROM file_origins WHERE file_id = ?").get(file.id);
  if (origin) return origin.source;
  if (file.media_type === "link" || file.parent_file_id) return "link";
  const cloud = db.query("SELECT 1 FROM cloud_job_items i JOIN cloud_jobs j ON j.id = i.job_id WHERE i.file_id = ? AND j.type = 'import'").get(file.id);
  return cloud ? "cloud" : "upload";
}

/** The detectors' count of people (never fewer than the faces recognised); without their findings, the faces recognised; null when neither looked. */
function peopleCountOf(db: Database, fileId: string): number | null {
  const findings = findingsOf(db, fileId);
  const faces = facesOfFile(db, fileId).length;
  if (findings) return Math.max(findings.people, faces);
  return faces || null;
}

/** What conditions and rules read besides the database: the files' rows and each file's kind (its own facts). */
export interface FactSources {
  files: FileRepository;
  kinds: MediaKinds;
}

export function factsOf(db: Database, { kinds }: FactSources, file: FileRow): FileFacts {
  // Predictions read the model and the text again: only when a condition asks for them.
  let predictions: Predictions | null | undefined;
  const predicted = () => (predictions === undefined ? (predictions = predictionsFor(db, file)) : predictions);
  // Whatever its kind, a file has camera facts when its pipeline read some (photos and videos do).
  const camera = cameraFactsOf(db, file.id);
  const own = kinds.for(file.media_type)?.conditionFacts?.(file.id) ?? {};
  return {
    media_type: file.media_type,
    document_type: file.document_type,
    content_type: file.content_type,
    filename: file.filename,
    title: file.title,
    text: textOf(db, file),
    description: file.user_description ?? file.upload_description,
    tags: tagsOf(file),
    category: file.content_category,
    source: sourceOf(db, file),
    size_bytes: file.size_bytes,
    page_count: own.page_count ?? null,
    duration_seconds: own.duration_seconds ?? null,
    domain: own.domain ?? null,
    project_id: file.project_id,
    folder_id: file.folder_id,
    camera: [camera?.make, camera?.model].filter(Boolean).join(" ") || null,
    lens: camera?.lens ?? null,
    place: [camera?.city, camera?.region, camera?.country].filter(Boolean).join(", ") || null,
    country_code: camera?.countryCode ?? null,
    // Only images have findings and faces: other files have no count and nobody in them.
    get people_count() {
      return peopleCountOf(db, file.id);
    },
    get people() {
      return [...new Set(facesOfFile(db, file.id).flatMap((f) => (f.personName ? [f.personName] : [])))];
    },
    get predicted_tags() {
      return predicted()?.tags ?? null;
    },
    get predicted_folder_id() {
      return predicted()?.folders ?? null;
    },
  };
}
