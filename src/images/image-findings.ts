/**
 * What the detectors found in an image (objects with their boxes, faces, people) and its dominant
 * colours, kept once the analysis ends: the only writer of `image_findings`. Rules count people
 * with them (`people_count`), and a custom schema run by a rule long after the pipeline is
 * filled from them as the pipeline's own schema stage is.
 */
import type { SqlClient } from "../db/sql-client.ts";
import { isoAt, type Clock } from "../clock.ts";
import type { DetectedObject } from "./schema-fill.ts";

export interface ImageFindings {
  objects: DetectedObject[];
  faces: number;
  /** Faces plus person boxes without a face of their own. */
  people: number;
  colours: string[];
}

export async function storeFindings(sql: SqlClient, clock: Clock, fileId: string, findings: ImageFindings): Promise<void> {
  await sql.run(
    `INSERT INTO image_findings (file_id, objects, faces, people, colours, found_at) VALUES (?, ?, ?, ?, ?, ?)
     ON CONFLICT (file_id) DO UPDATE SET objects = excluded.objects, faces = excluded.faces, people = excluded.people, colours = excluded.colours, found_at = excluded.found_at`,
    [fileId, JSON.stringify(findings.objects), findings.faces, findings.people, JSON.stringify(findings.colours), isoAt(clock.now())],
  );
}

interface FindingsRow {
  objects: string;
  faces: number;
  people: number;
  colours: string;
}

const toFindings = (row: FindingsRow): ImageFindings => ({ objects: JSON.parse(row.objects) as DetectedObject[], faces: row.faces, people: row.people, colours: JSON.parse(row.colours) as string[] });

export async function findingsOf(sql: SqlClient, fileId: string): Promise<ImageFindings | null> {
  const row = await sql.one<FindingsRow>("SELECT objects, faces, people, colours FROM image_findings WHERE file_id = ?", [fileId]);
  return row ? toFindings(row) : null;
}

