/**
 * The composition root: builds the services the features share (the context), registers the media
 * pipelines and job queues, assembles the HTTP application (error handling, the guard, docs,
 * operations and every feature's /api/v2 routes) and starts and stops the background work.
 * src/server.ts owns the process-level lifecycle around it (data directory lock, database,
 * listener). No other module imports this one.
 */
import type { Database } from "bun:sqlite";
import type { OpenedDatabase } from "./opened-database.ts";
import { Elysia, type AnyElysia } from "elysia";
import { Accounts } from "./accounts/accounts.ts";
import type { Clock } from "./clock.ts";
import { isSharedDeployment, type Config } from "./config.ts";
import { FileRepository } from "./files/file-repository.ts";
import { JobRunner, type QueueDefinition } from "./jobs/runner.ts";
import { JobStore } from "./jobs/job-store.ts";
import type { SqlClient } from "./db/sql-client.ts";
import { BackgroundWork, type PreparingTask } from "./jobs/background-work.ts";
import { assetsReady, isCompiled } from "./native/packages.ts";
import type { Logger } from "./log.ts";
import { startMaintenance } from "./ops/maintenance.ts";
import { Metrics } from "./metrics.ts";
import { eventLoopMonitor, LONG_STALL_MS } from "./native/event-loop-monitor.ts";
import { RateLimiter, type RateLimits } from "./ratelimit/limiter.ts";
import { SharedRateLimiter } from "./ratelimit/shared-limiter.ts";
import { createBlobStore } from "./storage/index.ts";
import { countingErrors } from "./storage/error-counting.ts";
import type { DataDir } from "./storage/data-dir.ts";
import { EventHub } from "./events/hub.ts";
import { LibraryEvents } from "./events/library-events.ts";
import { automateProcessedFiles, fileAutomateQueue, fileSchemaQueue, rulesApplyQueue, rulesLearnQueue } from "./rules/rule-jobs.ts";
import { sendBatchEvents, webhookDeliverQueue, webhookDeps } from "./webhooks/delivery.ts";
import { resealWebhookSecrets } from "./webhooks/webhooks.ts";
import { FolderWatcher } from "./watch/watcher.ts";
import { syncWatchSetting } from "./watch/watched-folders.ts";
import { MailScheduler, mailPollQueue } from "./mail/mail-intake.ts";
import { resealMailPasswords } from "./mail/mail-accounts.ts";
import { mailRoutes } from "./mail/routes.ts";
import { LocalUploadSlots, type UploadSlots } from "./ingest/upload-slots.ts";
import { SharedUploadSlots } from "./ingest/shared-upload-slots.ts";
import { SlotLeases } from "./db/slot-leases.ts";
import { LeasedLimiter } from "./db/leased-limiter.ts";
import { fileProcessingQueue } from "./processing/file-processing.ts";
import { LocalProgressBoard, RelayedProgressBoard, type ProgressBoard } from "./processing/progress-board.ts";
import { type MediaKind, MediaKinds } from "./kinds/media-kind.ts";
import { migrateOwned } from "./db/owned-migrations.ts";
import type { BuiltinMediaType } from "./files/file.ts";
import { imageKind } from "./images/kind.ts";
import { documentKind } from "./documents/kind.ts";
import { videoKind } from "./video/kind.ts";
import { linkKind } from "./links/kind.ts";
import { ImageAnalyzers } from "./images/analyzers.ts";
import { OcrEngine } from "./ocr/ocr.ts";
import { OcrRouter } from "./ocr/ocr-router.ts";
import { documentEmbedQueue, resumePendingEmbeddings } from "./documents/document-pipeline.ts";
import { BUILTIN_TEXT_MODEL, builtinTextModel, createTextEmbedding } from "./embeddings/text-models.ts";
import { VocabularyPreparation } from "./embeddings/vocabulary-preparation.ts";
import { serverDocumentReader } from "./documents/server-reader.ts";
import type { VectorSpaces } from "./vectors/vector-spaces.ts";
import { imageVariantsQueue } from "./images/image-pipeline.ts";
import { batchIngestQueue, recoverInterruptedUploads } from "./ingest/batch.ts";
import { logModelVerification, ModelVerifier } from "./models/model-verifier.ts";
import { exportExpiryQueue } from "./library/exports.ts";
import { imageEmbedQueue, resumeImageEmbeddings } from "./images/image-embeddings.ts";
import { startScanThreads } from "./vectors/scan-threads.ts";
import { startHashThreads } from "./storage/hash-threads.ts";
import { VideoEngine } from "./video/video-engine.ts";
import { LinkFetcher } from "./links/link-fetcher.ts";
import { CloudConnections } from "./cloud/connections.ts";
import { cloudExportQueue, cloudImportQueue, recoverCloudJobs } from "./cloud/cloud-jobs.ts";
import { loadTokenKey, TokenVault } from "./cloud/token-vault.ts";
import { errorMessage } from "./errors.ts";
import { datasetRoutes } from "./datasets/routes.ts";
import { folderRoutes } from "./folders/routes.ts";
import { intentRoutes } from "./ingest/intent-routes.ts";
import { ingestRoutes } from "./ingest/routes.ts";
import { jobRoutes } from "./jobs/routes.ts";
import { duplicateRoutes } from "./library/duplicate-routes.ts";
import { peopleClusterQueue } from "./people/people-jobs.ts";
import { peopleRoutes } from "./library/people-routes.ts";
import { photoLibraryRoutes } from "./library/photo-routes.ts";
import { libraryRoutes } from "./library/routes.ts";
import { trashRoutes } from "./library/trash-routes.ts";
import { exportRoutes } from "./library/export-routes.ts";
import { imageRoutes } from "./images/routes.ts";
import { similarRoutes } from "./library/similar-routes.ts";
import { documentRoutes } from "./documents/routes.ts";
import { linkRoutes } from "./links/routes.ts";
import { processingRoutes } from "./processing/routes.ts";
import { projectRoutes } from "./projects/routes.ts";
import { customSchemaRoutes } from "./custom-schemas/routes.ts";
import { localS3Routes } from "./storage/local-s3-endpoint.ts";
import { telemetryRoutes } from "./telemetry/routes.ts";
import { cloudRoutes } from "./cloud/routes.ts";
import { apiKeyRoutes } from "./accounts/api-key-routes.ts";
import { identityProviderRoutes } from "./accounts/identity-provider-routes.ts";
import { invitationRoutes } from "./accounts/invitation-routes.ts";
import { memberRoutes } from "./accounts/member-routes.ts";
import { sessionRoutes } from "./accounts/session-routes.ts";
import { supportRoutes } from "./support/routes.ts";
import { paymentRoutes } from "./payments/routes.ts";
import { ruleRoutes } from "./rules/routes.ts";
import { webhookRoutes } from "./webhooks/routes.ts";
import { watchRoutes } from "./watch/routes.ts";
import { errorHandler } from "./http/errors.ts";
import { requestMetrics } from "./ops/request-metrics.ts";
import { headLimit } from "./http/head-limit.ts";
import { API_PREFIX } from "./http/api-prefix.ts";
import { guard } from "./edge/guard.ts";
import { docsRoutes } from "./http/docs.ts";
import { securityHeaders } from "./http/security-headers.ts";
import { infrastructureRoutes } from "./ops/routes.ts";
import { dashboardRoutes } from "./dashboard/routes.ts";
import type { TextEmbedding } from "./embeddings/text-embedder.ts";
import type { DocumentReader } from "./documents/document-reader.ts";
import { signedUrlOrigin, type BlobStore } from "./storage/blob-store.ts";
import { BROWSER_UPLOAD_RULE } from "./storage/bucket-cors.ts";

