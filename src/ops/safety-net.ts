/**
 * The last line of defence of a running server: an error that escaped every request and job (an
 * 'error' event nobody listened to, a promise nobody awaited, a finalizer that throws) is logged
 * with what is known of it, and the process keeps serving. Without this, one such bug in a
 * library, reached by one hostile request, would end the service for every tenant. Each escape
 * is still a bug to fix: the log line says so, and `escapes` counts them for tests and metrics.
 */
import type { Logger } from "../log.ts";

export class SafetyNet {
  /** Errors caught here since install. */
  escapes = 0;
  private readonly onException = (err: unknown) => this.caught("uncaught exception", err);
  private readonly onRejection = (reason: unknown) => this.caught("unhandled promise rejection", reason);

  constructor(private readonly log: Logger) {}

  install(): this {
    process.on("uncaughtException", this.onException);
    process.on("unhandledRejection", this.onRejection);
    return this;
  }

  uninstall(): void {
    process.off("uncaughtException", this.onException);
    process.off("unhandledRejection", this.onRejection);
  }

  private caught(kind: string, err: unknown): void {
    this.escapes += 1;
    this.log.error(`${kind} (a bug: it escaped its request or job); the server keeps serving`, { err });
  }
}
