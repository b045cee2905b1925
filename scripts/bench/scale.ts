/**
 * bench:scale (issue 40): the same mixed files processed by one worker process and by two, and a
 * worker killed with -9 mid-run losing nothing.
 *
 *   bun scripts/bench/scale.ts [--files 500] [--engine postgres|sqlite] [--deadline-minutes 30] [--keep]
 *
 * PostgreSQL (the default): a throwaway PostgreSQL with pgvector (test/support/postgres.ts) and,
 * per run, a fresh database and a fresh local S3 endpoint (versitygw, or in-process s3rver where it
 * is missing: test/support/s3-server.ts; a new bucket directory), one `serve --role api` process and N `serve --role worker` processes on
 * loopback, each with its own data directory (as separate hosts would have), the built-in models
 * only (an empty models directory: use-lite-sif text vectors, no layout model, tesseract OCR; the
 * vision models come with the packages). Three runs: 1 worker; 2 workers; 2 workers of which one
 * is killed with -9 once about half the files are done and is NOT restarted: the survivor must
 * take over the jobs the dead process held once their leases lapse (MEDIABOX_JOB_LEASE_SECONDS,
 * default 30 s), which is what a crashed host gives a deployment; a restart would release the
 * dead process's leases at start and so hide whether expiry alone recovers them. Each run: the
 * owner and an API key made over HTTP (the first run, from loopback), the files uploaded over
 * HTTP (POST /files/upload, 4 at a time) to the api alone, each acknowledged upload's id and
 * SHA-256 recorded; then the worker processes started, the files counted by processing status
 * until all are done (polling, with a deadline), then every acknowledged file checked: known,
 * completed (not failed), and its downloaded bytes' SHA-256 equal to the upload's; then, once the
 * jobs the files queued have ended too, none may have failed. The time runs from the workers'
 * start to the last completion the server recorded: what the ratio compares is the processing,
 * not the api's uploads, which are the same work in every run (and, on two cores, ran on the core
 * the second worker shares). Prints files/s per run, each process's CPU use, and last
 * `scale: 2 workers X.XXx of 1, lost N` (N: acknowledged files missing, not completed or whose
 * bytes differ, over all runs). Exit 1 when anything was lost, refused or failed.
 *
 * Pinning, with the cores this process may use c0..cK (taskset): this script, PostgreSQL and the
 * S3 endpoint (pinned at start with `taskset -a -p`; what they start inherits it) and the api on
 * c0; worker i on c(1+i) while there are cores left, else wrapped around to c0. On a 2-core
 * machine: worker 1 alone on core 1; in the 2-worker runs worker 2 shares core 0 with the api,
 * PostgreSQL, the S3 endpoint and this script. That is the nearest two cores come to one core per
 * worker: while the workers run, the api answers only the polls, so worker 2 gets most of core 0
 * (PostgreSQL and the S3 endpoint serve both workers from it), and the ratio understates what a
 * free core would give (its CPU share is printed). Pinning both workers to
 * core 1 would measure nothing. Every process runs its jobs with its usual concurrency; a worker's
 * threads and children (vision threads, document reader, ffmpeg) inherit its one core.
 *
 * `--engine sqlite`: the same uploads, waits, checks and kill against ONE `serve --role all`
 * process on SQLite with local storage, pinned to c1 (no ratio): a throughput run, then a run
 * whose process is killed with -9 at about half and restarted on the same data directory, after
 * which nothing may be lost. This exercises the harness today; serving from PostgreSQL is not
 * finished (docs/scale-out.md), and until it is the PostgreSQL mode stops quoting the server's
 * refusal.
 *
 * Every process started is stopped at the end (SIGTERM, then -9 after 30 s), also on a failure
 * or Ctrl-C, by PID, children included.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { findPostgres, startPostgres, type TestPostgres } from "../../test/support/postgres.ts";
import { findVersitygw, startS3Server, type S3Fixture } from "../../test/support/s3-server.ts";
import { lostCount, ScaleClient, verify, type Verdict } from "./scale-client.ts";
import { describeMix, makeMixedFiles, type BenchFile } from "./scale-files.ts";
import { allowedCores, killTree, pinProcess, startPinned, stopAll, treeCpuSeconds, type PinnedServer } from "./scale-processes.ts";

const { values: args } = parseArgs({
  args: process.argv.slice(2),
  options: {
    files: { type: "string", default: "500" },
    engine: { type: "string", default: "postgres" },
    "deadline-minutes": { type: "string", default: "30" },
    /** Keep the bench's directory (files, data directories, logs) for a look afterwards. */
    keep: { type: "boolean", default: false },
  },
});
const FILE_COUNT = Number(args.files);
const ENGINE = args.engine;
const DEADLINE_MS = Number(args["deadline-minutes"]) * 60_000;
const UPLOADS_AT_ONCE = 4;
const CORES = allowedCores();
if (!Number.isInteger(FILE_COUNT) || FILE_COUNT < 2) throw new Error(`--files: expected an integer of at least 2, got ${args.files}`);
if (ENGINE !== "postgres" && ENGINE !== "sqlite") throw new Error(`--engine: expected postgres or sqlite, got ${ENGINE}`);