/**
 * Every service the appliance shares, built once per server by createContext below (no
 * module-level singletons, so tests can run several servers side by side). Features never see
 * this type: each declares the services it uses (its deps.ts or a parameter type), which this
 * context satisfies.
 */
export interface AppContext {
  config: Config;
  /** Where everything under --data-dir lives; the only builder of paths there. */
  dataDir: DataDir;
  /**
   * SQLite's handle, which no feature uses (they all go through `sql`): the tests read rows
   * through it. On PostgreSQL it refuses every use (src/opened-database.ts).
   */
  db: Database;
  /**
   * The data-access port (docs/scale-out.md): SQLite's client, whose writes and transactions join
   * the turn's group commit, or PostgreSQL's pool. Every feature reads and writes through it.
   */
  sql: SqlClient;
  /** The only writer of the `files` table. */
  files: FileRepository;
  clock: Clock;
  log: Logger;
  /** Prometheus metrics observed where things happen (GET /metrics). */
  metrics: Metrics;
  limiter: RateLimits;
  jobs: JobRunner;
  /** Files being analysed, which work that can wait (model preparation, re-embedding) gives way to. */
  background: BackgroundWork;
  blobs: BlobStore;
  uploadSlots: UploadSlots;
  /** The media kinds (images, documents, videos, links) and what each does with its files. */
  kinds: MediaKinds;
  /** Checks model folders against the models directory's manifest before they load. */
  models: ModelVerifier;
  /** Image models (detectors, embeddings, captioning), loaded lazily. */
  images: ImageAnalyzers;
  /** Text recognition for images, scanned pages and video frames (PP-OCR or tesseract by kind), loaded lazily. */
  ocr: OcrRouter;
  /** Sentence-embedding model and its tokenizer for document chunks and search, loaded lazily. */
  embedder: TextEmbedding;
  /** Reads documents in a killable child process (started on first use). */
  documentReader: DocumentReader;
  /** The vector spaces (vectors/vector-spaces.ts): sqlite-vec and their in-memory scans, writes outside a transaction joining the turn's group commit. */
  spaces: VectorSpaces;
  /** ffmpeg and ffprobe for videos, found on first use. */
  video: VideoEngine;
  events: EventHub;
  /** The live progress of the files being analysed: kept in this process, or relayed between the processes sharing the database. */
  progress: ProgressBoard;
  /** What happens in the library (a file processed, a batch finished), for rules and webhooks to react to. */
  libraryEvents: LibraryEvents;
  /** The link crawler's fetch policy and per-domain politeness. */
  links: LinkFetcher;
  /** Cloud drive providers, OAuth flows and connections (their tokens, refreshes, picker). */
  cloud: CloudConnections;
  /** Users, sessions, sign-in flows, their mailer and the site's identity provider. */
  accounts: Accounts;
}

