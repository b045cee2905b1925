/**
 * Runtime configuration: one typed object built from command-line flags, then environment
 * variables, then embedded defaults (in that order of precedence). Every setting has a flag
 * and a MEDIABOX_* variable of the same name; the README's configuration table lists them.
 */
import { resolve } from "node:path";

export type LogLevel = "debug" | "info" | "warn" | "error";

export interface Config {
  port: number;
  host: string;
  dataDir: string;
  modelsDir: string;
  /** Base URL clients use to reach the server (for signed URLs behind a proxy); null = derive from the request. */
  publicUrl: string | null;
  logLevel: LogLevel;
  /** Peers whose X-Forwarded-For header is believed. Empty means the header is ignored. */
  trustedProxies: string[];
  /** Requests per minute per source IP for requests without a valid API key. */
  unauthenticatedRateLimit: number;
  /** How long a worker owns a job without heartbeating before another worker may take it over. */
  jobLeaseSeconds: number;
}

interface Setting<K extends keyof Config> {
  key: K;
  flag: string;
  env: string;
  parse: (raw: string) => Config[K];
  /** Raw default, parsed like a user value; null when the setting has no value by default. */
  fallback: string | null;
  /** Value when fallback is null. */
  unset?: Config[K];
}

const LOG_LEVELS: LogLevel[] = ["debug", "info", "warn", "error"];

function integer(min: number, max: number) {
  return (raw: string): number => {
    const n = Number(raw);
    if (!Number.isInteger(n) || n < min || n > max) {
      throw new ConfigError(`expected an integer from ${min} to ${max}, got "${raw}"`);
    }
    return n;
  };
}

const text = (raw: string): string => raw;

const SETTINGS: { [K in keyof Config]: Setting<K> } = {
  port: { key: "port", flag: "port", env: "MEDIABOX_PORT", parse: integer(0, 65535), fallback: "8080" },
  host: { key: "host", flag: "host", env: "MEDIABOX_HOST", parse: text, fallback: "0.0.0.0" },
  dataDir: { key: "dataDir", flag: "data-dir", env: "MEDIABOX_DATA_DIR", parse: (r) => resolve(r), fallback: "data" },
  modelsDir: { key: "modelsDir", flag: "models-dir", env: "MEDIABOX_MODELS_DIR", parse: (r) => resolve(r), fallback: "models" },
  publicUrl: {
    key: "publicUrl",
    flag: "public-url",
    env: "MEDIABOX_PUBLIC_URL",
    parse: (raw) => {
      try {
        return new URL(raw).toString().replace(/\/$/, "");
      } catch {
        throw new ConfigError(`expected an absolute URL, got "${raw}"`);
      }
    },
    fallback: null,
    unset: null,
  },
  logLevel: {
    key: "logLevel",
    flag: "log-level",
    env: "MEDIABOX_LOG_LEVEL",
    parse: (raw) => {
      if (!LOG_LEVELS.includes(raw as LogLevel)) throw new ConfigError(`expected one of ${LOG_LEVELS.join(", ")}`);
      return raw as LogLevel;
    },
    fallback: "info",
  },
  trustedProxies: {
    key: "trustedProxies",
    flag: "trusted-proxies",
    env: "MEDIABOX_TRUSTED_PROXIES",
    parse: (raw) => raw.split(",").map((s) => s.trim()).filter(Boolean),
    fallback: "",
  },
  unauthenticatedRateLimit: {
    key: "unauthenticatedRateLimit",
    flag: "unauthenticated-rate-limit",
    env: "MEDIABOX_UNAUTHENTICATED_RATE_LIMIT",
    // Capped below the FREE tier's 10/min: the spec requires anonymous traffic to get less than any tier.
    parse: integer(1, 9),
    fallback: "5",
  },
  jobLeaseSeconds: {
    key: "jobLeaseSeconds",
    flag: "job-lease-seconds",
    env: "MEDIABOX_JOB_LEASE_SECONDS",
    parse: integer(1, 3600),
    fallback: "30",
  },
};

export class ConfigError extends Error {}

/** Flag names accepted by every CLI command (each takes a value). */
export const CONFIG_FLAGS = Object.values(SETTINGS).map((s) => s.flag);

export function loadConfig(
  flags: Record<string, string | undefined> = {},
  env: Record<string, string | undefined> = process.env,
): Config {
  const config = {} as Record<keyof Config, unknown>;
  for (const setting of Object.values(SETTINGS) as Setting<keyof Config>[]) {
    const given = flags[setting.flag] ?? env[setting.env];
    const raw = given === undefined || given === "" ? setting.fallback : given;
    if (raw === null) {
      config[setting.key] = setting.unset;
      continue;
    }
    try {
      config[setting.key] = setting.parse(raw);
    } catch (err) {
      const why = err instanceof Error ? err.message : String(err);
      throw new ConfigError(`--${setting.flag} / ${setting.env}: ${why}`);
    }
  }
  return config as unknown as Config;
}

export function describeSettings(): { flag: string; env: string; fallback: unknown }[] {
  return Object.values(SETTINGS).map((s) => ({ flag: s.flag, env: s.env, fallback: s.fallback }));
}
