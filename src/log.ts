/**
 * Structured logging: one JSON object per line on stdout (stderr for warn/error), so a site can
 * ship the logs anywhere. Small on purpose; the appliance has no log routing of its own.
 */
import type { LogLevel } from "./config.ts";

const RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export type Fields = Record<string, unknown>;

export class Logger {
  constructor(
    private readonly level: LogLevel,
    private readonly base: Fields = {},
  ) {}

  child(fields: Fields): Logger {
    return new Logger(this.level, { ...this.base, ...fields });
  }

  debug(msg: string, fields?: Fields): void {
    this.write("debug", msg, fields);
  }
  info(msg: string, fields?: Fields): void {
    this.write("info", msg, fields);
  }
  warn(msg: string, fields?: Fields): void {
    this.write("warn", msg, fields);
  }
  error(msg: string, fields?: Fields): void {
    this.write("error", msg, fields);
  }

  private write(level: LogLevel, msg: string, fields?: Fields): void {
    if (RANK[level] < RANK[this.level]) return;
    const line = JSON.stringify({ time: new Date().toISOString(), level, msg, ...this.base, ...fields }, errorReplacer);
    if (RANK[level] >= RANK.warn) {
      // Warnings and errors go out at once (after the lines before them): the process may be about to fail.
      flushLines();
      process.stderr.write(line + "\n");
      return;
    }
    waiting.push(line + "\n");
    if (waiting.length === 1) setImmediate(flushLines);
  }
}

/**
 * Debug and info lines wait for the end of the turn of the event loop and go out in one write: a
 * write a line was ~4 % of the event loop's time in a bulk import (six lines a note). Written
 * before a warning or an error, and when the process exits.
 */
let waiting: string[] = [];

function flushLines(): void {
  if (!waiting.length) return;
  const text = waiting.join("");
  waiting = [];
  process.stdout.write(text);
}
process.on("exit", flushLines);

function errorReplacer(_key: string, value: unknown): unknown {
  if (value instanceof Error) return { name: value.name, message: value.message, stack: value.stack };
  return value;
}
