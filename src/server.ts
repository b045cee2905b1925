/**
 * Starts and stops one Mediabox server: the data directory's lock, the database, the HTTP listener
 * and the WAL checkpoints around the appliance that src/app.ts composes (services, pipelines, job
 * queues, routes, background work). The CLI's `serve` and the test suite both go through here.
 */
import { systemClock, type Clock } from "./clock.ts";
import type { Config } from "./config.ts";
import { openPostgresDatabase, openSqlite, type OpenedDatabase } from "./opened-database.ts";
import { composeAppliance, CompositionError, type AppContext, type Appliance, type KindFactory } from "./app.ts";
import { lastResortErrorResponse } from "./http/errors.ts";
import type { QueueDefinition } from "./jobs/runner.ts";
import { Logger } from "./log.ts";
import { SafetyNet } from "./ops/safety-net.ts";
import { DataDirInUseError, DataDirLock } from "./ops/data-dir-lock.ts";
import { errorMessage } from "./errors.ts";
import { DataDir } from "./storage/data-dir.ts";
import { WalCheckpointer } from "./db/wal-checkpointer.ts";
import { clearScratch } from "./processing/scratch.ts";

const MAX_REQUEST_BODY_BYTES = 5 * 1024 ** 3 + 1024 ** 2;

/** The server could not take its data directory or its address; nothing was started. */
export class StartupError extends Error {
  override name = "StartupError";
}

export interface ServerOptions {
  clock?: Clock;
  /** Extra job queues to run (tests register theirs here). */
  queues?: QueueDefinition<any>[];
  /** Extra media kinds, after the built-in ones (tests register theirs here). */
  kinds?: KindFactory[];
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

export async function startServer(config: Config, options: ServerOptions = {}): Promise<RunningServer> {
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
  let database: OpenedDatabase;
  try {
    database = config.database.kind === "postgres" ? await openPostgresDatabase(config.database.url, dataDir, clock) : openSqlite(dataDir, clock);
  } catch (err) {
    safetyNet.uninstall();
    lock.release();
    throw config.database.kind === "postgres" ? new StartupError(`MEDIABOX_DATABASE: cannot open the PostgreSQL database: ${errorMessage(err)}`) : err;
  }
  clearScratch(dataDir);
  let appliance: Appliance;
  try {
    appliance = composeAppliance({ config, clock, log, dataDir, database, queues: options.queues ?? [], kinds: options.kinds ?? [] });
    await appliance.prepare();
  } catch (err) {
    await database.close();
    safetyNet.uninstall();
    lock.release();
    throw err instanceof CompositionError ? new StartupError(err.message) : err;
  }
  const { ctx } = appliance;

  // Large enough for a 5 GB single-shot PUT to the local S3 endpoint; JSON routes keep their own 1 MiB cap.
  try {
    // Elysia asks for SO_REUSEPORT; without turning it off a second server on the same port would
    // "listen" too and the kernel would split requests between two data directories.
    appliance.http.listen({
      port: config.port,
      hostname: config.host,
      maxRequestBodySize: MAX_REQUEST_BODY_BYTES,
      reusePort: false,
      // Bun's development mode answers an escaped error with its HTML page (stack, source paths).
      development: false,
      error: lastResortErrorResponse(log),
    });
  } catch (err) {
    await database.close();
    safetyNet.uninstall();
    lock.release();
    throw new StartupError(`cannot listen on ${config.host}:${config.port}: ${/in use/i.test(errorMessage(err)) ? "the port is already in use (another mediabox or program listens there); stop it or choose another --port" : errorMessage(err)}`);
  }
  const server = appliance.http.server;
  if (!server) throw new StartupError("the HTTP server did not start");
  ctx.events.attach(server);
  appliance.start();
  const checkpointer = database.file === null ? null : new WalCheckpointer(database.db, database.file, log.child({ component: "database" }));
  checkpointer?.start();
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
      await appliance.stop();
      await checkpointer?.stop();
      await database.close();
      safetyNet.uninstall();
      lock.release();
      log.info("mediabox stopped");
    },
  };
}
