/**
 * What probing a video found (video/probe.ts): its stream facts, in the video kind's own table
 * `video_facts` (this module is its only writer). The files row keeps the displayed width and
 * height and the capture date, which images have too.
 */
import type { Database } from "bun:sqlite";

export interface VideoFacts {
  durationSeconds: number | null;
  frameRate: number | null;
  codec: string | null;
  container: string | null;
  hasAudio: boolean | null;
  bitRate: number | null;
}

interface VideoFactsRow {
  duration_seconds: number | null;
  frame_rate: number | null;
  codec: string | null;
  container: string | null;
  has_audio: number | null;
  bit_rate: number | null;
}

export function storeVideoFacts(db: Database, fileId: string, facts: VideoFacts): void {
  db.query(
    `INSERT INTO video_facts (file_id, duration_seconds, frame_rate, codec, container, has_audio, bit_rate) VALUES (?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (file_id) DO UPDATE SET duration_seconds = excluded.duration_seconds, frame_rate = excluded.frame_rate, codec = excluded.codec,
       container = excluded.container, has_audio = excluded.has_audio, bit_rate = excluded.bit_rate`,
  ).run(fileId, facts.durationSeconds, facts.frameRate, facts.codec, facts.container, facts.hasAudio === null ? null : facts.hasAudio ? 1 : 0, facts.bitRate);
}

/** Null until the video has been probed. */
export function videoFactsOf(db: Database, fileId: string): VideoFacts | null {
  const row = db
    .query<VideoFactsRow, [string]>("SELECT duration_seconds, frame_rate, codec, container, has_audio, bit_rate FROM video_facts WHERE file_id = ?")
    .get(fileId);
  if (!row) return null;
  return {
    durationSeconds: row.duration_seconds,
    frameRate: row.frame_rate,
    codec: row.codec,
    container: row.container,
    hasAudio: row.has_audio === null ? null : row.has_audio === 1,
    bitRate: row.bit_rate,
  };
}
