/**
 * The one way a media pipeline runs: a list of stages over one per-file work object, in order
 * (the way Docling threads one conversion result through its build, assemble and enrich steps).
 * The runner owns `file_stage_runs`: it times every stage and records its outcome, reports the
 * job's progress, and keeps going past a failed stage so one failure never hides the others'
 * results (partial success). Only a `required` stage's failure ends the run: nothing after it
 * could work (an image that does not decode has no variants to read).
 */
import type { Database } from "bun:sqlite";
import { isoAt, type Clock } from "../clock.ts";
import type { GroupCommit } from "../db/group-commit.ts";
import type { Metrics } from "../metrics.ts";
import { clearLiveProgress, setLiveProgress, type ProgressUnits } from "./progress-board.ts";
import { errorMessage } from "../errors.ts";
import type { FileRow } from "../files/file.ts";
import type { JobContext } from "../jobs/runner.ts";

export interface StageOutcome {
  status: "completed" | "failed" | "skipped";
  duration_ms: number;
  /** Why it failed or was skipped. */
  error?: string;
}

/** What the runner itself uses of a pipeline's services. */
export interface StageRunnerDeps {
  clock: Clock;
  db: Database;
  writes: GroupCommit;
  metrics: Metrics;
}

/** What every pipeline's work object carries; each pipeline adds what its stages produce. */
export interface FileWork<Deps extends StageRunnerDeps = StageRunnerDeps> {
  /** The services the pipeline's stages use. */
  ctx: Deps;
  job: JobContext<unknown>;
  /** The file as it was when the run started. */
  file: FileRow;
  /** Outcomes of the stages run so far, by stage name (filled by the runner). */
  outcomes: Record<string, StageOutcome>;
}

export interface Stage<W extends FileWork> {
  name: string;
  /** true when the stage runs for this file, else the reason it is skipped. Runs by default. */
  appliesTo?(work: W): true | string;
  /** Its failure ends the run (and fails the job attempt): the later stages need its result. */
  required?: boolean;
  /** Share of the job's progress this stage stands for (default 1). */
  weight?: number;
  /** `progress(fraction)` reports progress within the stage, 0 to 1, with the units done when the stage counts some (pages, frames). */
  run(work: W, progress: (fraction: number, units?: ProgressUnits) => void): Promise<void>;
  /** What a failure means for the file's row (e.g. its description failed), recorded by the stage. */
  onFailure?(work: W, error: string): void;
}

/** Runs the stages in order; returns their outcomes. Throws only what a required stage threw. */
export async function runStages<W extends FileWork>(work: W, stages: Stage<W>[]): Promise<Record<string, StageOutcome>> {
  const total = stages.reduce((sum, stage) => sum + (stage.weight ?? 1), 0);
  let done = 0;
  // The last stage's outcome, on its way to the database (see record).
  let recorded: Promise<void> | null = null;
  try {
    for (const [index, stage] of stages.entries()) {
      // A macrotask between stages: a stage's promise chain otherwise runs on as microtasks, and
      // with a dozen jobs side by side requests waited behind them (/healthz p99 ~90 ms while
      // notes were indexed). Waiting for the last outcome's commit is one.
      await (recorded ?? new Promise((resolve) => setImmediate(resolve)));
      const weight = stage.weight ?? 1;
      const span = (fraction: number, units?: ProgressUnits) => {
        const percent = Math.round(((done + weight * Math.max(0, Math.min(1, fraction))) / total) * 100);
        work.job.progress(percent);
        setLiveProgress(work.file.id, {
          stage: stage.name, stageNumber: index + 1, stageCount: stages.length, percent,
          unit: units?.unit ?? null, done: units?.done ?? null, total: units?.total ?? null,
        });
      };
      span(0);
      const applies = stage.appliesTo ? stage.appliesTo(work) : true;
      if (applies !== true) {
        recorded = record(work, stage.name, { status: "skipped", duration_ms: 0, error: applies });
      } else {
        const started = performance.now();
        try {
          await stage.run(work, span);
          recorded = record(work, stage.name, { status: "completed", duration_ms: Math.round(performance.now() - started) });
        } catch (err) {
          const error = errorMessage(err);
          recorded = record(work, stage.name, { status: "failed", duration_ms: Math.round(performance.now() - started), error });
          stage.onFailure?.(work, error);
          work.job.log.warn("stage failed", { file_id: work.file.id, media_type: work.file.media_type, stage: stage.name, err: error });
          if (stage.required) {
            await recorded;
            throw err;
          }
        }
      }
      done += weight;
    }
    await recorded;
  } finally {
    clearLiveProgress(work.file.id);
  }
  return work.outcomes;
}

/** The failed stages as one line ("ocr: ...; description: ..."), or null when none failed. */
export function failedStages(outcomes: Record<string, StageOutcome>): string | null {
  const failed = Object.entries(outcomes).filter(([, o]) => o.status === "failed");
  return failed.length ? failed.map(([stage, o]) => `${stage}: ${o.error}`).join("; ") : null;
}

/**
 * Records a stage's outcome; the row commits with other tasks' writes in the next turn (one
 * commit a stage was four a note in bulk imports). Resolves once committed.
 */
function record(work: FileWork, stage: string, outcome: StageOutcome): Promise<void> {
  work.outcomes[stage] = outcome;
  const { ctx, file } = work;
  const finishedAt = isoAt(ctx.clock.now());
  const written = ctx.writes.write(() => {
    ctx.db
      .query(
        `INSERT INTO file_stage_runs (file_id, stage, status, duration_ms, error, finished_at) VALUES (?, ?, ?, ?, ?, ?)
         ON CONFLICT (file_id, stage) DO UPDATE SET status = excluded.status, duration_ms = excluded.duration_ms,
           error = excluded.error, finished_at = excluded.finished_at`,
      )
      .run(file.id, stage, outcome.status, outcome.duration_ms, outcome.error ?? null, finishedAt);
  });
  ctx.metrics.stageDuration.observe({ media_type: file.media_type, stage, status: outcome.status }, outcome.duration_ms / 1000);
  work.job.log.info("stage done", { file_id: file.id, filename: file.filename, media_type: file.media_type, stage, status: outcome.status, duration_ms: outcome.duration_ms });
  return written;
}
