/**
 * The appliance's Prometheus metrics (GET /metrics): HTTP requests by route and status with
 * latency, jobs by queue and state, queue depth and the age of the oldest pending job, pipeline
 * stage durations, uploads and their bytes, blob store errors, PDF page pictures drawn or served
 * from their cache, and the database's size. Counters
 * and histograms are observed where things happen; job and database figures are read from the
 * database at scrape time, so they are right whichever process did the work. One registry per server (no
 * global registry), so several servers can run in one process; the process's own figures (CPU,
 * memory, event loop) are collected once per process and merged into each scrape, because
 * prom-client's default collectors cannot be stopped and would pile up with every server started.
 */
import { statSync } from "node:fs";
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics, type LabelValues } from "prom-client";
import type { Clock } from "./clock.ts";
import type { SqlClient } from "./db/sql-client.ts";
import { workerThreadFailures } from "./native/worker-thread.ts";
import { STALL_CAUSES, eventLoopMonitor } from "./native/event-loop-monitor.ts";

let processMetrics: Registry | null = null;

/**
 * prom-client's per-heap-space gauges, left out: Bun answers v8.getHeapSpaceStatistics() by
 * walking its heap, 26-32 ms of the event loop per scrape with a search index loaded (measured),
 * which a Prometheus scrape during an import put into every request's latency. The heap's total
 * size and use stay (mediabox_nodejs_heap_size_*).
 */
const HEAP_SPACE_GAUGES = ["size_total", "size_used", "size_available"].map((figure) => `mediabox_nodejs_heap_space_${figure}_bytes`);

function processRegistry(): Registry {
  if (!processMetrics) {
    processMetrics = new Registry();
    collectDefaultMetrics({ register: processMetrics, prefix: "mediabox_" });
    for (const name of HEAP_SPACE_GAUGES) processMetrics.removeSingleMetric(name);
    watchEventLoop(processMetrics);
  }
  return processMetrics;
}

/**
 * The event loop's lateness, every SAMPLE_MS tick (src/native/event-loop-monitor.ts): unlike
 * prom-client's nodejs_eventloop_lag_* gauges, which each scrape resets, a histogram that any
 * number of scrapers can rate() over their own window; and the stalls' time by cause, which says
 * whether the event loop was held by code (running), by a busy machine (waiting_for_cpu) or by a
 * synchronous system call (blocked).
 */
function watchEventLoop(registry: Registry): void {
  const monitor = eventLoopMonitor();
  const lateness = new Histogram({
    name: "mediabox_event_loop_lateness_seconds",
    help: "How late the event loop ran a timer due every 20 ms: what a request arriving then waited",
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [registry],
  });
  monitor.onLateness((ms) => lateness.observe(ms / 1000));
  new Counter({
    name: "mediabox_event_loop_stall_seconds_total",
    help: "Time the event loop ran 50 ms or more late, by cause: running (code held it), waiting_for_cpu (every core was taken), blocked (a synchronous system call)",
    labelNames: ["cause"] as const,
    registers: [registry],
    collect() {
      this.reset();
      for (const cause of STALL_CAUSES) this.inc({ cause }, monitor.stallTotals[cause] / 1000);
    },
  });
}

/** A gauge read from its source at scrape time: `read` lists every labelled value there is now; labels it no longer lists drop out. */
function scrapedGauge<L extends string>(
  registry: Registry,
  name: string,
  help: string,
  labelNames: readonly L[],
  read: () => Iterable<[LabelValues<L>, number]> | Promise<Iterable<[LabelValues<L>, number]>>,
): void {
  new Gauge({
    name,
    help,
    labelNames,
    registers: [registry],
    async collect() {
      const values = await read();
      this.reset();
      for (const [labels, value] of values) this.set(labels, value);
    },
  });
}

export class Metrics {
  readonly registry = new Registry();

  readonly httpRequests = new Histogram({
    name: "mediabox_http_request_duration_seconds",
    help: "HTTP requests by method, route template and status, with their latency",
    labelNames: ["method", "route", "status"] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [this.registry],
  });