/** Every media kind the appliance knows, each built from the services by its own folder. */
const KINDS = [imageKind, documentKind, videoKind, linkKind];

/** Builds a media kind from the services (a built-in kind's folder, or a test's kind). */
export type KindFactory = (ctx: AppContext) => MediaKind;

/** The built-in kinds' types are exactly files/file.ts's BUILTIN_MEDIA_TYPES: a kind added to one and not the other does not compile. */
type KindTypes = ReturnType<(typeof KINDS)[number]>["type"];
const sameTypes: [KindTypes] extends [BuiltinMediaType] ? ([BuiltinMediaType] extends [KindTypes] ? true : never) : never = true;
void sameTypes;

/** What the server has opened before the appliance is composed. */
export interface Foundation {
  config: Config;
  clock: Clock;
  log: Logger;
  dataDir: DataDir;
  database: OpenedDatabase;
  /** Extra job queues to run (tests register theirs here). */
  queues?: QueueDefinition<any>[];
  /** Extra media kinds, registered after the built-in ones (tests register theirs here). */
  kinds?: KindFactory[];
}

/** The composed appliance: its context and HTTP application, and the work running beside them. */
export interface Appliance {
  ctx: AppContext;
  http: AnyElysia;
  /**
   * Applies the settings that name rows (MEDIABOX_WATCH_DIR's organizations, projects and folders)
   * and recovers interrupted batch uploads before anything starts; a CompositionError names the
   * setting that cannot be taken.
   */
  prepare(): Promise<void>;
  /** Starts the job workers, the folder watcher and the housekeeping once the HTTP server listens. */
  start(): void;
  /** Stops the background work, the HTTP server and the jobs, then closes the shared services. */
  stop(): Promise<void>;
}

