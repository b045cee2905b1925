/**
 * A video's keyframes once sampled: the `video_keyframes` table (time, size, what OCR and the
 * detectors saw in each frame), the frames' JPEG blobs and their vectors in the image space.
 * Written here alone. A keyframe's vector is stored under `<file id>#k<index>` beside the
 * poster's under the file id, so similar-image search can answer with the video and the moment.
 */
import type { VideoDeps } from "./deps.ts";
import type { SqlClient } from "../db/sql-client.ts";
import { keyframeBlobKey } from "../files/blob-keys.ts";
import type { FileRow } from "../files/file.ts";
import type { KeyFrame } from "./frames.ts";

export interface StoredKeyframe {
  index: number;
  timeSeconds: number;
  blobKey: string;
  width: number;
  height: number;
  isPoster: boolean;
  visibleText: string | null;
  objects: { label: string; score: number }[] | null;
  faces: number | null;
}

interface KeyframeRow {
  frame_index: number;
  time_seconds: number;
  blob_key: string;
  width: number;
  height: number;
  is_poster: number;
  visible_text: string | null;
  objects: string | null;
  faces: number | null;
}

const ITEM_SEPARATOR = "#k";

/** The vector item id of a keyframe. */
export const keyframeItemId = (fileId: string, index: number) => `${fileId}${ITEM_SEPARATOR}${index}`;

/** The file and keyframe index a vector item id stands for (index null: the file itself). */
export function parseItemId(itemId: string): { fileId: string; keyframeIndex: number | null } {
  const at = itemId.indexOf(ITEM_SEPARATOR);
  if (at < 0) return { fileId: itemId, keyframeIndex: null };
  return { fileId: itemId.slice(0, at), keyframeIndex: Number(itemId.slice(at + ITEM_SEPARATOR.length)) };
}

export async function keyframesOf(sql: SqlClient, fileId: string): Promise<StoredKeyframe[]> {
  return (await sql.all<KeyframeRow>("SELECT * FROM video_keyframes WHERE file_id = ? ORDER BY frame_index", [fileId])).map((row) => ({
      index: row.frame_index,
      timeSeconds: row.time_seconds,
      blobKey: row.blob_key,
      width: row.width,
      height: row.height,
      isPoster: row.is_poster === 1,
      visibleText: row.visible_text,
      objects: row.objects === null ? null : JSON.parse(row.objects),
      faces: row.faces,
    }));
}

/** The time of every keyframe of these files, by its vector item id (read through the port: either database). */
export async function keyframeTimes(sql: SqlClient, fileIds: string[]): Promise<Map<string, number>> {
  if (fileIds.length === 0) return new Map();
  const rows = await sql.all<{ file_id: string; frame_index: number; time_seconds: number }>(
    `SELECT file_id, frame_index, time_seconds FROM video_keyframes WHERE file_id IN (${sql.dialect.jsonValues})`,
    [JSON.stringify(fileIds)],
  );
  return new Map(rows.map((r) => [keyframeItemId(r.file_id, r.frame_index), r.time_seconds]));
}

/** Removes a file's keyframes: blobs, vectors and rows (before sampling again, and at purge). */
export async function removeKeyframes(ctx: Pick<VideoDeps, "sql" | "blobs" | "spaces">, fileId: string): Promise<void> {
  const frames = await keyframesOf(ctx.sql, fileId);
  if (!frames.length) return;
  for (const frame of frames) await ctx.blobs.delete(frame.blobKey);
  const items = frames.map((f) => keyframeItemId(fileId, f.index));
  for (const space of await ctx.spaces.all("image")) await space.remove(items);
  await ctx.sql.run("DELETE FROM video_keyframes WHERE file_id = ?", [fileId]);
}

/** Stores freshly sampled frames (after removeKeyframes), the poster marked. */
export async function storeKeyframes(ctx: Pick<VideoDeps, "sql" | "blobs">, file: Pick<FileRow, "id" | "org_id">, frames: KeyFrame[], posterIndex: number | null): Promise<StoredKeyframe[]> {
  const stored: StoredKeyframe[] = [];
  for (const [index, frame] of frames.entries()) {
    const blobKey = keyframeBlobKey(file.org_id, file.id, index);
    await ctx.blobs.put(blobKey, frame.jpeg, "image/jpeg");
    stored.push({ index, timeSeconds: frame.timeSeconds, blobKey, width: frame.width, height: frame.height, isPoster: index === posterIndex, visibleText: null, objects: null, faces: null });
  }
  await ctx.sql.transaction(async (tx) => {
    for (const frame of stored) {
      await tx.run(
        "INSERT INTO video_keyframes (file_id, frame_index, time_seconds, blob_key, width, height, is_poster) VALUES (?, ?, ?, ?, ?, ?, ?)",
        [file.id, frame.index, frame.timeSeconds, frame.blobKey, frame.width, frame.height, frame.isPoster ? 1 : 0],
      );
    }
  });
  return stored;
}

export async function frameTextRead(ctx: Pick<VideoDeps, "sql">, fileId: string, index: number, text: string | null): Promise<void> {
  await ctx.sql.run("UPDATE video_keyframes SET visible_text = ? WHERE file_id = ? AND frame_index = ?", [text, fileId, index]);
}

export async function frameAnalysed(ctx: Pick<VideoDeps, "sql">, fileId: string, index: number, objects: { label: string; score: number }[], faces: number): Promise<void> {
  await ctx.sql.run("UPDATE video_keyframes SET objects = ?, faces = ? WHERE file_id = ? AND frame_index = ?", [JSON.stringify(objects), faces, fileId, index]);
}
