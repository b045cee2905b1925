/**
 * Near-duplicate fixtures written as the image pipeline's duplicates stage writes them: a file's
 * dimensions, its fingerprint row (sharpness) and the pairs found, through the server's database.
 */
import type { Database } from "bun:sqlite";

export function setImageFacts(db: Database, fileId: string, orgId: string, facts: { width: number; height: number; sizeBytes: number; sharpness: number }): void {
  db.query("UPDATE files SET width = ?, height = ?, size_bytes = ? WHERE id = ?").run(facts.width, facts.height, facts.sizeBytes, fileId);
  db.query("INSERT OR REPLACE INTO image_fingerprints (file_id, org_id, phash, sharpness) VALUES (?, ?, ?, ?)").run(fileId, orgId, "0".repeat(16), facts.sharpness);
}

/** Pairs every two of the files, as fingerprinting finds copies of one shot. */
export function pairAll(db: Database, orgId: string, fileIds: string[]): void {
  const ids = [...fileIds].sort();
  for (let i = 0; i < ids.length; i++) {
    for (let j = i + 1; j < ids.length; j++) {
      db.query("INSERT OR REPLACE INTO duplicate_pairs (file_a, file_b, org_id, hamming, similarity) VALUES (?, ?, ?, 4, NULL)").run(ids[i]!, ids[j]!, orgId);
    }
  }
}