const root = mkdtempSync(join(process.env.MEDIABOX_BENCH_DIR ?? tmpdir(), "mediabox-bench-scale-"));
const modelsDir = join(root, "models");
mkdirSync(modelsDir);

/** What every process gets: loopback, the built-in models only, a short shutdown. */
const BASE_ENV: Record<string, string> = {
  MEDIABOX_HOST: "127.0.0.1",
  MEDIABOX_PORT: "0",
  MEDIABOX_LOG_LEVEL: "info",
  MEDIABOX_MODELS_DIR: modelsDir,
  MEDIABOX_TEXT_EMBEDDING_MODEL: "use-lite-sif",
  // Preparing the text model's common words takes minutes of a core in every fresh database.
  MEDIABOX_TEXT_VOCABULARY_WORDS: "0",
  MEDIABOX_LAYOUT_MODEL: "none",
  MEDIABOX_OCR_ENGINE: "tesseract",
  MEDIABOX_SHUTDOWN_GRACE_SECONDS: "5",
};

/** A server refused to start: its own words, for the message that ends the bench. */
class ServerRefused extends Error {}

/** Starts `name` with the data directory runDir/`dir` (its name unless given: a restart keeps its directory). */
async function start(name: string, core: number | null, env: Record<string, string>, runDir: string, dir = name): Promise<PinnedServer> {
  const dataDir = join(runDir, dir);
  try {
    return await startPinned(name, core, { ...BASE_ENV, MEDIABOX_DATA_DIR: dataDir, ...env }, join(runDir, `${dir}.log`));
  } catch (err) {
    const said = /stderr: ([\s\S]*)$/.exec((err as Error).message)?.[1]?.trim();
    if (said) throw new ServerRefused(`the ${name} process (serve ${env.MEDIABOX_ROLE ? `--role ${env.MEDIABOX_ROLE}` : ""}) refused to start:\n  ${said.split("\n").join("\n  ")}`);
    throw err;
  }
}

interface RunOutcome {
  label: string;
  files: number;
  seconds: number;
  rate: number;
  verdict: Verdict;
  refused: string[];
  /** Jobs that ended failed or cancelled (none is asked to cancel). */
  failedJobs: number;
}

interface RunSetup {
  label: string;
  /** The process the API is asked through (the api, or the one `all` process: replaced when restarted). */
  api: PinnedServer;
  /** The processes running jobs, whose CPU use is reported. */
  workers: PinnedServer[];
  /** Called once about half the files are done (the kill run), with the client to repoint if the API moved. */
  atHalf?: (client: ScaleClient) => Promise<string>;
  /** Whether the half-way action needs every upload acknowledged first (it stops the API). */
  halfNeedsUploadsDone?: boolean;
  /**
   * Starts the processes that run jobs once every upload is acknowledged (the PostgreSQL runs):
   * the processing is then timed alone, from their start to the last completion, so the api's
   * upload work (the same in every run, on the core a second worker shares) is not in the ratio.
   */
  startWorkers?: () => Promise<PinnedServer[]>;
}

