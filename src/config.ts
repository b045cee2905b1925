/**
 * Runtime configuration: one typed object built from command-line flags, then environment
 * variables, then embedded defaults (in that order of precedence). Every setting has a flag
 * and a MEDIABOX_* variable of the same name; the README's configuration table lists them.
 */
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { embeddedModelsDir } from "./native/packages.ts";

/** The default text embedding model: a folder of the models directory (scripts/models/catalogue.ts installs it). */
export const DEFAULT_TEXT_MODEL = "bge-small-en-v1.5";
import { errorMessage } from "./errors.ts";
import { type AllowedCidr, parseAllowedCidrs } from "./net/url-policy.ts";

export type LogLevel = "debug" | "info" | "warn" | "error";

export interface Config {
  port: number;
  host: string;
  dataDir: string;
  modelsDir: string;
  /** Refuse model folders that the models directory's manifest.json does not list. */
  modelsRequireManifest: boolean;
  /** Base URL clients use to reach the server (for signed URLs behind a proxy); null = derive from the request. */
  publicUrl: string | null;
  logLevel: LogLevel;
  /** Peers whose X-Forwarded-For header is believed. Empty means the header is ignored. */
  trustedProxies: string[];
  /** Requests per minute per source IP for requests without a valid API key. */
  unauthenticatedRateLimit: number;
  /** How long a worker owns a job without heartbeating before another worker may take it over. */
  jobLeaseSeconds: number;
  /**
   * Where rows live: the data directory's SQLite file, or a PostgreSQL database several processes
   * share (docs/scale-out.md).
   */
  database: DatabaseLocation;
  /** What this process does: serve the API, run jobs, or both. */
  role: ProcessRole;
  /** This is the only process using the database (a PostgreSQL database may then keep blobs on local disk). */
  singleProcess: boolean;
  /** Where blobs live: the local disk under the data dir, or an S3-compatible object store. */
  storage: "local" | "s3";
  s3Bucket: string | null;
  s3Region: string;
  /** Custom endpoint for S3-compatible servers (MinIO, Ceph, ...); null = AWS. */
  s3Endpoint: string | null;
  /** Credentials; null = the AWS SDK's default chain (AWS_* variables, profiles, instance roles). */
  s3AccessKeyId: string | null;
  s3SecretAccessKey: string | null;
  s3ForcePathStyle: boolean;
  /** Lifetime of an upload intent and its presigned URLs. */
  uploadIntentTtlSeconds: number;
  /** Folder (under modelsDir) of a CLIP-style image model for similar images; null = built-in MobileNetV2 features. */
  imageEmbeddingModel: string | null;
  /** Folder (under modelsDir) of an image-captioning model; null = descriptions composed from the built-in detectors. */
  captionModel: string | null;
  /** OpenAI-compatible API base (e.g. http://127.0.0.1:11434/v1) for image descriptions; null = local models only. */
  visionEndpointUrl: string | null;
  visionEndpointModel: string | null;
  visionEndpointApiKey: string | null;
  /** Bearer token GET /metrics requires; null leaves it open (bind it to a private address instead). */
  metricsToken: string | null;
  /** Tesseract workers for OCR (each uses one core while it runs). */
  ocrWorkers: number;
  /** Tesseract languages read together (eng bundled; others from <modelsDir>/tesseract/). */
  ocrLanguages: string[];
  /** "auto": PP-OCR reads images and video frames when <modelsDir>/ppocr/ is installed (src/ocr/ocr-router.ts); "tesseract": tesseract reads everything. */
  ocrEngine: "auto" | "tesseract";
  /** Images with more pixels than this are refused with a clear message (huge ones render by shrink-on-load). */
  imageMaxPixels: number;
  /** Sentence-embedding model for document search: "use-lite-sif" (built in) or a folder under modelsDir. */
  textEmbeddingModel: string;
  /** Layout model for PDF pages (a folder under modelsDir, layout-model/layout-models.ts), or "none": the rules alone; an absent folder is the same. */
  layoutModel: string;
  /** At most this many common English words are prepared by the built-in text model in the background (0: none; the list has ~62,000). */
  textVocabularyWords: number;
  /** Resident memory the document reader child process may use before it is killed (MB). */
  documentMemoryMb: number;
  /**
   * Time budgets of processing stages that differ from their own, in ms, by "<media type>.<stage>"
   * ("document.extraction"); null: every stage keeps its own (processing/stage-runner.ts).
   */
  stageBudgets: Record<string, number> | null;
  /** Most time a stopping server waits for running work before it exits anyway (SIGTERM, SIGINT). */
  shutdownGraceSeconds: number;
  /** A site's own ffmpeg / ffprobe; null = the static builds that ship with Mediabox. */
  ffmpegPath: string | null;
  ffprobePath: string | null;
  /** Videos longer than this are stored and probed but not analysed (seconds). */
  videoMaxDurationSeconds: number;
  /** Videos larger than this are stored but not analysed (MB). */
  videoMaxMb: number;
  /** Keyframes a video's analysis looks at, at most. */
  videoMaxKeyframes: number;
  /** Wall-clock limit of one ffmpeg run over a video (seconds). */
  videoTimeoutSeconds: number;
  /** Address-space cap of each ffmpeg/ffprobe process (MB). */
  videoMemoryMb: number;
  /** Whether links are fetched at all; off (air-gapped sites) stores the URL and marks the crawl blocked. */
  linkFetch: boolean;
  /** Address ranges the crawler may reach despite the private/loopback rules (intranet pages). */
  linkAllowCidrs: AllowedCidr[];
  /** Ports a link (and every redirect) may name; null = any port. */
  linkPorts: number[] | null;
  /**
   * Address ranges webhook receivers may be at despite the private/loopback rules
   * (net/egress-policy.ts); null = the crawler's list (one setting opens all, as before).
   */
  webhookAllowCidrs: AllowedCidr[] | null;
  /** Ports a webhook URL may name; null = any port. */
  webhookPorts: number[] | null;
  /** Address ranges mail servers (IMAP intake) may be at despite the private/loopback rules; null = the crawler's list. */
  mailAllowCidrs: AllowedCidr[] | null;
  linkUserAgent: string;
  /** Most bytes of a page read (the rest is cut) and of one image or icon (larger ones are refused). */
  linkMaxPageBytes: number;
  linkMaxImageBytes: number;
  /** One deadline per fetch (lookups, redirects and body). */
  linkTimeoutSeconds: number;
  /** Honour robots.txt (default on). */
  linkRobots: boolean;
  /** Fetches at once per domain per organization. */
  linkDomainConcurrency: number;
  /** Page images downloaded as image files per link. */
  linkMaxImages: number;
  /** Directories whose new files are ingested, each into an organization, project and folder. */
  watchDirs: WatchMapping[];
  /** How often watched directories are looked at (ms). */
  watchPollMs: number;
  /** How long a file's size and modification time must stay unchanged before it is taken (ms). */
  watchStableMs: number;
  /** Tries of one webhook delivery before it is dead-lettered. */
  webhookMaxAttempts: number;
  /** Wait before a delivery's second try (ms); doubles with each try, capped at an hour. */
  webhookRetryBaseMs: number;
  /** Auto matching: a library that changed is learned again at most this often (seconds). */
  autoMatchRetrainSeconds: number;
  /** Deadline of one delivery attempt (DNS, connect, answer). */
  webhookTimeoutSeconds: number;
  /** AES-256-GCM key (base64, 32 bytes) for cloud drive tokens at rest; null = a key file in the data dir's secrets. */
  cloudTokenKey: string | null;
  /** Keys tokens may still be sealed with after a rotation (re-encrypted with the current key at start). */
  cloudTokenPreviousKeys: string[];
  /** The exact origin the OAuth callback page posts its message to; null = the callback's own origin. */
  cloudOauthOpenerOrigin: string | null;
  /** Lifetime of an OAuth state (seconds): the user must finish consenting within it. */
  cloudOauthStateTtlSeconds: number;
  googleDriveClientId: string | null;
  googleDriveClientSecret: string | null;
  googleDriveAuthUrl: string;
  googleDriveTokenUrl: string;
  googleDriveRevokeUrl: string | null;
  /** Drive v3 API base (files, about); the upload base is derived unless set. */
  googleDriveApiUrl: string;
  googleDriveUploadUrl: string;
  googleDriveScopes: string;
  googlePickerAppId: string | null;
  googlePickerDeveloperKey: string | null;
  /** Nextcloud server base URL; null = the nextcloud provider is off. */
  nextcloudUrl: string | null;
  nextcloudClientId: string | null;
  nextcloudClientSecret: string | null;
  /** Defaults derived from nextcloudUrl (Nextcloud's oauth2 app). */
  nextcloudAuthUrl: string | null;
  nextcloudTokenUrl: string | null;
  nextcloudRevokeUrl: string | null;
  nextcloudScopes: string;
  /** Accounts (src/accounts/): anyone may create a user and organization through POST /auth/session/register. */
  allowRegistration: boolean;
  /** A dashboard session ends after this long without a request (minutes). */
  sessionIdleMinutes: number;
  /** ...and this long after sign-in whatever its use (hours). */
  sessionAbsoluteHours: number;
  /** SMTP server for verification, reset and invitation mails; null = links are logged for the admin. */
  smtpHost: string | null;
  smtpPort: number;
  smtpUser: string | null;
  smtpPassword: string | null;
  smtpFrom: string;
  /** starttls (required), implicit (TLS from the first byte, port 465) or none (plain text, local relays only). */
  smtpTls: "starttls" | "implicit" | "none";
  /** Where POST /support/contact messages are also mailed; null = stored only. */
  supportEmail: string | null;
  /** OpenID Connect provider of the site (Keycloak, Authentik, Entra ID, Google...): its issuer or discovery URL. */
  oidcDiscoveryUrl: string | null;
  oidcClientId: string | null;
  oidcClientSecret: string | null;
  /** The provider's name in the API (link-provider, unlink-provider, identities). */
  oidcProviderName: string;
  /** The payment provider whose webhooks are accepted at POST /payment/webhooks/{provider}. */
  paymentProvider: string;
  /** HMAC-SHA256 secret of its webhook signatures; null = the webhook endpoint answers 404. */
  paymentWebhookSecret: string | null;
  /** How old a webhook's signed timestamp may be (seconds, either way). */
  paymentWebhookToleranceSeconds: number;
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
/** Tesseract's language names: three letters, sometimes with a script suffix (chi_sim, deu_latf). */
const OCR_LANGUAGE = /^[a-z]{3}(_[a-z]{3,4})?$/;

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

/** "10.0.0.0/8, 192.168.1.7": address ranges an egress policy opens (net/egress-policy.ts). */
/** "10.0.0.0/8, 192.168.1.5" or "none" (an empty list where an unset one would follow another setting). */
function cidrList(raw: string): AllowedCidr[] {
  if (raw.trim().toLowerCase() === "none") return [];
  try {
    return parseAllowedCidrs(raw);
  } catch (err) {
    throw new ConfigError(errorMessage(err));
  }
}

/** "80,443" or "any" (null). */
function portList(raw: string): number[] | null {
  if (raw.trim().toLowerCase() === "any") return null;
  const ports = raw.split(/[,\s]+/).filter(Boolean).map(integer(1, 65535));
  if (!ports.length) throw new ConfigError(`expected a comma list of ports or "any", got "${raw}"`);
  return [...new Set(ports)];
}

function boolean(raw: string): boolean {
  const value = raw.trim().toLowerCase();
  if (["1", "true", "yes", "on"].includes(value)) return true;
  if (["0", "false", "no", "off"].includes(value)) return false;
  throw new ConfigError(`expected true or false, got "${raw}"`);
}

export const PROCESS_ROLES = ["all", "api", "worker"] as const;
export type ProcessRole = (typeof PROCESS_ROLES)[number];

/** One of a fixed set of words. */
function oneOf<const T extends readonly string[]>(values: T): (raw: string) => T[number] {
  const listed = `${values.slice(0, -1).join(", ")} or ${values[values.length - 1]}`;
  return (raw) => {
    const value = values.find((v) => v === raw);
    if (value === undefined) throw new ConfigError(`expected ${listed}, got "${raw}"`);
    return value;
  };
}

function url(raw: string): string {
  try {
    return new URL(raw).toString().replace(/\/$/, "");
  } catch {
    throw new ConfigError(`expected an absolute URL, got "${raw}"`);
  }
}

/** An AES-256 key in base64 (`openssl rand -base64 32`). */
function tokenKey(raw: string): string {
  const key = raw.trim();
  if (Buffer.from(key, "base64").length !== 32 || !/^[A-Za-z0-9+/]+={0,2}$/.test(key)) {
    throw new ConfigError("expected 32 bytes in base64 (make one with: openssl rand -base64 32)");
  }
  return key;
}

/** MEDIABOX_STAGE_BUDGETS: `document.extraction=1200, link.metadata=30` (seconds, decimals allowed) → ms by stage. */
function stageBudgets(raw: string): Record<string, number> {
  const budgets: Record<string, number> = {};
  for (const entry of raw.split(/[,;\s]+/).filter(Boolean)) {
    const match = /^([a-z]+\.[a-z_]+)=(\d+(?:\.\d+)?)$/.exec(entry);
    const seconds = match ? Number(match[2]) : NaN;
    if (!match || !(seconds > 0 && seconds <= 24 * 3600)) {
      throw new ConfigError(`"${entry}": expected MEDIA_TYPE.STAGE=SECONDS, e.g. document.extraction=1200 (at most a day)`);
    }
    budgets[match[1]!] = Math.round(seconds * 1000);
  }
  return budgets;
}

/** A directory and where its files go, as written in MEDIABOX_WATCH_DIR or given to `mediabox watch`. */
export interface WatchMapping {
  path: string;
  org: string;
  project: string | null;
  /** Folder names from the project's top level ("Inbox/Scans"), or null. */
  folder: string | null;
}

/**
 * MEDIABOX_WATCH_DIR: `DIR=ORGANIZATION[/PROJECT[/FOLDER/…]]`, several separated by `;` or new
 * lines (names cannot hold "/", so the first "=" ends the directory), e.g.
 * `/srv/scans=Acme/Paperwork/Inbox; /srv/mail=Acme`. The names are resolved against the database
 * when the server starts.
 */
function watchMappings(raw: string): WatchMapping[] {
  return raw
    .split(/[;\n]/)
    .map((entry) => entry.trim())
    .filter(Boolean)
    .map((entry) => {
      const eq = entry.indexOf("=");
      if (eq <= 0) throw new ConfigError(`"${entry}": expected DIR=ORGANIZATION[/PROJECT[/FOLDER…]]`);
      const [org = "", project, ...folders] = entry.slice(eq + 1).split("/").map((s) => s.trim());
      if (!org) throw new ConfigError(`"${entry}": the organization is missing after "="`);
      return { path: resolve(entry.slice(0, eq).trim()), org, project: project || null, folder: folders.filter(Boolean).join("/") || null };
    });
}

const SETTINGS: { [K in keyof Config]: Setting<K> } = {
  port: { key: "port", flag: "port", env: "MEDIABOX_PORT", parse: integer(0, 65535), fallback: "8080" },
  host: { key: "host", flag: "host", env: "MEDIABOX_HOST", parse: text, fallback: "0.0.0.0" },
  dataDir: { key: "dataDir", flag: "data-dir", env: "MEDIABOX_DATA_DIR", parse: (r) => resolve(r), fallback: "data" },
  // The compiled binary falls back to the model folders it embeds when there is no ./models.
  modelsDir: { key: "modelsDir", flag: "models-dir", env: "MEDIABOX_MODELS_DIR", parse: (r) => (existsSync(resolve(r)) ? resolve(r) : (embeddedModelsDir() ?? resolve(r))), fallback: "models" },
  modelsRequireManifest: {
    key: "modelsRequireManifest", flag: "models-require-manifest", env: "MEDIABOX_MODELS_REQUIRE_MANIFEST", parse: boolean, fallback: "false",
  },
  publicUrl: {
    key: "publicUrl",
    flag: "public-url",
    env: "MEDIABOX_PUBLIC_URL",
    parse: url,
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
  database: { key: "database", flag: "database", env: "MEDIABOX_DATABASE", parse: databaseLocation, fallback: "sqlite:" },
  role: {
    key: "role",
    flag: "role",
    env: "MEDIABOX_ROLE",
    parse: oneOf(PROCESS_ROLES),
    fallback: "all",
  },
  singleProcess: { key: "singleProcess", flag: "single-process", env: "MEDIABOX_SINGLE_PROCESS", parse: boolean, fallback: "false" },
  storage: {
    key: "storage",
    flag: "storage",
    env: "MEDIABOX_STORAGE",
    parse: oneOf(["local", "s3"]),
    fallback: "local",
  },
  s3Bucket: { key: "s3Bucket", flag: "s3-bucket", env: "MEDIABOX_S3_BUCKET", parse: text, fallback: null, unset: null },
  s3Region: { key: "s3Region", flag: "s3-region", env: "MEDIABOX_S3_REGION", parse: text, fallback: "us-east-1" },
  s3Endpoint: { key: "s3Endpoint", flag: "s3-endpoint", env: "MEDIABOX_S3_ENDPOINT", parse: url, fallback: null, unset: null },
  s3AccessKeyId: { key: "s3AccessKeyId", flag: "s3-access-key-id", env: "MEDIABOX_S3_ACCESS_KEY_ID", parse: text, fallback: null, unset: null },
  s3SecretAccessKey: {
    key: "s3SecretAccessKey",
    flag: "s3-secret-access-key",
    env: "MEDIABOX_S3_SECRET_ACCESS_KEY",
    parse: text,
    fallback: null,
    unset: null,
  },
  s3ForcePathStyle: { key: "s3ForcePathStyle", flag: "s3-force-path-style", env: "MEDIABOX_S3_FORCE_PATH_STYLE", parse: boolean, fallback: "false" },
  uploadIntentTtlSeconds: {
    key: "uploadIntentTtlSeconds",
    flag: "upload-intent-ttl-seconds",
    env: "MEDIABOX_UPLOAD_INTENT_TTL_SECONDS",
    parse: integer(60, 7 * 24 * 3600),
    fallback: "86400",
  },
  imageEmbeddingModel: {
    key: "imageEmbeddingModel", flag: "image-embedding-model", env: "MEDIABOX_IMAGE_EMBEDDING_MODEL", parse: text, fallback: null, unset: null,
  },
  captionModel: { key: "captionModel", flag: "caption-model", env: "MEDIABOX_CAPTION_MODEL", parse: text, fallback: null, unset: null },
  visionEndpointUrl: { key: "visionEndpointUrl", flag: "vision-endpoint-url", env: "MEDIABOX_VISION_ENDPOINT_URL", parse: url, fallback: null, unset: null },
  visionEndpointModel: {
    key: "visionEndpointModel", flag: "vision-endpoint-model", env: "MEDIABOX_VISION_ENDPOINT_MODEL", parse: text, fallback: null, unset: null,
  },
  visionEndpointApiKey: {
    key: "visionEndpointApiKey", flag: "vision-endpoint-api-key", env: "MEDIABOX_VISION_ENDPOINT_API_KEY", parse: text, fallback: null, unset: null,
  },
  metricsToken: { key: "metricsToken", flag: "metrics-token", env: "MEDIABOX_METRICS_TOKEN", parse: text, fallback: null, unset: null },
  ocrWorkers: { key: "ocrWorkers", flag: "ocr-workers", env: "MEDIABOX_OCR_WORKERS", parse: integer(1, 16), fallback: "1" },
  ocrLanguages: {
    key: "ocrLanguages",
    flag: "ocr-languages",
    env: "MEDIABOX_OCR_LANGUAGES",
    parse: (raw) => {
      const codes = [...new Set(raw.split(/[+,\s]+/).filter(Boolean))];
      const bad = codes.find((code) => !OCR_LANGUAGE.test(code));
      if (!codes.length || bad !== undefined) throw new ConfigError(`expected tesseract language codes like eng+deu, got "${raw}"`);
      return codes;
    },
    fallback: "eng",
  },
  ocrEngine: {
    key: "ocrEngine",
    flag: "ocr-engine",
    env: "MEDIABOX_OCR_ENGINE",
    parse: oneOf(["auto", "tesseract"]),
    fallback: "auto",
  },
  imageMaxPixels: {
    key: "imageMaxPixels",
    flag: "image-max-pixels",
    env: "MEDIABOX_IMAGE_MAX_PIXELS",
    // Memory stays bounded at any size for JPEG (decoded shrunk); the limit bounds the decode time
    // of formats without shrink-on-load (PNG, TIFF) and of decompression bombs.
    parse: integer(1_000_000, 10_000_000_000),
    fallback: "500000000",
  },
  textEmbeddingModel: {
    key: "textEmbeddingModel", flag: "text-embedding-model", env: "MEDIABOX_TEXT_EMBEDDING_MODEL", parse: text,
    // The folder scripts/models installs; while it is missing the built-in use-lite-sif serves.
    fallback: DEFAULT_TEXT_MODEL,
  },
  layoutModel: {
    key: "layoutModel", flag: "layout-model", env: "MEDIABOX_LAYOUT_MODEL", parse: text, fallback: "yolov8n-doclaynet",
  },
  textVocabularyWords: {
    key: "textVocabularyWords", flag: "text-vocabulary-words", env: "MEDIABOX_TEXT_VOCABULARY_WORDS", parse: integer(0, 100_000), fallback: "100000",
  },
  documentMemoryMb: {
    key: "documentMemoryMb",
    flag: "document-memory-mb",
    env: "MEDIABOX_DOCUMENT_MEMORY_MB",
    // Below ~200 MB no document reads (the reader process itself starts at ~150 MB); tests use tiny values on purpose.
    parse: integer(32, 1024 * 1024),
    fallback: "1024",
  },
  stageBudgets: { key: "stageBudgets", flag: "stage-budgets", env: "MEDIABOX_STAGE_BUDGETS", parse: stageBudgets, fallback: null, unset: null },
  shutdownGraceSeconds: { key: "shutdownGraceSeconds", flag: "shutdown-grace-seconds", env: "MEDIABOX_SHUTDOWN_GRACE_SECONDS", parse: integer(1, 600), fallback: "20" },
  ffmpegPath: { key: "ffmpegPath", flag: "ffmpeg-path", env: "MEDIABOX_FFMPEG_PATH", parse: (r) => resolve(r), fallback: null, unset: null },
  ffprobePath: { key: "ffprobePath", flag: "ffprobe-path", env: "MEDIABOX_FFPROBE_PATH", parse: (r) => resolve(r), fallback: null, unset: null },
  videoMaxDurationSeconds: {
    key: "videoMaxDurationSeconds", flag: "video-max-duration-seconds", env: "MEDIABOX_VIDEO_MAX_DURATION_SECONDS", parse: integer(1, 7 * 24 * 3600), fallback: "14400",
  },
  videoMaxMb: { key: "videoMaxMb", flag: "video-max-mb", env: "MEDIABOX_VIDEO_MAX_MB", parse: integer(1, 5 * 1024 * 1024), fallback: "20480" },
  videoMaxKeyframes: { key: "videoMaxKeyframes", flag: "video-max-keyframes", env: "MEDIABOX_VIDEO_MAX_KEYFRAMES", parse: integer(1, 200), fallback: "48" },
  videoTimeoutSeconds: {
    key: "videoTimeoutSeconds", flag: "video-timeout-seconds", env: "MEDIABOX_VIDEO_TIMEOUT_SECONDS", parse: integer(10, 24 * 3600), fallback: "1800",
  },
  videoMemoryMb: {
    key: "videoMemoryMb",
    flag: "video-memory-mb",
    env: "MEDIABOX_VIDEO_MEMORY_MB",
    // ffmpeg maps ~300 MB of address space before it decodes anything; 4K HEVC needs ~1 GB more.
    parse: integer(256, 64 * 1024),
    fallback: "2048",
  },
  linkFetch: { key: "linkFetch", flag: "link-fetch", env: "MEDIABOX_LINK_FETCH", parse: boolean, fallback: "on" },
  linkAllowCidrs: { key: "linkAllowCidrs", flag: "link-allow-cidrs", env: "MEDIABOX_LINK_ALLOW_CIDRS", parse: cidrList, fallback: "" },
  linkPorts: { key: "linkPorts", flag: "link-ports", env: "MEDIABOX_LINK_PORTS", parse: portList, fallback: "80,443" },
  webhookAllowCidrs: { key: "webhookAllowCidrs", flag: "webhook-allow-cidrs", env: "MEDIABOX_WEBHOOK_ALLOW_CIDRS", parse: cidrList, fallback: null, unset: null },
  webhookPorts: { key: "webhookPorts", flag: "webhook-ports", env: "MEDIABOX_WEBHOOK_PORTS", parse: portList, fallback: "80,443" },
  mailAllowCidrs: { key: "mailAllowCidrs", flag: "mail-allow-cidrs", env: "MEDIABOX_MAIL_ALLOW_CIDRS", parse: cidrList, fallback: null, unset: null },
  linkUserAgent: {
    key: "linkUserAgent", flag: "link-user-agent", env: "MEDIABOX_LINK_USER_AGENT", parse: text, fallback: "Mediabox/1.0 (self-hosted link saver)",
  },
  linkMaxPageBytes: { key: "linkMaxPageBytes", flag: "link-max-page-bytes", env: "MEDIABOX_LINK_MAX_PAGE_BYTES", parse: integer(1024, 100 * 1024 ** 2), fallback: String(2 * 1024 ** 2) },
  linkMaxImageBytes: {
    key: "linkMaxImageBytes", flag: "link-max-image-bytes", env: "MEDIABOX_LINK_MAX_IMAGE_BYTES", parse: integer(1024, 100 * 1024 ** 2), fallback: String(10 * 1024 ** 2),
  },
  linkTimeoutSeconds: { key: "linkTimeoutSeconds", flag: "link-timeout-seconds", env: "MEDIABOX_LINK_TIMEOUT_SECONDS", parse: integer(1, 300), fallback: "20" },
  linkRobots: { key: "linkRobots", flag: "link-robots", env: "MEDIABOX_LINK_ROBOTS", parse: boolean, fallback: "on" },
  linkDomainConcurrency: {
    key: "linkDomainConcurrency", flag: "link-domain-concurrency", env: "MEDIABOX_LINK_DOMAIN_CONCURRENCY", parse: integer(1, 32), fallback: "2",
  },
  linkMaxImages: { key: "linkMaxImages", flag: "link-max-images", env: "MEDIABOX_LINK_MAX_IMAGES", parse: integer(0, 50), fallback: "10" },
  watchDirs: {
    key: "watchDirs",
    flag: "watch-dir",
    env: "MEDIABOX_WATCH_DIR",
    parse: watchMappings,
    fallback: "",
  },
  watchPollMs: { key: "watchPollMs", flag: "watch-poll-ms", env: "MEDIABOX_WATCH_POLL_MS", parse: integer(50, 600_000), fallback: "2000" },
  watchStableMs: { key: "watchStableMs", flag: "watch-stable-ms", env: "MEDIABOX_WATCH_STABLE_MS", parse: integer(0, 3_600_000), fallback: "5000" },
  webhookMaxAttempts: { key: "webhookMaxAttempts", flag: "webhook-max-attempts", env: "MEDIABOX_WEBHOOK_MAX_ATTEMPTS", parse: integer(1, 50), fallback: "12" },
  webhookRetryBaseMs: { key: "webhookRetryBaseMs", flag: "webhook-retry-base-ms", env: "MEDIABOX_WEBHOOK_RETRY_BASE_MS", parse: integer(100, 3_600_000), fallback: "10000" },
  autoMatchRetrainSeconds: { key: "autoMatchRetrainSeconds", flag: "auto-match-retrain-seconds", env: "MEDIABOX_AUTO_MATCH_RETRAIN_SECONDS", parse: integer(0, 86_400), fallback: "300" },
  webhookTimeoutSeconds: { key: "webhookTimeoutSeconds", flag: "webhook-timeout-seconds", env: "MEDIABOX_WEBHOOK_TIMEOUT_SECONDS", parse: integer(1, 120), fallback: "10" },
  cloudTokenKey: { key: "cloudTokenKey", flag: "cloud-token-key", env: "MEDIABOX_CLOUD_TOKEN_KEY", parse: tokenKey, fallback: null, unset: null },
  cloudTokenPreviousKeys: {
    key: "cloudTokenPreviousKeys",
    flag: "cloud-token-previous-keys",
    env: "MEDIABOX_CLOUD_TOKEN_PREVIOUS_KEYS",
    parse: (raw) => raw.split(",").map((s) => s.trim()).filter(Boolean).map(tokenKey),
    fallback: "",
  },
  cloudOauthOpenerOrigin: {
    key: "cloudOauthOpenerOrigin",
    flag: "cloud-oauth-opener-origin",
    env: "MEDIABOX_CLOUD_OAUTH_OPENER_ORIGIN",
    parse: (raw) => {
      const origin = new URL(url(raw)).origin;
      if (origin === "null") throw new ConfigError(`expected an http(s) origin, got "${raw}"`);
      return origin;
    },
    fallback: null,
    unset: null,
  },
  cloudOauthStateTtlSeconds: {
    key: "cloudOauthStateTtlSeconds", flag: "cloud-oauth-state-ttl-seconds", env: "MEDIABOX_CLOUD_OAUTH_STATE_TTL_SECONDS", parse: integer(30, 3600), fallback: "600",
  },
  googleDriveClientId: { key: "googleDriveClientId", flag: "google-drive-client-id", env: "MEDIABOX_GOOGLE_DRIVE_CLIENT_ID", parse: text, fallback: null, unset: null },
  googleDriveClientSecret: {
    key: "googleDriveClientSecret", flag: "google-drive-client-secret", env: "MEDIABOX_GOOGLE_DRIVE_CLIENT_SECRET", parse: text, fallback: null, unset: null,
  },
  googleDriveAuthUrl: {
    key: "googleDriveAuthUrl", flag: "google-drive-auth-url", env: "MEDIABOX_GOOGLE_DRIVE_AUTH_URL", parse: url, fallback: "https://accounts.google.com/o/oauth2/v2/auth",
  },
  googleDriveTokenUrl: {
    key: "googleDriveTokenUrl", flag: "google-drive-token-url", env: "MEDIABOX_GOOGLE_DRIVE_TOKEN_URL", parse: url, fallback: "https://oauth2.googleapis.com/token",
  },
  googleDriveRevokeUrl: {
    key: "googleDriveRevokeUrl", flag: "google-drive-revoke-url", env: "MEDIABOX_GOOGLE_DRIVE_REVOKE_URL", parse: url, fallback: "https://oauth2.googleapis.com/revoke",
  },
  googleDriveApiUrl: {
    key: "googleDriveApiUrl", flag: "google-drive-api-url", env: "MEDIABOX_GOOGLE_DRIVE_API_URL", parse: url, fallback: "https://www.googleapis.com/drive/v3",
  },
  googleDriveUploadUrl: {
    key: "googleDriveUploadUrl", flag: "google-drive-upload-url", env: "MEDIABOX_GOOGLE_DRIVE_UPLOAD_URL", parse: url, fallback: "https://www.googleapis.com/upload/drive/v3",
  },
  googleDriveScopes: {
    key: "googleDriveScopes",
    flag: "google-drive-scopes",
    env: "MEDIABOX_GOOGLE_DRIVE_SCOPES",
    parse: text,
    fallback: "openid email profile https://www.googleapis.com/auth/drive",
  },
  googlePickerAppId: { key: "googlePickerAppId", flag: "google-picker-app-id", env: "MEDIABOX_GOOGLE_PICKER_APP_ID", parse: text, fallback: null, unset: null },
  googlePickerDeveloperKey: {
    key: "googlePickerDeveloperKey", flag: "google-picker-developer-key", env: "MEDIABOX_GOOGLE_PICKER_DEVELOPER_KEY", parse: text, fallback: null, unset: null,
  },
  nextcloudUrl: { key: "nextcloudUrl", flag: "nextcloud-url", env: "MEDIABOX_NEXTCLOUD_URL", parse: url, fallback: null, unset: null },
  nextcloudClientId: { key: "nextcloudClientId", flag: "nextcloud-client-id", env: "MEDIABOX_NEXTCLOUD_CLIENT_ID", parse: text, fallback: null, unset: null },
  nextcloudClientSecret: {
    key: "nextcloudClientSecret", flag: "nextcloud-client-secret", env: "MEDIABOX_NEXTCLOUD_CLIENT_SECRET", parse: text, fallback: null, unset: null,
  },
  nextcloudAuthUrl: { key: "nextcloudAuthUrl", flag: "nextcloud-auth-url", env: "MEDIABOX_NEXTCLOUD_AUTH_URL", parse: url, fallback: null, unset: null },
  nextcloudTokenUrl: { key: "nextcloudTokenUrl", flag: "nextcloud-token-url", env: "MEDIABOX_NEXTCLOUD_TOKEN_URL", parse: url, fallback: null, unset: null },
  nextcloudRevokeUrl: { key: "nextcloudRevokeUrl", flag: "nextcloud-revoke-url", env: "MEDIABOX_NEXTCLOUD_REVOKE_URL", parse: url, fallback: null, unset: null },
  nextcloudScopes: { key: "nextcloudScopes", flag: "nextcloud-scopes", env: "MEDIABOX_NEXTCLOUD_SCOPES", parse: text, fallback: "" },
  allowRegistration: { key: "allowRegistration", flag: "allow-registration", env: "MEDIABOX_ALLOW_REGISTRATION", parse: boolean, fallback: "false" },
  sessionIdleMinutes: { key: "sessionIdleMinutes", flag: "session-idle-minutes", env: "MEDIABOX_SESSION_IDLE_MINUTES", parse: integer(1, 30 * 24 * 60), fallback: "60" },
  sessionAbsoluteHours: {
    key: "sessionAbsoluteHours", flag: "session-absolute-hours", env: "MEDIABOX_SESSION_ABSOLUTE_HOURS", parse: integer(1, 90 * 24), fallback: "24",
  },
  smtpHost: { key: "smtpHost", flag: "smtp-host", env: "MEDIABOX_SMTP_HOST", parse: text, fallback: null, unset: null },
  smtpPort: { key: "smtpPort", flag: "smtp-port", env: "MEDIABOX_SMTP_PORT", parse: integer(1, 65535), fallback: "587" },
  smtpUser: { key: "smtpUser", flag: "smtp-user", env: "MEDIABOX_SMTP_USER", parse: text, fallback: null, unset: null },
  smtpPassword: { key: "smtpPassword", flag: "smtp-password", env: "MEDIABOX_SMTP_PASSWORD", parse: text, fallback: null, unset: null },
  smtpFrom: { key: "smtpFrom", flag: "smtp-from", env: "MEDIABOX_SMTP_FROM", parse: text, fallback: "Mediabox <mediabox@localhost>" },
  smtpTls: {
    key: "smtpTls",
    flag: "smtp-tls",
    env: "MEDIABOX_SMTP_TLS",
    parse: oneOf(["starttls", "implicit", "none"]),
    fallback: "starttls",
  },
  supportEmail: { key: "supportEmail", flag: "support-email", env: "MEDIABOX_SUPPORT_EMAIL", parse: text, fallback: null, unset: null },
  oidcDiscoveryUrl: { key: "oidcDiscoveryUrl", flag: "oidc-discovery-url", env: "MEDIABOX_OIDC_DISCOVERY_URL", parse: url, fallback: null, unset: null },
  oidcClientId: { key: "oidcClientId", flag: "oidc-client-id", env: "MEDIABOX_OIDC_CLIENT_ID", parse: text, fallback: null, unset: null },
  oidcClientSecret: { key: "oidcClientSecret", flag: "oidc-client-secret", env: "MEDIABOX_OIDC_CLIENT_SECRET", parse: text, fallback: null, unset: null },
  oidcProviderName: {
    key: "oidcProviderName",
    flag: "oidc-provider-name",
    env: "MEDIABOX_OIDC_PROVIDER_NAME",
    parse: (raw) => {
      if (!/^[a-z0-9][a-z0-9-]{0,31}$/.test(raw)) throw new ConfigError(`expected a lower-case name of letters, digits and dashes, got "${raw}"`);
      return raw;
    },
    fallback: "sso",
  },
  paymentProvider: {
    key: "paymentProvider",
    flag: "payment-provider",
    env: "MEDIABOX_PAYMENT_PROVIDER",
    parse: (raw) => {
      if (!/^[a-z0-9][a-z0-9-]{0,31}$/.test(raw)) throw new ConfigError(`expected a lower-case name of letters, digits and dashes, got "${raw}"`);
      return raw;
    },
    fallback: "stripe",
  },
  paymentWebhookSecret: {
    key: "paymentWebhookSecret", flag: "payment-webhook-secret", env: "MEDIABOX_PAYMENT_WEBHOOK_SECRET", parse: text, fallback: null, unset: null,
  },
  paymentWebhookToleranceSeconds: {
    key: "paymentWebhookToleranceSeconds",
    flag: "payment-webhook-tolerance-seconds",
    env: "MEDIABOX_PAYMENT_WEBHOOK_TOLERANCE_SECONDS",
    parse: integer(10, 3600),
    fallback: "300",
  },
};

export class ConfigError extends Error {}

export type DatabaseLocation = { kind: "sqlite" } | { kind: "postgres"; url: string };

function databaseLocation(raw: string): DatabaseLocation {
  if (raw === "sqlite:" || raw === "sqlite") return { kind: "sqlite" };
  if (/^postgres(ql)?:\/\//.test(raw)) {
    try {
      new URL(raw);
    } catch {
      throw new ConfigError("not a valid postgres:// URL");
    }
    return { kind: "postgres", url: raw };
  }
  throw new ConfigError(`expected sqlite: or a postgres://user:password@host:port/database URL, got "${raw.replace(/\/\/[^@/]*@/, "//…@")}"`);
}

/** Flag names accepted by every CLI command (each takes a value). */
export const CONFIG_FLAGS = Object.values(SETTINGS).map((s) => s.flag);

/**
 * Several processes share this deployment's database (PostgreSQL without --single-process), and
 * with it the blob store: none of them can read another's local disk (its staging directory).
 */
export function isSharedDeployment(config: Pick<Config, "database" | "singleProcess">): boolean {
  return config.database.kind === "postgres" && !config.singleProcess;
}

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
      const why = errorMessage(err);
      throw new ConfigError(`--${setting.flag} / ${setting.env}: ${why}`);
    }
  }
  const result = config as unknown as Config;
  // Processes sharing one database must share one blob store: each one's local disk holds only
  // the blobs it received, so the others would answer 404 for them.
  if (result.database.kind === "postgres" && result.storage === "local" && !result.singleProcess) {
    throw new ConfigError(
      "a PostgreSQL database is for several processes, which must share one blob store: set MEDIABOX_STORAGE=s3 " +
        "(with its bucket), or --single-process / MEDIABOX_SINGLE_PROCESS=true when this is the only process using the database",
    );
  }
  // The key that seals cloud tokens, webhook secrets and mail passwords is generated per data
  // directory unless given: processes with a data directory each would not open each other's.
  if (result.database.kind === "postgres" && !result.singleProcess && result.cloudTokenKey === null) {
    throw new ConfigError(
      "processes sharing a PostgreSQL database must seal secrets with one key: set MEDIABOX_CLOUD_TOKEN_KEY to the same value " +
        "in every process, or --single-process / MEDIABOX_SINGLE_PROCESS=true when this is the only process using the database",
    );
  }
  if (result.storage === "s3" && !result.s3Bucket) {
    throw new ConfigError("--s3-bucket / MEDIABOX_S3_BUCKET is required when storage is s3");
  }
  if ((result.s3AccessKeyId === null) !== (result.s3SecretAccessKey === null)) {
    throw new ConfigError("MEDIABOX_S3_ACCESS_KEY_ID and MEDIABOX_S3_SECRET_ACCESS_KEY must be set together");
  }
  if ((result.visionEndpointUrl === null) !== (result.visionEndpointModel === null)) {
    throw new ConfigError("MEDIABOX_VISION_ENDPOINT_URL and MEDIABOX_VISION_ENDPOINT_MODEL must be set together");
  }
  if ((result.googleDriveClientId === null) !== (result.googleDriveClientSecret === null)) {
    throw new ConfigError("MEDIABOX_GOOGLE_DRIVE_CLIENT_ID and MEDIABOX_GOOGLE_DRIVE_CLIENT_SECRET must be set together");
  }
  if (result.nextcloudUrl !== null && (result.nextcloudClientId === null || result.nextcloudClientSecret === null)) {
    throw new ConfigError("MEDIABOX_NEXTCLOUD_URL needs MEDIABOX_NEXTCLOUD_CLIENT_ID and MEDIABOX_NEXTCLOUD_CLIENT_SECRET");
  }
  if ((result.smtpUser === null) !== (result.smtpPassword === null)) {
    throw new ConfigError("MEDIABOX_SMTP_USER and MEDIABOX_SMTP_PASSWORD must be set together");
  }
  if ((result.oidcDiscoveryUrl === null) !== (result.oidcClientId === null)) {
    throw new ConfigError("MEDIABOX_OIDC_DISCOVERY_URL and MEDIABOX_OIDC_CLIENT_ID must be set together");
  }
  return result;
}

export function describeSettings(): { flag: string; env: string; fallback: unknown }[] {
  return Object.values(SETTINGS).map((s) => ({ flag: s.flag, env: s.env, fallback: s.fallback }));
}