/** A setting names something the appliance cannot take (a watched folder); nothing was started. */
export class CompositionError extends Error {
  override name = "CompositionError";
}

/** Builds every service the features share, once per server. */
export function createContext({ config, clock, log, dataDir, database, queues = [] }: Foundation): AppContext {
  const { db, sql, spaces } = database;
  const background = new BackgroundWork();
  const jobs = new JobRunner(new JobStore(sql), clock, log.child({ component: "jobs" }), { leaseMs: config.jobLeaseSeconds * 1000, background });
  for (const queue of queues) jobs.register(queue);
  const metrics = new Metrics(sql, clock, database.file);
  const blobs = countingErrors(createBlobStore(config, dataDir, clock), (operation) => metrics.blobStoreErrors.inc({ operation }));
  const models = new ModelVerifier(config.modelsDir, { requireManifest: config.modelsRequireManifest });
  const ocr = new OcrRouter(
    new OcrEngine({
      workers: config.ocrWorkers,
      languages: config.ocrLanguages,
      modelsDir: config.modelsDir,
      scratchDir: dataDir.scratch,
      check: models.require,
    }),
    config.ocrEngine === "auto" ? { modelsDir: config.modelsDir, check: models.require } : {},
  );
  // Limits that must hold across the processes sharing the database count there.
  const shared = isSharedDeployment(config);
  const slotLeases = shared ? new SlotLeases(sql, clock) : null;
  return {
    config, dataDir, db, sql, files: new FileRepository(sql, clock), clock, log, metrics, limiter: shared ? new SharedRateLimiter(sql, clock) : new RateLimiter(clock), jobs, background, blobs,
    uploadSlots: slotLeases ? new SharedUploadSlots(slotLeases) : new LocalUploadSlots(), kinds: new MediaKinds(), events: new EventHub((err) => log.warn("a real-time message could not be relayed to the other processes", { err: String(err) })), libraryEvents: new LibraryEvents(), models,
    images: new ImageAnalyzers(config, models.require),
    ocr,
    documentReader: serverDocumentReader({ config, dataDir, ocr, log }),
    embedder: createTextEmbedding({ modelsDir: config.modelsDir, model: config.textEmbeddingModel, check: models.require, db: database.textCache }),
    spaces,
    progress: progressBoard(config, sql, clock, log),
    video: new VideoEngine(config),
    links: new LinkFetcher(config, slotLeases ? new LeasedLimiter(slotLeases, config.linkDomainConcurrency, (key) => `link ${key}`) : undefined),
    cloud: new CloudConnections(sql, clock, config, log.child({ component: "cloud" }), new TokenVault(loadTokenKey(config.cloudTokenKey, dataDir.cloudTokenKey), config.cloudTokenPreviousKeys)),
    accounts: new Accounts(sql, clock, config, log.child({ component: "accounts" })),
  };
}

/**
 * Where a file's live progress is kept: in the process on its own (no database traffic), or, when
 * processes share the database, relayed from the worker running the file to the api processes
 * answering about it (a worker only sends: it answers no request).
 */
function progressBoard(config: Config, sql: SqlClient, clock: Clock, log: Logger): ProgressBoard {
  if (!isSharedDeployment(config)) return new LocalProgressBoard();
  return new RelayedProgressBoard(sql, clock, {
    receives: config.role !== "worker",
    onError: (err) => log.warn("a file's progress could not be relayed to the other processes", { err: String(err) }),
  });
}

