/**
 * The files side of moving a folder to another project: the files of the folder and of every
 * folder under it go with it. On the data-access port, inside the caller's transaction (the
 * folders module moves the folders themselves in the same one); the files module is the only
 * writer of the files table.
 */
import type { SqlClient } from "../db/sql-client.ts";

export async function moveFolderTreeFiles(tx: SqlClient, rootFolderId: string, projectId: string, now: string): Promise<void> {
  await tx.run(
    `WITH RECURSIVE sub(id) AS (SELECT ? UNION ALL SELECT f.id FROM folders f JOIN sub ON f.parent_id = sub.id)
     UPDATE files SET project_id = ?, updated_at = ? WHERE folder_id IN (SELECT id FROM sub)`,
    [rootFolderId, projectId, now],
  );
}
