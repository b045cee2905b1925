/**
 * What probing a video found (video/probe.ts): its stream facts, and the state of its analysis,
 * in the video kind's own table `video_facts` (this module is its only writer). The files row
 * keeps the displayed width and height and the capture date, which images have too. Writers take
 * a `SqlClient`: the caller's port transaction (`tx`) or the group-commit client.
 */
import { atomically, type SqlClient } from "../db/sql-client.ts";
import { factsRowsOf } from "../files/facts-table.ts";
import { forTenantsOrNull } from "../errors.ts";
import type { FileRepository } from "../files/file-repository.ts";

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

export type AnalysisStatus = "pending" | "processing" | "completed" | "failed" | "skipped";

/** The video's analysis: pending at upload, processing once probed, then its outcome (skipped: over a limit, error says which). */
export interface VideoAnalysis {
  status: AnalysisStatus | null;
  error: string | null;
}

/** The video is to be analysed (at upload, and when its processing is queued again). */
export async function analysisPending(sql: SqlClient, fileId: string): Promise<void> {
  await sql.run(
    `INSERT INTO video_facts (file_id, analysis_status) VALUES (?, 'pending')
     ON CONFLICT (file_id) DO UPDATE SET analysis_status = 'pending', analysis_error = NULL`,
    [fileId],
  );
}

/** What the probe found; the analysis goes on (processing). */
export async function storeVideoFacts(sql: SqlClient, fileId: string, facts: VideoFacts): Promise<void> {
  await sql.run(
    `INSERT INTO video_facts (file_id, duration_seconds, frame_rate, codec, container, has_audio, bit_rate, analysis_status) VALUES (?, ?, ?, ?, ?, ?, ?, 'processing')
     ON CONFLICT (file_id) DO UPDATE SET duration_seconds = excluded.duration_seconds, frame_rate = excluded.frame_rate, codec = excluded.codec,
       container = excluded.container, has_audio = excluded.has_audio, bit_rate = excluded.bit_rate, analysis_status = 'processing', analysis_error = NULL`,
    [fileId, facts.durationSeconds, facts.frameRate, facts.codec, facts.container, facts.hasAudio === null ? null : facts.hasAudio ? 1 : 0, facts.bitRate],
  );
}

const VIDEO_FACTS_COLUMNS = "duration_seconds, frame_rate, codec, container, has_audio, bit_rate, analysis_status, analysis_error";

type VideoFactsAndAnalysisRow = VideoFactsRow & { analysis_status: AnalysisStatus | null; analysis_error: string | null };

function toFacts(row: VideoFactsRow): VideoFacts {
  return {
    durationSeconds: row.duration_seconds,
    frameRate: row.frame_rate,
    codec: row.codec,
    container: row.container,
    hasAudio: row.has_audio === null ? null : row.has_audio === 1,
    bitRate: row.bit_rate,
  };
}

/** Null for a file that is not a video (a video not probed yet has its facts null). */
export async function videoFactsOf(sql: SqlClient, fileId: string): Promise<VideoFacts | null> {
  const row = await sql.one<VideoFactsRow>(`SELECT ${VIDEO_FACTS_COLUMNS} FROM video_facts WHERE file_id = ?`, [fileId]);
  return row ? toFacts(row) : null;
}


/** The facts and analysis of several videos in one read (a listing page's), by file id; every id is in the map (facts null, analysis null for a file that is not a video). */
export async function videoFactsOfFiles(sql: SqlClient, fileIds: readonly string[]): Promise<Map<string, { facts: VideoFacts | null; analysis: VideoAnalysis }>> {
  const rows = await factsRowsOf<VideoFactsAndAnalysisRow>(sql, "video_facts", VIDEO_FACTS_COLUMNS, fileIds);
  return new Map(
    fileIds.map((id) => {
      const row = rows.get(id);
      return [id, { facts: row ? toFacts(row) : null, analysis: { status: row?.analysis_status ?? null, error: row?.analysis_error ?? null } }];
    }),
  );
}

/** The analysis ended; the file's updated_at moves with it (`files` tells it), in the caller's transaction or one of its own. */
export function analysisEnded(sql: SqlClient, files: FileRepository, fileId: string, status: "completed" | "failed" | "skipped", error: string | null): Promise<void> {
  return atomically(sql, async (tx) => {
    await tx.run(
      `INSERT INTO video_facts (file_id, analysis_status, analysis_error) VALUES (?, ?, ?)
       ON CONFLICT (file_id) DO UPDATE SET analysis_status = excluded.analysis_status, analysis_error = excluded.analysis_error`,
      [fileId, status, forTenantsOrNull(error)],
    );
    await files.withTx(tx).touched(fileId);
  });
}

/** Null state and error for a file that is not a video. */
export async function videoAnalysisOf(sql: SqlClient, fileId: string): Promise<VideoAnalysis> {
  const row = await sql.one<{ analysis_status: AnalysisStatus | null; analysis_error: string | null }>("SELECT analysis_status, analysis_error FROM video_facts WHERE file_id = ?", [fileId]);
  return { status: row?.analysis_status ?? null, error: row?.analysis_error ?? null };
}