/** The media kinds, the job queues, the reactions to library events and the recoveries after a restart. */
function registerWork(ctx: AppContext, extraKinds: KindFactory[]): void {
  const { jobs, log } = ctx;
  for (const factory of [...KINDS, ...extraKinds]) {
    const kind = factory(ctx);
    ctx.kinds.register(kind);
  }
  jobs.register(fileProcessingQueue(ctx, ctx.kinds));
  jobs.register(imageVariantsQueue(ctx));
  jobs.register(documentEmbedQueue(ctx));
  jobs.register(batchIngestQueue(ctx));
  jobs.register(exportExpiryQueue(ctx));
  jobs.register(imageEmbedQueue(ctx));
  jobs.register(cloudImportQueue(ctx));
  jobs.register(cloudExportQueue(ctx));
  jobs.register(fileAutomateQueue(ctx));
  jobs.register(rulesApplyQueue(ctx));
  jobs.register(rulesLearnQueue(ctx));
  jobs.register(fileSchemaQueue(ctx));
  jobs.register(webhookDeliverQueue(ctx));
  jobs.register(mailPollQueue(ctx));
  jobs.register(peopleClusterQueue(ctx));
  automateProcessedFiles(ctx);
  sendBatchEvents(ctx);
  ctx.cloud.resealStaleTokens().then(
    (n) => n && log.info("re-encrypted cloud tokens with the current key", { connections: n }),
    (err) => log.warn("cloud tokens sealed with the previous key stay so until the next start", { err: String(err) }),
  );
  // Deliveries meanwhile still open secrets sealed with the previous key.
  resealWebhookSecrets(webhookDeps(ctx)).then(
    (n) => n && log.info("re-encrypted webhook secrets with the current key", { webhooks: n }),
    (err) => log.warn("webhook secrets sealed with the previous key stay so until the next start", { err: String(err) }),
  );
  resealMailPasswords(ctx.sql, ctx.cloud.vault).then(
    (n) => n && log.info("re-encrypted mail account passwords with the current key", { accounts: n }),
    (err) => log.warn("mail account passwords sealed with the previous key stay so until the next start", { err: String(err) }),
  );
}