async function measure(setup: RunSetup, files: BenchFile[]): Promise<RunOutcome> {
  const client = new ScaleClient(setup.api.server.url);
  await client.setUp();
  const cpuBefore = new Map([setup.api, ...setup.workers].map((p) => [p, treeCpuSeconds(p.pid)]));
  const ownCpuBefore = process.cpuUsage();
  const startedAt = performance.now();
  let uploading = true;
  let acked = 0;
  let uploadsEndedAt = 0;
  const uploads = client.upload(files, UPLOADS_AT_ONCE, (n) => (acked = n)).finally(() => {
    uploading = false;
    uploadsEndedAt = performance.now();
  });
  let halfNote = "";
  let halfDone = false;
  // With workers started after the uploads, the processing is timed from their start.
  let processingFrom: number | null = null;
  if (setup.startWorkers) {
    await uploads;
    processingFrom = Date.now();
    setup.workers = await setup.startWorkers();
    for (const worker of setup.workers) cpuBefore.set(worker, 0);
  }
  const doneAt = await client.waitUntilDone(() => acked, () => uploading, DEADLINE_MS, async (done) => {
    if (!setup.atHalf || halfDone || done < files.length / 2 || (setup.halfNeedsUploadsDone && uploading)) return;
    halfDone = true;
    halfNote = `${await setup.atHalf(client)} at ${done} of ${files.length} done`;
  });
  const outcome = await uploads;
  const cpu = [setup.api, ...setup.workers].map((p) => ({ p, used: treeCpuSeconds(p.pid) - (cpuBefore.get(p) ?? 0) }));
  const ownCpu = process.cpuUsage(ownCpuBefore);
  const wall = (performance.now() - startedAt) / 1000;
  const verdict = await verify(client, outcome.acknowledged);
  const jobs = await client.settledJobs(DEADLINE_MS);
  const lastDone = verdict.lastCompletedAt ?? doneAt;
  const seconds = (lastDone - (processingFrom ?? outcome.firstSentAt)) / 1000;
  const rate = outcome.acknowledged.length / seconds;
  const statuses = [...verdict.byStatus].map(([s, n]) => `${s} ${n}`).join(", ");
  const timed = processingFrom === null
    ? `all done after ${seconds.toFixed(1)} s`
    : `then the workers started; all done ${seconds.toFixed(1)} s after their start (${((lastDone - outcome.firstSentAt) / 1000).toFixed(1)} s after the first upload)`;
  console.log(`${setup.label}: ${outcome.acknowledged.length} of ${files.length} uploads acknowledged (in ${((uploadsEndedAt - startedAt) / 1000).toFixed(1)} s), ${timed}: ` +
    `${rate.toFixed(2)} files/s${halfNote ? `; ${halfNote}` : ""}`);
  // A process killed meanwhile has no CPU figure left to read.
  // (A worker started after the uploads counts from 0: a killed one reads 0, a live one never does.)
  const killed = (used: number) => used < 0 || used === 0;
  const cpuText = cpu.map(({ p, used }) => `${p.name} (core ${p.core ?? "any"}) ${killed(used) ? "killed" : `${used.toFixed(0)} s (${((used / wall) * 100).toFixed(0)} %)`}`);
  const ownSeconds = (ownCpu.user + ownCpu.system) / 1e6;
  cpuText.push(`this script (client${ENGINE === "postgres" && !findVersitygw() ? ", S3 endpoint" : ""}; core ${CORES[0]}) ${ownSeconds.toFixed(0)} s (${((ownSeconds / wall) * 100).toFixed(0)} %)`);
  console.log(`  CPU over the run's ${wall.toFixed(0)} s (each process with its children; PostgreSQL not counted): ${cpuText.join(", ")}`);
  // Each worker's share of the files and its CPU a file (from its log's "job completed" lines of file.process).
  const perWorker = cpu.filter(({ p }) => setup.workers.includes(p)).map(({ p, used }) => {
    const files = filesProcessedBy(p);
    return `${p.name} ${files} files${!killed(used) && files > 0 ? `, ${(used / files).toFixed(3)} s of CPU a file` : ""}`;
  });
  if (perWorker.length) console.log(`  per worker: ${perWorker.join("; ")}`);
  console.log(`  checked: ${statuses}; retried ${verdict.retried}; missing ${verdict.missing.length}, not completed ${verdict.notCompleted.length}, bytes differ ${verdict.bytesDiffer.length}`);
  console.log(`  jobs once settled: ${jobs.completed} completed, ${jobs.failed} failed, ${jobs.cancelled} cancelled`);
  for (const line of [...verdict.missing, ...verdict.notCompleted, ...verdict.bytesDiffer].slice(0, 10)) console.log(`    ${line}`);
  for (const line of outcome.refused.slice(0, 10)) console.log(`    upload refused: ${line}`);
  return { label: setup.label, files: outcome.acknowledged.length, seconds, rate, verdict, refused: outcome.refused, failedJobs: jobs.failed + jobs.cancelled };
}

