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
    (RANK[level] >= RANK.warn ? process.stderr : process.stdout).write(line + "\n");
  }
}

function errorReplacer(_key: string, value: unknown): unknown {
  if (value instanceof Error) return { name: value.name, message: value.message, stack: value.stack };
  return value;
}
