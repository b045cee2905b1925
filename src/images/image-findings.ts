/**
 * What the detectors found in an image (objects with their boxes, faces, people) and its dominant
 * colours, kept once the analysis ends: the only writer of `image_findings`. Rules count people
 * with them (`people_count`), and a custom schema run by a rule long after the pipeline is
 * filled from them as the pipeline's own schema stage is.
 */
import type { Database } from "bun:sqlite";
import { isoAt, type Clock } from "../clock.ts";
import type { DetectedObject } from "./schema-fill.ts";

export interface ImageFindings {
  objects: DetectedObject[];
  faces: number;
  /** Faces plus person boxes without a face of their own. */
  people: number;
  colours: string[];
}

export function storeFindings(db: Database, clock: Clock, fileId: string, findings: ImageFindings): void {
  db.query(
    `INSERT INTO image_findings (file_id, objects, faces, people, colours, found_at) VALUES (?, ?, ?, ?, ?, ?)
     ON CONFLICT (file_id) DO UPDATE SET objects = excluded.objects, faces = excluded.faces, people = excluded.people, colours = excluded.colours, found_at = excluded.found_at`,
  ).run(fileId, JSON.stringify(findings.objects), findings.faces, findings.people, JSON.stringify(findings.colours), isoAt(clock.now()));
}

export function findingsOf(db: Database, fileId: string): ImageFindings | null {
  const row = db.query<{ objects: string; faces: number; people: number; colours: string }, [string]>("SELECT objects, faces, people, colours FROM image_findings WHERE file_id = ?").get(fileId);
  return row ? { objects: JSON.parse(row.objects) as DetectedObject[], faces: row.faces, people: row.people, colours: JSON.parse(row.colours) as string[] } : null;
}
