/**
 * The one way a media pipeline runs: a list of stages over one per-file work object, in order
 * (the way Docling threads one conversion result through its build, assemble and enrich steps).
 * The runner owns `file_stage_runs`: it times every stage and records its outcome, reports the
 * job's progress, and keeps going past a failed stage so one failure never hides the others'
 * results (partial success). Only a `required` stage's failure ends the run: nothing after it
 * could work (an image that does not decode has no variants to read).
 */
import { isoAt, type Clock } from "../clock.ts";
import type { SqlClient } from "../db/sql-client.ts";
import type { Metrics } from "../metrics.ts";
import type { ProgressBoard, ProgressUnits } from "./progress-board.ts";
import type { Config } from "../config.ts";
import { errorMessage, FAILURES, forTenants } from "../errors.ts";
import type { FileRow } from "../files/file.ts";
import { PermanentJobError, type JobContext } from "../jobs/runner.ts";

/** A stage's time budget unless it names its own (see Stage.budgetMs). */
export const DEFAULT_STAGE_BUDGET_MS = 5 * 60_000;
/** How long a stage past its budget, once told to stop, is waited for before the run goes on without it. */
const STOP_GRACE_MS = 2_000;

/** A stage stopped at its time budget (its message is the catalogue's). */
export class StageTimeoutError extends Error {
  constructor(
    readonly stage: string,
    readonly budgetMs: number,
  ) {
    super(FAILURES.stageTimedOut(stage, budgetMs));
    this.name = "StageTimeoutError";
  }
}

export interface StageOutcome {
  status: "completed" | "failed" | "skipped";
  duration_ms: number;
  /** Why it failed or was skipped. */
  error?: string;
}

/** What the runner itself uses of a pipeline's services. */
export interface StageRunnerDeps {
  clock: Clock;
  /** The group-commit client: a stage's row commits with the turn's other writes. */
  sql: SqlClient;
  metrics: Metrics;
  /** Where the running stage's progress is shown from (the API's live progress of the file). */
  progress: ProgressBoard;
}

/** The operator's time budgets of a pipeline's stages (MEDIABOX_STAGE_BUDGETS), in ms by stage name. */
export type StageBudgets = Readonly<Record<string, number>>;

/** What the runner reads of a pipeline's typed options (each pipeline's options extend it). */
export interface PipelineOptions {
  stageBudgets: StageBudgets;
}

/** The budgets MEDIABOX_STAGE_BUDGETS sets for `mediaType`'s stages (`document.extraction=1200` → extraction), built once with the pipeline's options. */
export function stageBudgetsOf(config: Pick<Config, "stageBudgets">, mediaType: string): StageBudgets {
  const prefix = `${mediaType}.`;
  return Object.fromEntries(
    Object.entries(config.stageBudgets ?? {}).flatMap(([key, ms]) => (key.startsWith(prefix) ? [[key.slice(prefix.length), ms]] : [])),
  );
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
  /** The pipeline's typed options, built once from the settings (the runner reads the stage budgets). */
  options?: PipelineOptions;
  /**
   * The running stage's signal: aborts when the job is stopped (cancelled, the server stopping)
   * or the stage passes its time budget. Set by the runner before each stage.
   */
  signal: AbortSignal;
}