export function composeAppliance(foundation: Foundation): Appliance {
  const ctx = createContext(foundation);
  registerWork(ctx, foundation.kinds ?? []);
  const { config, jobs, log, metrics } = ctx;
  const watcher = new FolderWatcher(ctx);
  const mail = new MailScheduler(ctx);
  const http = createApp(ctx);
  let stopMaintenance = () => {};
  let stopStallLog = () => {};
  let vocabulary: VocabularyPreparation | null = null;
  return {
    ctx,
    http,
    async prepare() {
      // Before any pipeline or view can run: the kinds' own tables exist from the first request on.
      for (const kind of ctx.kinds.all()) if (kind.tables) await migrateOwned(ctx.sql, `kind:${kind.type}`, kind.tables);
      // Processes sharing a database deliver each other's real-time messages (a worker's batch progress to the api's clients).
      if (isSharedDeployment(config)) await ctx.events.relayThrough(ctx.sql);
      await ctx.progress.open();
      // Unfinished cloud jobs whose runner job is gone get it back before any worker starts.
      const requeued = await recoverCloudJobs(ctx);
      if (requeued) log.info("resumed unfinished cloud jobs", { jobs: requeued });
      try {
        await syncWatchSetting(ctx.sql, ctx.clock, config.watchDirs);
      } catch (err) {
        throw new CompositionError(`--watch-dir / MEDIABOX_WATCH_DIR: ${errorMessage(err)}`);
      }
      // Before the first request stages a batch: staged bytes no session acknowledged are dropped.
      await recoverInterruptedUploads(ctx);
    },
    start() {
      // An api process enqueues jobs for the workers sharing its database; it runs none itself.
      if (config.role !== "api") jobs.start();
      watcher.start();
      mail.start();
      // Once the hashing threads answer (or cannot start), so the models' files are hashed there, not on the event loop.
      startHashThreads().catch(() => 0).finally(() => logModelVerification(ctx.models, log));
      stopStallLog = eventLoopMonitor().onStall(({ lateMs, causes }) =>
        log[lateMs >= LONG_STALL_MS ? "warn" : "debug"]("the event loop was held; every request waited", {
          ms: Math.round(lateMs), running_ms: Math.round(causes.running), waiting_for_cpu_ms: Math.round(causes.waiting_for_cpu), blocked_ms: Math.round(causes.blocked),
        }),
      );
      // Warn level: shown at the default log level, on stderr beside the other notes for the administrator.
      // Not by a worker: it serves no dashboard, and its token is one no api process would take.
      if (config.role !== "worker") {
        warnIfBrowsersCannotUpload(ctx.blobs, config.publicUrl, log);
        ctx.accounts.firstRun
          .open()
          .then(async (open) => {
            if (!open) return;
            log.warn("first run: no user exists yet; open the dashboard on this machine to create the owner, or from another machine with this setup token", {
              setup_token: await ctx.accounts.firstRun.token(), ...(config.publicUrl ? { url: config.publicUrl } : {}),
            });
          })
          .catch((err) => log.warn("could not check whether the appliance has its owner", { err: String(err) }));
      }
      resumePendingEmbeddings(ctx).then(
        (n) => n && log.info("queued text embeddings (documents that waited for the model or were embedded by another)", { documents: n }),
        (err) => log.warn("could not check for pending embeddings", { err: String(err) }),
      );
      resumeImageEmbeddings(ctx).then(
        (n) => n && log.info("queued image embeddings with the configured model", { images: n, model: ctx.images.vision.modelName }),
        (err) => log.warn("images embedded by another model stay as they are: the configured model cannot load", { err: String(err) }),
      );
      startScanThreads().catch((err) => log.warn("vector scan threads did not start; scans use one thread", { err: String(err) }));
      // The compiled binary's media code and models, written out before the first file needs them.
      // The compiled binary's media code and models, written out in the background while requests
      // are answered; each consumer awaits assetsReady() for its part, /readyz shows the progress.
      if (isCompiled) {
        let unpack: PreparingTask | undefined;
        const ready = assetsReady((done, total) => (unpack ??= ctx.background.preparing("unpacking", "media assets and models")).progress(done, total));
        ready.then(
          () => unpack?.end(),
          (err) => {
            unpack?.end();
            log.warn("the media assets were not unpacked in the background; the first file that needs them tries again", { err: String(err) });
          },
        );
      }
      startHashThreads().then(
        (n) => n === 0 && log.warn("upload hashing threads did not start; uploads hash on the request thread"),
        (err) => log.warn("upload hashing threads did not start; uploads hash on the request thread", { err: String(err) }),
      );
      stopMaintenance = startMaintenance(ctx);
      const builtinText = builtinTextModel(ctx.embedder);
      // Only when the built-in model is the one configured: a folder model's library never needs it.
      vocabulary = builtinText && config.textEmbeddingModel === BUILTIN_TEXT_MODEL
        ? new VocabularyPreparation(builtinText, config.textVocabularyWords, log.child({ component: "text-model" }), ctx.background)
        : null;
      if (builtinText) {
        metrics.watchTextModel(() => ({ textWords: builtinText.wordsComputed, preparedWords: builtinText.wordsPrepared, pendingWords: vocabulary?.pendingWords ?? 0 }));
      }
    },
    async stop() {
      stopMaintenance();
      stopStallLog();
      vocabulary?.stop();
      await watcher.stop();
      await mail.stop();
      // Requests in flight get a few seconds to finish; then their connections are closed (a
      // client's event stream or a stalled upload would otherwise hold the stop for ever).
      const graceMs = ctx.config.shutdownGraceSeconds * 1000;
      const drained = http.stop();
      if (!(await Promise.race([drained.then(() => true), Bun.sleep(Math.min(5_000, graceMs / 4)).then(() => false)]))) await http.stop(true);
      // Running jobs get up to half the grace period to hand their work back; closing the rest takes the remainder.
      await jobs.stop(Math.min(10_000, graceMs / 2));
      // After the jobs: each run that stopped has sent its end.
      await ctx.progress.close();
      await ctx.events.close();
      await ctx.documentReader.close();
      await ctx.video.close();
      await Promise.allSettled([ctx.images.close(), ctx.ocr.close()]);
      await ctx.embedder.close();
      await ctx.accounts.close();
      await ctx.blobs.close();
    },
  };
}

