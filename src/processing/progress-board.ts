/**
 * What a file's processing is doing right now, for people watching it: the stage running, its
 * place among the pipeline's stages, the whole run's percentage, and the units of the stage (a
 * document's pages read, a video's frames) when it counts some. Kept in memory only, as the job
 * runs, and dropped when the run ends: a restart loses nothing worth keeping (the job's percent
 * and the stages' outcomes are in the database). File ids are unique across every server in the
 * process, so one board serves them all.
 */
export interface LiveProgress {
  stage: string;
  /** 1-based place of the stage among the pipeline's stages. */
  stageNumber: number;
  stageCount: number;
  /** The whole run, 0-100. */
  percent: number;
  /** The stage's units, when it counts some: "page" (a document's pages read), "frame" (a video's keyframes). */
  unit: string | null;
  done: number | null;
  total: number | null;
}

export interface ProgressUnits {
  done: number;
  total: number;
  unit: string;
}

const board = new Map<string, LiveProgress>();

export function setLiveProgress(fileId: string, progress: LiveProgress): void {
  board.set(fileId, progress);
}

export function liveProgress(fileId: string): LiveProgress | null {
  return board.get(fileId) ?? null;
}

export function clearLiveProgress(fileId: string): void {
  board.delete(fileId);
}