  readonly stageDuration = new Histogram({
    name: "mediabox_stage_duration_seconds",
    help: "Pipeline stage runs by media type, stage and outcome",
    labelNames: ["media_type", "stage", "status"] as const,
    buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300],
    registers: [this.registry],
  });

  readonly uploads = new Counter({
    name: "mediabox_uploads_total",
    help: "Files stored, by upload method and media type",
    labelNames: ["method", "media_type"] as const,
    registers: [this.registry],
  });

  readonly uploadBytes = new Counter({
    name: "mediabox_upload_bytes_total",
    help: "Bytes of the files stored, by upload method and media type",
    labelNames: ["method", "media_type"] as const,
    registers: [this.registry],
  });

  readonly blobStoreErrors = new Counter({
    name: "mediabox_blob_store_errors_total",
    help: "Blob store operations that failed, by operation",
    labelNames: ["operation"] as const,
    registers: [this.registry],
  });

  readonly pageImages = new Counter({
    name: "mediabox_page_images_total",
    help: "Requests for pictures of PDF pages, by outcome: rendered (drawn by the document reader), cached (an earlier drawing), failed",
    labelNames: ["outcome"] as const,
    registers: [this.registry],
  });

  /** `databaseFile`: the SQLite database's path, whose size and log's are reported (none on PostgreSQL). */
  constructor(sql: SqlClient, clock: Clock, databaseFile: string | null) {
    // The process's figures start now (the event loop's are sampled from here on), not at the first scrape.
    processRegistry();
    scrapedGauge(this.registry, "mediabox_jobs", "Jobs in the durable queue by queue and status", ["queue", "status"], async () =>
      (await sql.all<{ queue: string; status: string; n: number }>("SELECT queue, status, count(*) AS n FROM jobs GROUP BY queue, status")).map((row) => [{ queue: row.queue, status: row.status }, row.n]),
    );
    scrapedGauge(this.registry, "mediabox_queue_depth", "Pending jobs that are due, by queue", ["queue"], async () =>
      (await sql.all<{ queue: string; n: number }>("SELECT queue, count(*) AS n FROM jobs WHERE status = 'pending' AND run_at <= ? GROUP BY queue", [clock.now()])).map((row) => [{ queue: row.queue }, row.n]),
    );
    scrapedGauge(this.registry, "mediabox_queue_oldest_pending_age_seconds", "How long the oldest due pending job of each queue has waited", ["queue"], async () => {
      const now = clock.now();
      const rows = await sql.all<{ queue: string; oldest: number }>("SELECT queue, min(run_at) AS oldest FROM jobs WHERE status = 'pending' AND run_at <= ? GROUP BY queue", [now]);
      return rows.map((row) => [{ queue: row.queue }, Math.max(0, (now - row.oldest) / 1000)]);
    });
    scrapedGauge(
      this.registry,
      "mediabox_worker_thread_failures",
      "Worker threads of the process that died or could not start since it started, by thread; their work then runs in a slower fallback",
      ["thread"],
      () => [...workerThreadFailures()].map(([thread, n]) => [{ thread }, n]),
    );
    if (databaseFile === null) return;
    const size = (path: string) => {
      try {
        return statSync(path).size;
      } catch {
        return 0;
      }
    };
    scrapedGauge(this.registry, "mediabox_database_bytes", "Size of the SQLite database and its write-ahead log", ["file"], () => [
      [{ file: "database" }, size(databaseFile)],
      [{ file: "wal" }, size(`${databaseFile}-wal`)],
    ]);
  }

  /** The built-in text model's figures, read from it at scrape time. */
  watchTextModel(read: () => { textWords: number; preparedWords: number; pendingWords: number }): void {
    scrapedGauge(
      this.registry,
      "mediabox_text_model_words_computed",
      "Words run through the built-in text model since start: for texts (words of documents and queries not seen before) and prepared ahead (the common-word vocabulary)",
      ["purpose"],
      () => {
        const figures = read();
        return [
          [{ purpose: "texts" }, figures.textWords],
          [{ purpose: "vocabulary" }, figures.preparedWords],
        ];
      },
    );
    scrapedGauge(this.registry, "mediabox_text_vocabulary_pending_words", "Common words the built-in text model has still to prepare (0 once done or when turned off)", [], () => [[{}, read().pendingWords]]);
  }

  /** The exposition text and its content type. */
  async scrape(): Promise<{ body: string; contentType: string }> {
    const scrape = Registry.merge([processRegistry(), this.registry]);
    return { body: await scrape.metrics(), contentType: this.registry.contentType };
  }
}