/** Files whose processing job a worker completed, read from its log. */
function filesProcessedBy(worker: PinnedServer): number {
  if (!existsSync(worker.log)) return 0;
  return readFileSync(worker.log, "utf8").split("\n").filter((line) => line.includes('"msg":"job completed"') && line.includes('"queue":"file.process"')).length;
}

/** Worker i's core: c(1+i) while there are cores left, else wrapped around (see the header). */
function workerCore(cores: number[], i: number): number {
  return cores[(1 + i) % cores.length]!;
}

async function postgresRuns(cores: number[], files: BenchFile[]): Promise<RunOutcome[]> {
  const binaries = findPostgres();
  if ("missing" in binaries) throw new ServerRefused(binaries.missing);
  if (!binaries.vector) throw new ServerRefused(`the PostgreSQL in ${binaries.bin} has no pgvector`);
  const pg: TestPostgres = (postgres = await startPostgres(binaries));
  const outcomes: RunOutcome[] = [];
  try {
    const runs: { label: string; workers: number; kill: boolean }[] = [
      { label: "1 worker", workers: 1, kill: false },
      { label: "2 workers", workers: 2, kill: false },
      { label: "2 workers, one killed -9", workers: 2, kill: true },
    ];
    for (const [n, run] of runs.entries()) {
      const runDir = join(root, `run-${n + 1}`);
      const database = await pg.createDatabase(`scale_${n + 1}`);
      const s3: S3Fixture = (s3Endpoint = await startS3Server());
      try {
        // Processes sharing the database seal secrets with one key (the start refuses otherwise).
        const env = { ...s3.env, MEDIABOX_DATABASE: database, MEDIABOX_CLOUD_TOKEN_KEY: Buffer.alloc(32, 5).toString("base64") };
        const api = await start("api", cores[0]!, { ...env, MEDIABOX_ROLE: "api" }, runDir);
        let workers: PinnedServer[] = [];
        outcomes.push(await measure({
          label: run.label,
          api,
          workers,
          startWorkers: async () =>
            (workers = await Promise.all(Array.from({ length: run.workers }, (_, i) => start(`worker-${i + 1}`, workerCore(cores, i), { ...env, MEDIABOX_ROLE: "worker" }, runDir)))),
          ...(run.kill ? {
            atHalf: async () => {
              await killTree(workers[0]!);
              return `${workers[0]!.name} (pid ${workers[0]!.pid}) killed -9, not restarted`;
            },
          } : {}),
        }, files));
      } finally {
        await stopAll();
        await s3.close();
        s3Endpoint = null;
      }
    }
  } finally {
    await pg.stop();
    postgres = null;
  }
  return outcomes;
}

