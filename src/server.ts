/**
 * Starts and stops one Mediabox server: database, job workers, housekeeping and HTTP listener.
 * The CLI's `serve` and the test suite both go through here.
 */
import { Accounts } from "./accounts/accounts.ts";
import { systemClock, type Clock } from "./clock.ts";
import type { Config } from "./config.ts";
import type { AppContext } from "./context.ts";
import { openDatabase } from "./db/database.ts";
import { createApp } from "./app.ts";
import { lastResortErrorResponse } from "./http/errors.ts";
import { JobRunner, type QueueDefinition } from "./jobs/runner.ts";
import { Logger } from "./log.ts";
import { startMaintenance } from "./ops/maintenance.ts";
import { SafetyNet } from "./ops/safety-net.ts";
import { GroupCommit } from "./db/group-commit.ts";
import { FileRepository } from "./files/file-repository.ts";
import { DataDirInUseError, DataDirLock } from "./ops/data-dir-lock.ts";
import { errorMessage } from "./errors.ts";
import { RateLimiter } from "./ratelimit/limiter.ts";
import { createBlobStore } from "./storage/index.ts";
import { countingErrors } from "./storage/error-counting.ts";
import { Metrics } from "./ops/metrics.ts";
import { DataDir } from "./storage/data-dir.ts";
import { EventHub } from "./events/hub.ts";
import { LibraryEvents } from "./events/library-events.ts";
import { automateProcessedFiles, fileAutomateQueue, rulesApplyQueue } from "./rules/rule-jobs.ts";
import { sendBatchEvents, webhookDeliverQueue, webhookDeps } from "./webhooks/delivery.ts";
import { resealWebhookSecrets } from "./webhooks/webhooks.ts";
import { FolderWatcher } from "./watch/watcher.ts";
import { syncWatchSetting } from "./watch/watched-folders.ts";
import { UploadSlots } from "./ingest/upload-slots.ts";
import { fileProcessingQueue, PipelineRegistry } from "./processing/file-processing.ts";
import { clearScratch } from "./processing/scratch.ts";
import { ImageAnalyzers } from "./images/analyzers.ts";
import { OcrEngine } from "./ocr/ocr.ts";
import { documentEmbedQueue, documentPipeline, resumePendingEmbeddings } from "./documents/document-pipeline.ts";
import { BUILTIN_TEXT_MODEL, builtinTextModel, createTextEmbedding } from "./embeddings/text-models.ts";
import { VocabularyPreparation } from "./embeddings/vocabulary-preparation.ts";
import { WalCheckpointer } from "./db/wal-checkpointer.ts";
import { serverDocumentReader } from "./documents/server-reader.ts";
import { VectorIndex } from "./vectors/vector-index.ts";
import { imagePipeline, imageVariantsQueue } from "./images/image-pipeline.ts";
import { batchIngestQueue, recoverInterruptedUploads } from "./ingest/batch.ts";
import { logModelVerification, ModelVerifier } from "./models/model-verifier.ts";
import { exportExpiryQueue } from "./library/exports.ts";
import { imageEmbedQueue, resumeImageEmbeddings } from "./images/image-embeddings.ts";
import { startScanThreads } from "./vectors/scan-threads.ts";
import { startHashThreads } from "./storage/hash-threads.ts";
import { VideoEngine } from "./video/video-engine.ts";
import { videoPipeline } from "./video/video-pipeline.ts";
import { LinkFetcher } from "./links/link-fetcher.ts";
import { linkPipeline } from "./links/link-pipeline.ts";
import { CloudConnections } from "./cloud/connections.ts";
import { cloudExportQueue, cloudImportQueue, recoverCloudJobs } from "./cloud/cloud-jobs.ts";
import { loadTokenKey, TokenVault } from "./cloud/token-vault.ts";

const MAX_REQUEST_BODY_BYTES = 5 * 1024 ** 3 + 1024 ** 2;

/** The server could not take its data directory or its address; nothing was started. */
export class StartupError extends Error {
  override name = "StartupError";
}

export interface ServerOptions {
  clock?: Clock;
  /** Extra job queues to run (the media pipelines register theirs here). */
  queues?: QueueDefinition<any>[];
}