export interface Stage<W extends FileWork> {
  name: string;
  /** true when the stage runs for this file, else the reason it is skipped. Runs by default. */
  appliesTo?(work: W): true | string;
  /** Its failure ends the run (and fails the job attempt): the later stages need its result. */
  required?: boolean;
  /** Share of the job's progress this stage stands for (default 1). */
  weight?: number;
  /**
   * Longest the stage may run, in ms (default DEFAULT_STAGE_BUDGET_MS). Past it `work.signal`
   * aborts and the stage fails with FAILURES.stageTimedOut; the run goes on with the next stage
   * (a required stage's timeout fails the file for good: a retry would meet the same budget).
   * The budget holds only for work that awaits: CPU-heavy work runs on a thread or in the reader
   * process, which the signal stops.
   */
  budgetMs?: number | ((work: W) => number);
  /** `progress(fraction)` reports progress within the stage, 0 to 1, with the units done when the stage counts some (pages, frames). */
  run(work: W, progress: (fraction: number, units?: ProgressUnits) => void): Promise<void>;
  /** What a failure means for the file's row (e.g. its description failed), recorded by the stage. */
  onFailure?(work: W, error: string): void | Promise<void>;
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
        work.ctx.progress.report(work.file.id, {
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
          await runWithin(work, stage, budgetOf(work, stage), span);
          recorded = record(work, stage.name, { status: "completed", duration_ms: Math.round(performance.now() - started) });
        } catch (err) {
          // The whole message goes to the log; the tenant's copy (the stage's error, the file's) is sanitized.
          const error = forTenants(errorMessage(err));
          recorded = record(work, stage.name, { status: "failed", duration_ms: Math.round(performance.now() - started), error });
          await stage.onFailure?.(work, error);
          work.job.log.warn("stage failed", { file_id: work.file.id, media_type: work.file.media_type, stage: stage.name, err: errorMessage(err) });
          if (stage.required) {
            await recorded;
            throw err instanceof StageTimeoutError ? new PermanentJobError(err.message) : err;
          }
        }
      }
      done += weight;
    }
    await recorded;
  } finally {
    work.ctx.progress.end(work.file.id);
  }
  return work.outcomes;
}

/** A stage's budget: the operator's setting for it (MEDIABOX_STAGE_BUDGETS, in the pipeline's options), else its own, else the default. */
function budgetOf<W extends FileWork>(work: W, stage: Stage<W>): number {
  const own = typeof stage.budgetMs === "function" ? stage.budgetMs(work) : stage.budgetMs;
  return work.options?.stageBudgets[stage.name] ?? own ?? DEFAULT_STAGE_BUDGET_MS;
}

/**
 * Runs one stage with its own signal (the job's, plus the budget's): resolves when the stage
 * does, rejects with what it threw, or with StageTimeoutError once the budget has passed (after
 * giving the stage STOP_GRACE_MS to stop on its signal).
 */
async function runWithin<W extends FileWork>(
  work: W,
  stage: Stage<W>,
  budgetMs: number,
  progress: (fraction: number, units?: ProgressUnits) => void,
): Promise<void> {
  const controller = new AbortController();
  const jobSignal = work.job.signal;
  const onJobAbort = () => controller.abort(jobSignal.reason);
  if (jobSignal.aborted) controller.abort(jobSignal.reason);
  else jobSignal.addEventListener("abort", onJobAbort, { once: true });
  work.signal = controller.signal;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const overtime = new Promise<StageTimeoutError>((resolve) => {
    timer = setTimeout(() => {
      const timeout = new StageTimeoutError(stage.name, budgetMs);
      controller.abort(timeout);
      resolve(timeout);
    }, budgetMs);
  });
  const running = stage.run(work, progress);
  // Settles the stage's own rejection if it comes after the budget (nobody awaits it then).
  running.catch(() => {});
  try {
    const first = await Promise.race([running.then(() => null), overtime]);
    if (!first) return;
    await Promise.race([running.catch(() => {}), Bun.sleep(STOP_GRACE_MS)]);
    throw first;
  } finally {
    clearTimeout(timer);
    jobSignal.removeEventListener("abort", onJobAbort);
  }
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
  const written = ctx.sql.run(
    `INSERT INTO file_stage_runs (file_id, stage, status, duration_ms, error, finished_at) VALUES (?, ?, ?, ?, ?, ?)
     ON CONFLICT (file_id, stage) DO UPDATE SET status = excluded.status, duration_ms = excluded.duration_ms,
       error = excluded.error, finished_at = excluded.finished_at`,
    [file.id, stage, outcome.status, outcome.duration_ms, outcome.error ?? null, finishedAt],
  ).then(() => {});
  // Whoever awaits it still sees a failed write; a run that ends on another error first (a stage's
  // onFailure whose write shared this one's failed commit) never does, and that is no unhandled rejection.
  written.catch(() => {});
  ctx.metrics.stageDuration.observe({ media_type: file.media_type, stage, status: outcome.status }, outcome.duration_ms / 1000);
  work.job.log.info("stage done", { file_id: file.id, filename: file.filename, media_type: file.media_type, stage, status: outcome.status, duration_ms: outcome.duration_ms });
  return written;
}