async function sqliteRuns(cores: number[], files: BenchFile[]): Promise<RunOutcome[]> {
  const core = cores.length > 1 ? cores[1]! : cores[0]!;
  const outcomes: RunOutcome[] = [];
  for (const [n, kill] of [false, true].entries()) {
    const runDir = join(root, `run-${n + 1}`);
    try {
      let all = await start("all", core, { MEDIABOX_ROLE: "all" }, runDir);
      const setup: RunSetup = { label: kill ? "1 process, killed -9 and restarted" : "1 process", api: all, workers: [] };
      if (kill) {
        setup.halfNeedsUploadsDone = true;
        setup.atHalf = async (client) => {
          const pid = all.pid;
          await killTree(all);
          all = await start("all, restarted", core, { MEDIABOX_ROLE: "all" }, runDir, "all");
          // Its CPU is then reported from its start; the killed process's is gone with it.
          setup.api = all;
          client.moveTo(all.server.url);
          return `pid ${pid} killed -9 and restarted as pid ${all.pid}`;
        };
      }
      outcomes.push(await measure(setup, files));
    } finally {
      await stopAll();
    }
  }
  return outcomes;
}

/** The PostgreSQL cluster and S3 endpoint running now, for a stop by Ctrl-C. */
let postgres: TestPostgres | null = null;
let s3Endpoint: S3Fixture | null = null;

let cleaningUp = false;
async function cleanUp(): Promise<void> {
  if (cleaningUp) return;
  cleaningUp = true;
  await stopAll();
  await s3Endpoint?.close();
  await postgres?.stop();
  if (args.keep) console.log(`kept ${root}`);
  else rmSync(root, { recursive: true, force: true });
}
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.on(signal, () => {
    console.error(`bench:scale: ${signal}: stopping the processes it started`);
    void cleanUp().finally(() => process.exit(130));
  });
}

async function main(): Promise<number> {
  const cores = CORES;
  // This script, and PostgreSQL and the S3 endpoint it starts, on the api's core (see the header).
  pinProcess(process.pid, cores[0]!);
  console.log(`bench:scale on ${ENGINE === "postgres" ? `PostgreSQL + S3 (${findVersitygw() ? "versitygw" : "s3rver"})` : "SQLite + local storage (smoke run of the harness)"}, ${FILE_COUNT} files, cores ${cores.join(",")}; load average ${loadavg().map((l) => l.toFixed(1)).join(" ")}`);
  if (cores.length < 2) console.log("  only one core: every process shares it; the ratio means nothing here");
  const made = performance.now();
  const files = await makeMixedFiles(join(root, "files"), FILE_COUNT);
  console.log(`  files: ${describeMix(files)} (made in ${((performance.now() - made) / 1000).toFixed(1)} s)`);
  let outcomes: RunOutcome[];
  try {
    outcomes = ENGINE === "postgres" ? await postgresRuns(cores, files) : await sqliteRuns(cores, files);
  } catch (err) {
    if (!(err instanceof ServerRefused)) throw err;
    console.log(`bench:scale: no figures: ${err.message}`);
    return 1;
  }
  const lost = outcomes.reduce((n, o) => n + lostCount(o.verdict), 0);
  const refused = outcomes.reduce((n, o) => n + o.refused.length, 0);
  const failedJobs = outcomes.reduce((n, o) => n + o.failedJobs, 0);
  console.log(`load average at the end ${loadavg().map((l) => l.toFixed(1)).join(" ")}`);
  if (failedJobs) console.log(`${failedJobs} job(s) failed or were cancelled (listed per run above): the run is not clean`);
  if (refused) console.log(`${refused} upload(s) were not acknowledged (listed above): not counted as lost, but the run is not clean`);
  if (ENGINE === "postgres") {
    const [one, two] = outcomes;
    console.log(`scale: 2 workers ${(two!.rate / one!.rate).toFixed(2)}x of 1, lost ${lost}`);
  } else {
    console.log(`scale (sqlite smoke, 1 process): ${outcomes[0]!.rate.toFixed(2)} files/s, killed -9 and restarted mid-run, lost ${lost}`);
  }
  return lost === 0 && refused === 0 && failedJobs === 0 ? 0 : 1;
}

let code = 1;
try {
  code = await main();
} catch (err) {
  console.error(`bench:scale failed: ${(err as Error).stack ?? err}`);
} finally {
  await cleanUp();
}
process.exit(code);