export function createApp(ctx: AppContext) {
  // A worker process answers only probes and metrics; requests go to the api processes.
  if (ctx.config.role === "worker") {
    return new Elysia({ name: "mediabox", normalize: "typebox" })
      .use(securityHeaders())
      .use(errorHandler(ctx.log))
      .use(guard(ctx))
      .use(infrastructureRoutes(ctx)) as AnyElysia;
  }
  return fullApp(ctx);
}

function fullApp(ctx: AppContext) {
  const api = new Elysia({ prefix: API_PREFIX })
    .use(projectRoutes(ctx))
    .use(folderRoutes(ctx))
    .use(ingestRoutes(ctx))
    .use(intentRoutes(ctx))
    .use(trashRoutes(ctx))
    .use(exportRoutes(ctx))
    .use(libraryRoutes(ctx))
    .use(photoLibraryRoutes(ctx))
    .use(duplicateRoutes(ctx))
    .use(peopleRoutes(ctx))
    .use(imageRoutes(ctx))
    .use(similarRoutes(ctx))
    .use(documentRoutes(ctx))
    .use(linkRoutes(ctx))
    .use(processingRoutes(ctx))
    .use(jobRoutes(ctx))
    .use(customSchemaRoutes(ctx))
    .use(telemetryRoutes(ctx))
    .use(cloudRoutes(ctx))
    .use(datasetRoutes())
    .use(sessionRoutes(ctx))
    .use(identityProviderRoutes(ctx))
    .use(memberRoutes(ctx))
    .use(invitationRoutes(ctx))
    .use(apiKeyRoutes(ctx))
    .use(supportRoutes(ctx))
    .use(paymentRoutes(ctx))
    .use(ruleRoutes(ctx))
    .use(webhookRoutes(ctx))
    .use(watchRoutes(ctx))
    .use(mailRoutes(ctx));
  // "typebox" normalization rejects values of the wrong type; the default one coerces them
  // (a string sent for an object field would arrive as {"0": "s", ...}).
  const app: AnyElysia = new Elysia({ name: "mediabox", normalize: "typebox" })
    .use(securityHeaders())
    .use(requestMetrics(ctx.metrics))
    .use(errorHandler(ctx.log))
    .use(headLimit(ctx.log))
    .use(guard(ctx))
    .use(docsRoutes(() => app))
    .use(infrastructureRoutes(ctx))
    .use(dashboardRoutes(() => signedUrlOrigin(ctx.blobs)))
    .use(api);
  // Only a store whose presigned URLs point back at the appliance needs the endpoint they address.
  const endpoint = ctx.blobs.localEndpoint();
  if (endpoint) app.use(localS3Routes(endpoint, ctx.clock, ctx.config.publicUrl, ctx.log));
  return app;
}

export type App = ReturnType<typeof createApp>;

/** The dashboard sends large files straight to a bucket: say at start when its CORS rules would make the browser refuse. */
function warnIfBrowsersCannotUpload(blobs: BlobStore, publicUrl: string | null, log: Logger): void {
  const store = blobs.crossOriginStore();
  if (!store) return;
  store.browserUploadGap(publicUrl ? new URL(publicUrl).origin : null).then(
    (gap) => gap && log.warn("the dashboard cannot upload large files to the bucket: its browser requests would be refused; apply the CORS rule in the README (Scaling out)", { problem: gap, rule: BROWSER_UPLOAD_RULE }),
    (err) => log.warn("could not check the bucket's CORS rules", { err: String(err) }),
  );
}
