/**
 * Near-duplicate fixtures written as the image pipeline's duplicates stage writes them: a file's
 * dimensions, its fingerprint row (sharpness) and the pairs found, through the server's data-access port.
 */
import type { SqlClient } from "../../src/db/sql-client.ts";

export async function setImageFacts(db: SqlClient, fileId: string, orgId: string, facts: { width: number; height: number; sizeBytes: number; sharpness: number }): Promise<void> {
  await db.run("UPDATE files SET width = ?, height = ?, size_bytes = ? WHERE id = ?", [facts.width, facts.height, facts.sizeBytes, fileId]);
  await db.run(
    "INSERT INTO image_fingerprints (file_id, org_id, phash, sharpness) VALUES (?, ?, ?, ?) ON CONFLICT (file_id) DO UPDATE SET org_id = excluded.org_id, phash = excluded.phash, sharpness = excluded.sharpness",
    [fileId, orgId, "0".repeat(16), facts.sharpness],
  );
}

/** Pairs every two of the files, as fingerprinting finds copies of one shot. */
export async function pairAll(db: SqlClient, orgId: string, fileIds: string[]): Promise<void> {
  const ids = [...fileIds].sort();
  for (let i = 0; i < ids.length; i++) {
    for (let j = i + 1; j < ids.length; j++) {
      await db.run(
        "INSERT INTO duplicate_pairs (file_a, file_b, org_id, hamming, similarity) VALUES (?, ?, ?, 4, NULL) ON CONFLICT (file_a, file_b) DO UPDATE SET hamming = excluded.hamming, similarity = excluded.similarity",
        [ids[i]!, ids[j]!, orgId],
      );
    }
  }
}