export interface RunningServer {
  /** Base URL the server listens on, e.g. http://127.0.0.1:8080 */
  url: string;
  port: number;
  ctx: AppContext;
  /** Counts errors that escaped a request or job (each one a bug; the server survives them). */
  safetyNet: SafetyNet;
  stop(): Promise<void>;
}

export function startServer(config: Config, options: ServerOptions = {}): RunningServer {
  const clock = options.clock ?? systemClock;
  const log = new Logger(config.logLevel);
  const dataDir = new DataDir(config.dataDir);
  let lock: DataDirLock;
  try {
    lock = DataDirLock.acquire(dataDir);
  } catch (err) {
    throw err instanceof DataDirInUseError ? new StartupError(err.message) : err;
  }
  const safetyNet = new SafetyNet(log).install();
  const db = openDatabase(dataDir.database);
  clearScratch(dataDir);
  const writes = new GroupCommit(db);
  const jobs = new JobRunner(db, writes, clock, log.child({ component: "jobs" }), { leaseMs: config.jobLeaseSeconds * 1000 });
  for (const queue of options.queues ?? []) jobs.register(queue);
  const metrics = new Metrics(db, clock, dataDir.database);
  const blobs = countingErrors(createBlobStore(config, dataDir, clock), (operation) => metrics.blobStoreErrors.inc({ operation }));
  const events = new EventHub();
  const models = new ModelVerifier(config.modelsDir, { requireManifest: config.modelsRequireManifest });
  const ocr = new OcrEngine({
    workers: config.ocrWorkers,
    languages: config.ocrLanguages,
    modelsDir: config.modelsDir,
    scratchDir: dataDir.scratch,
    check: models.require,
  });
  const ctx: AppContext = {
    config, dataDir, db, writes, files: new FileRepository(db, clock), clock, log, metrics, limiter: new RateLimiter(clock), jobs, blobs,
    uploadSlots: new UploadSlots(), pipelines: new PipelineRegistry(), events, libraryEvents: new LibraryEvents(), models,
    images: new ImageAnalyzers(config, models.require),
    ocr,
    documentReader: serverDocumentReader({ config, dataDir, ocr, log }),
    embedder: createTextEmbedding({ modelsDir: config.modelsDir, model: config.textEmbeddingModel, check: models.require, db }),
    vectors: new VectorIndex(db, clock),
    video: new VideoEngine(config),
    links: new LinkFetcher(config),
    cloud: new CloudConnections(db, clock, config, log.child({ component: "cloud" }), new TokenVault(loadTokenKey(config.cloudTokenKey, dataDir.cloudTokenKey), config.cloudTokenPreviousKeys)),
    accounts: new Accounts(db, clock, config, log.child({ component: "accounts" })),
  };
  ctx.pipelines.register(imagePipeline);
  ctx.pipelines.register(documentPipeline);
  ctx.pipelines.register(videoPipeline);
  ctx.pipelines.register(linkPipeline);
  jobs.register(fileProcessingQueue(ctx, ctx.pipelines));
  jobs.register(imageVariantsQueue(ctx));
  jobs.register(documentEmbedQueue(ctx));
  jobs.register(batchIngestQueue(ctx));
  jobs.register(exportExpiryQueue(ctx));
  jobs.register(imageEmbedQueue(ctx));
  jobs.register(cloudImportQueue(ctx));
  jobs.register(cloudExportQueue(ctx));
  jobs.register(fileAutomateQueue(ctx));
  jobs.register(rulesApplyQueue(ctx));
  jobs.register(webhookDeliverQueue(ctx));
  automateProcessedFiles(ctx);
  sendBatchEvents(ctx);
  recoverInterruptedUploads(ctx);
  recoverCloudJobs(ctx);
  const resealed = ctx.cloud.resealStaleTokens();
  if (resealed) log.info("re-encrypted cloud tokens with the current key", { connections: resealed });
  try {
    syncWatchSetting(db, clock, config.watchDirs);
  } catch (err) {
    db.close();
    safetyNet.uninstall();
    lock.release();
    throw new StartupError(`--watch-dir / MEDIABOX_WATCH_DIR: ${errorMessage(err)}`);
  }
  const watcher = new FolderWatcher(ctx);
  const resealedSecrets = resealWebhookSecrets(webhookDeps(ctx));
  if (resealedSecrets) log.info("re-encrypted webhook secrets with the current key", { webhooks: resealedSecrets });

  // Large enough for a 5 GB single-shot PUT to the local S3 endpoint; JSON routes keep their own 1 MiB cap.
  let app: ReturnType<typeof createApp>;
  try {
    // Elysia asks for SO_REUSEPORT; without turning it off a second server on the same port would
    // "listen" too and the kernel would split requests between two data directories.
    app = createApp(ctx).listen({
      port: config.port,
      hostname: config.host,
      maxRequestBodySize: MAX_REQUEST_BODY_BYTES,
      reusePort: false,
      // Bun's development mode answers an escaped error with its HTML page (stack, source paths).
      development: false,
      error: lastResortErrorResponse(log),
    });
  } catch (err) {
    db.close();
    safetyNet.uninstall();
    lock.release();
    throw new StartupError(`cannot listen on ${config.host}:${config.port}: ${/in use/i.test(errorMessage(err)) ? "the port is already in use (another mediabox or program listens there); stop it or choose another --port" : errorMessage(err)}`);
  }
  const server = app.server;
  if (!server) throw new StartupError("the HTTP server did not start");
  events.attach(server);
  jobs.start();
  watcher.start();
  logModelVerification(models, log);
  resumePendingEmbeddings(ctx).then(
    (n) => n && log.info("queued text embeddings (documents that waited for the model or were embedded by another)", { documents: n }),
    (err) => log.warn("could not check for pending embeddings", { err: String(err) }),
  );
  resumeImageEmbeddings(ctx).then(
    (n) => n && log.info("queued image embeddings with the configured model", { images: n, model: ctx.images.vision.modelName }),
    (err) => log.warn("images embedded by another model stay as they are: the configured model cannot load", { err: String(err) }),
  );
  startScanThreads().catch((err) => log.warn("vector scan threads did not start; scans use one thread", { err: String(err) }));
  startHashThreads().then(
    (n) => n === 0 && log.warn("upload hashing threads did not start; uploads hash on the request thread"),
    (err) => log.warn("upload hashing threads did not start; uploads hash on the request thread", { err: String(err) }),
  );
  const stopMaintenance = startMaintenance(ctx);
  const checkpointer = new WalCheckpointer(db, dataDir.database, log.child({ component: "database" }));
  checkpointer.start();
  const builtinText = builtinTextModel(ctx.embedder);
  // Only when the built-in model is the one configured: a folder model's library never needs it.
  const vocabulary = builtinText && config.textEmbeddingModel === BUILTIN_TEXT_MODEL
    ? new VocabularyPreparation(builtinText, config.textVocabularyWords, log.child({ component: "text-model" }))
    : null;
  if (builtinText) {
    metrics.watchTextModel(() => ({ textWords: builtinText.wordsComputed, preparedWords: builtinText.wordsPrepared, pendingWords: vocabulary?.pendingWords ?? 0 }));
  }
  const port = server.port ?? config.port;
  const host = config.host === "0.0.0.0" || config.host === "::" ? "127.0.0.1" : config.host;
  const url = `http://${host.includes(":") ? `[${host}]` : host}:${port}`;
  log.info("mediabox listening", { url, data_dir: config.dataDir });

  let stopped = false;
  return {
    url,
    port,
    ctx,
    safetyNet,
    async stop() {
      if (stopped) return;
      stopped = true;
      stopMaintenance();
      vocabulary?.stop();
      await watcher.stop();
      await app.stop();
      await jobs.stop();
      await ctx.documentReader.close();
      await ctx.video.close();
      await Promise.allSettled([ctx.images.close(), ctx.ocr.close()]);
      await ctx.embedder.close();
      await ctx.accounts.close();
      await checkpointer.stop();
      db.close();
      safetyNet.uninstall();
      lock.release();
      log.info("mediabox stopped");
    },
  };
}
