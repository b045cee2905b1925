/**
 * `mediabox import DIR`: bulk import of a directory tree into a running server through its HTTP
 * API, by the same ingest path as any upload. Files are hashed (SHA-256, streamed) and asked about
 * in batches with `POST /files/check-duplicates`; content the organization already holds is
 * reported "already stored" and not sent again, so an interrupted import is resumed by running it
 * again. The rest goes up `concurrency` at a time: `POST /files/upload` within the streaming limit,
 * the upload-intent flow above it.
 *
 * `runImport(options, io)` is the whole command as a function (output stream, fetch and sleep are
 * injectable); `importCommand(argv)` parses the command line for src/main.ts.
 */
import { statSync } from "node:fs";
import { basename, resolve } from "node:path";
import { parseArgs } from "node:util";
import { CONFIG_FLAGS, loadConfig } from "../config.ts";
import { UsageError } from "./commands.ts";
import { detectType } from "../ingest/detect.ts";
import { chooseUploadPath, describeRefusal, FileRefused, ImportAbort, ImportClient, STREAMING_DOCUMENT_LIMIT_BYTES } from "./import-client.ts";
import { formatBytes, formatDuration, Progress, type ImportOutput, type ProgressCounts } from "./import-progress.ts";
import { hashFile, scanDirectory, type ScannedFile } from "./import-scan.ts";
import { followAnalysis, type AnalysisSummary } from "./import-wait.ts";
import { DOCUMENT_CONTENT } from "../documents/document-content.ts";
import { IMAGE_CONTENT } from "../images/image-content.ts";
import { VIDEO_CONTENT } from "../video/video-content.ts";

export { chooseUploadPath } from "./import-client.ts";

export const IMPORT_USAGE = `Usage: mediabox import DIR [flags]

Uploads the files of DIR to a running server (hidden files skipped, links leading out of DIR not
followed). Content the organization already holds is reported "already stored" and not sent again,
so running the same import again resumes it.

Flags:
  --server URL          server to import into (default MEDIABOX_URL, else http://127.0.0.1:<--port / MEDIABOX_PORT>)
  --key KEY             API key with view and edit permissions (default MEDIABOX_API_KEY)
  --project P           project id or name (default: the Default project)
  --folder F            folder id, or a path of folder names in the project (e.g. "Clients/2024")
  --tags a,b            tags for every imported file (at most 20, 1-50 characters each)
  --recursive           also import subdirectories (default: the top level of DIR only)
  --skip-duplicates     also ask the server to skip content that arrives from elsewhere meanwhile
  --concurrency N       files uploaded at a time, 1-16 (default 2)
  --wait                then follow the files' analysis to its end, with a progress line

Exit status: 0 when every file was stored or already stored (and, with --wait, analysed), 1 when
some failed, 2 on usage errors.
`;

export interface ImportOptions {
  dir: string;
  /** Base URL of the server, without /api/v2. */
  server: string;
  key: string;
  /** Project id or name; null = the Default project (or the folder's). */
  project: string | null;
  /** Folder id, or a "/"-separated path of folder names inside the project. */
  folder: string | null;
  tags: string[];
  recursive: boolean;
  skipDuplicates: boolean;
  concurrency: number;
  /** Follow the analysis of the files to its end before exiting. */
  wait: boolean;
}

export interface ImportIO {
  out: ImportOutput;
  fetch?: typeof fetch;
  sleep?: (ms: number) => Promise<void>;
  now?: () => number;
}

export type FileOutcome =
  | { rel: string; status: "stored"; size: number; fileId: string; via: "streaming" | "intent" }
  | { rel: string; status: "already stored"; size: number; fileId: string | null; note?: string }
  | { rel: string; status: "failed"; size: number; reason: string };

export interface ImportSummary {
  total: number;
  stored: number;
  alreadyStored: number;
  failed: { rel: string; reason: string }[];
  /** Left out while scanning (links leading outside DIR, special files); not failures. */
  skipped: { rel: string; reason: string }[];
  /** Bytes of the files stored by this run. */
  bytesStored: number;
  elapsedMs: number;
  /** Why the import stopped before the end (server unreachable, key refused), else null. */
  aborted: string | null;
  /** With --wait: how the analysis of the files went (null without --wait, or when the upload stopped early). */
  analysis: AnalysisSummary | null;
  outcomes: FileOutcome[];
  exitCode: 0 | 1;
}

const DUPLICATE_CHECK_BATCH = 250;
/** A duplicate check is sent once this many bytes have been hashed, even before 250 files. */
const DUPLICATE_CHECK_BYTES = 256 * 1024 ** 2;
const MAX_TAGS = 20;
const MAX_TAG_LENGTH = 50;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The command line of `mediabox import` (src/main.ts hands over everything after "import"). */
export async function importCommand(
  argv: string[],
  env: Record<string, string | undefined> = process.env,
  io: ImportIO = { out: process.stdout },
  errors: { write(text: string): unknown } = process.stderr,
): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    strict: true,
    options: {
      ...Object.fromEntries(CONFIG_FLAGS.map((flag) => [flag, { type: "string" as const }])),
      server: { type: "string" },
      key: { type: "string" },
      project: { type: "string" },
      folder: { type: "string" },
      tags: { type: "string" },
      recursive: { type: "boolean" },
      "skip-duplicates": { type: "boolean" },
      concurrency: { type: "string" },
      wait: { type: "boolean" },
      help: { type: "boolean", short: "h" },
    },
  });
  const flags = values as Record<string, string | boolean | undefined>;
  if (flags.help) {
    io.out.write(IMPORT_USAGE);
    return 0;
  }
  const options = importOptions(flags, positionals, env);
  try {
    const summary = await runImport(options, io);
    if (summary.aborted) errors.write(`mediabox import: ${summary.aborted}\n`);
    return summary.exitCode;
  } catch (err) {
    if (!(err instanceof ImportAbort)) throw err;
    errors.write(`mediabox import: ${err.message}\n`);
    return 1;
  }
}

/** Checks the command line; every problem is a UsageError (exit 2). */
export function importOptions(
  flags: Record<string, string | boolean | undefined>,
  positionals: string[],
  env: Record<string, string | undefined>,
): ImportOptions {
  const text = (name: string) => {
    const value = flags[name];
    return typeof value === "string" && value.trim() !== "" ? value.trim() : null;
  };
  if (positionals.length === 0) throw new UsageError("import needs the DIR to import");
  if (positionals.length > 1) throw new UsageError(`import takes one DIR, got ${positionals.length}: ${positionals.join(" ")}`);
  const key = text("key") ?? (env.MEDIABOX_API_KEY?.trim() || null);
  if (!key) throw new UsageError("import needs an API key: --key KEY or MEDIABOX_API_KEY");

  let server = text("server") ?? (env.MEDIABOX_URL?.trim() || null);
  if (!server) {
    const configFlags = Object.fromEntries(CONFIG_FLAGS.map((flag) => [flag, text(flag) ?? undefined]));
    const port = loadConfig(configFlags, env).port;
    if (port === 0) throw new UsageError("the configured port is 0 (any free port); give the server's address with --server URL");
    server = `http://127.0.0.1:${port}`;
  }
  let url: URL;
  try {
    url = new URL(server);
  } catch {
    throw new UsageError(`--server: expected a URL like http://127.0.0.1:8080, got "${server}"`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new UsageError(`--server: expected an http(s) URL, got "${server}"`);
  const base = url.toString().replace(/\/+$/, "").replace(/\/api\/v2$/, "");

  const tags: string[] = [];
  for (const raw of (text("tags") ?? "").split(",")) {
    const tag = raw.trim();
    if (!tag || tags.includes(tag)) continue;
    if (tag.length > MAX_TAG_LENGTH) throw new UsageError(`--tags: "${tag.slice(0, 20)}…" is longer than ${MAX_TAG_LENGTH} characters`);
    tags.push(tag);
  }
  if (tags.length > MAX_TAGS) throw new UsageError(`--tags: at most ${MAX_TAGS} tags (got ${tags.length})`);

  const rawConcurrency = text("concurrency") ?? "2";
  const concurrency = Number(rawConcurrency);
  if (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > 16) {
    throw new UsageError(`--concurrency: expected an integer from 1 to 16, got "${rawConcurrency}"`);
  }
  return {
    dir: positionals[0]!,
    server: base,
    key,
    project: text("project"),
    folder: text("folder"),
    tags,
    recursive: flags.recursive === true,
    skipDuplicates: flags["skip-duplicates"] === true,
    concurrency,
    wait: flags.wait === true,
  };
}

interface HashedFile extends ScannedFile {
  sha256: string;
}

interface QueuedFile extends HashedFile {
  /** Hands the outcome to later files with the same content (null: never sent). */
  settle: (outcome: FileOutcome | null) => void;
}

/**
 * Runs the import and prints its progress and summary. Throws UsageError when DIR is not a
 * directory and ImportAbort when nothing can start (key refused, unknown project or folder,
 * server unreachable); once files are moving, an abort ends the run with a summary instead.
 */
export async function runImport(options: ImportOptions, io: ImportIO): Promise<ImportSummary> {
  const now = io.now ?? (() => performance.now());
  const sleep = io.sleep ?? ((ms: number) => Bun.sleep(ms));
  const started = now();
  const dir = resolve(options.dir);
  let isDirectory = false;
  try {
    isDirectory = statSync(dir).isDirectory();
  } catch {
    throw new UsageError(`${options.dir}: no such directory`);
  }
  if (!isDirectory) throw new UsageError(`${options.dir}: not a directory`);

  const counts: ProgressCounts = { total: 0, totalBytes: 0, done: 0, doneBytes: 0, sentBytes: 0, failed: 0 };
  const progress = new Progress(io.out, counts, now, started);
  const client = new ImportClient({
    server: options.server,
    key: options.key,
    fetch: io.fetch ?? fetch,
    sleep: async (ms) => {
      await sleep(ms);
      progress.setNote(null);
    },
    onWait: (seconds, why) => progress.setNote(`waiting ${Math.ceil(seconds)} s: ${why}`),
    onBytes: (bytes) => {
      counts.sentBytes += bytes;
      progress.update();
    },
  });

  try {
    const placement = await resolvePlacement(client, options);
    const scan = scanDirectory(dir, { recursive: options.recursive });
    counts.total = scan.files.length;
    counts.totalBytes = scan.files.reduce((n, f) => n + f.size, 0);
    const where = [placement.label, options.tags.length ? `tags ${options.tags.join(", ")}` : null].filter(Boolean).join("; ");
    progress.line(`Importing ${scan.files.length} file${scan.files.length === 1 ? "" : "s"} (${formatBytes(counts.totalBytes)}) from ${options.dir} into ${options.server} (${where})`);
    if (scan.subdirectoriesNotEntered > 0) {
      progress.line(`${scan.subdirectoriesNotEntered} subdirector${scan.subdirectoriesNotEntered === 1 ? "y" : "ies"} not imported (use --recursive)`);
    }
    for (const s of scan.skipped) progress.line(`skipped: ${s.rel}: ${s.reason}`);

    const outcomes: FileOutcome[] = [];
    const aborted = await importFiles(scan.files, options, placement, client, progress, counts, outcomes);
    progress.finish();
    const summary = summarize(outcomes, scan.skipped, now() - started, aborted, counts.total);
    printSummary(io.out, summary);
    if (options.wait && !aborted) {
      const analysed = outcomes.flatMap((o) => (o.status !== "failed" && o.fileId ? [{ rel: o.rel, fileId: o.fileId }] : []));
      // A file already stored under two names is followed once.
      const unique = [...new Map(analysed.map((a) => [a.fileId, a])).values()];
      summary.analysis = await followAnalysis(unique, client, { out: io.out, sleep, now });
      if (summary.analysis.failed.length) summary.exitCode = 1;
    }
    return summary;
  } finally {
    progress.finish();
  }
}

interface Placement {
  projectId: string | null;
  folderId: string | null;
  label: string;
}

/** Turns --project and --folder (ids or names) into ids, checking they exist. */
async function resolvePlacement(client: ImportClient, options: ImportOptions): Promise<Placement> {
  let projectId: string | null = null;
  let projectName = "the Default project";
  if (options.project) {
    const projects = (await client.required("GET", "/projects?limit=100")).items as { id: string; name: string }[];
    const wanted = options.project.toLowerCase();
    const project = projects.find((p) => p.id.toLowerCase() === wanted) ?? projects.find((p) => p.name.toLowerCase() === wanted);
    if (!project) {
      throw new ImportAbort(`no project "${options.project}" in the organization (projects: ${projects.map((p) => p.name).join(", ")})`);
    }
    projectId = project.id;
    projectName = `project ${project.name}`;
  }
  if (!options.folder) return { projectId, folderId: null, label: projectName };

  if (UUID.test(options.folder)) {
    const answer = await client.json("GET", `/folders/${options.folder}`);
    if (answer.status === 404) throw new ImportAbort(`no folder with id ${options.folder} in the organization`);
    if (answer.status !== 200) throw new ImportAbort(`GET /folders/${options.folder} failed: ${describeRefusal(answer)}`);
    const folder = answer.body as { id: string; project_id: string; path: { name: string }[] };
    if (projectId && folder.project_id !== projectId) throw new ImportAbort(`folder ${options.folder} is not in ${projectName}`);
    return { projectId: folder.project_id, folderId: folder.id, label: `folder ${folder.path.map((p) => p.name).join("/")}` };
  }
  const names = options.folder.split("/").map((n) => n.trim()).filter(Boolean);
  let parentId: string | null = null;
  const foundNames: string[] = [];
  for (const [depth, name] of names.entries()) {
    const siblings = await listFolders(client, parentId ? { parent_id: parentId } : projectId ? { project_id: projectId } : {});
    const found = siblings.find((f) => f.name.toLowerCase() === name.toLowerCase());
    if (!found) {
      const at = depth === 0 ? projectName : `folder ${names.slice(0, depth).join("/")}`;
      throw new ImportAbort(`no folder "${name}" in ${at} (create it first: POST /api/v2/folders)`);
    }
    parentId = found.id;
    foundNames.push(found.name);
  }
  return { projectId, folderId: parentId, label: `folder ${foundNames.join("/")} in ${projectName}` };
}

async function listFolders(client: ImportClient, filter: Record<string, string>): Promise<{ id: string; name: string }[]> {
  const all: { id: string; name: string }[] = [];
  for (let offset = 0; ; offset += 100) {
    const query = new URLSearchParams({ ...filter, limit: "100", offset: String(offset) });
    const page = await client.required("GET", `/folders?${query}`);
    all.push(...page.items);
    if (!page.has_more) return all;
  }
}

/**
 * The pipeline: files are hashed in order and checked in batches; what the organization lacks
 * goes to `concurrency` upload workers. Files with the same content as one earlier in the run are
 * not sent twice: they take that file's outcome. Returns the abort reason, if the run was cut short
 * (files not sent by then have no outcome: "not reached").
 */
async function importFiles(
  files: ScannedFile[],
  options: ImportOptions,
  placement: Placement,
  client: ImportClient,
  progress: Progress,
  counts: ProgressCounts,
  outcomes: FileOutcome[],
): Promise<string | null> {
  let aborted: string | null = null;
  let producing = true;
  let idleWorkers = 0;
  const queue: QueuedFile[] = [];
  const waiting: (() => void)[] = [];
  const wakeAll = () => {
    for (const wake of waiting.splice(0)) wake();
  };
  /** Contents sent in this run, by hash: the first file's outcome (null when never sent). */
  const sent = new Map<string, { rel: string; outcome: Promise<FileOutcome | null> }>();
  const followers: Promise<void>[] = [];

  const finish = (outcome: FileOutcome) => {
    outcomes.push(outcome);
    counts.done += 1;
    counts.doneBytes += outcome.size;
    if (outcome.status === "failed") counts.failed += 1;
    if (outcome.status === "stored") {
      progress.file(`stored: ${outcome.rel} (${formatBytes(outcome.size)}${outcome.via === "intent" ? ", upload intent" : ""}) as ${outcome.fileId}`);
    } else if (outcome.status === "already stored") {
      progress.file(`already stored: ${outcome.rel} (${outcome.note ?? outcome.fileId ?? "same content"})`);
    } else {
      progress.file(`failed: ${outcome.rel}: ${outcome.reason}`, true);
    }
  };

  const abort = (err: unknown) => {
    if (!(err instanceof ImportAbort)) throw err;
    aborted ??= err.message;
    for (const file of queue.splice(0)) file.settle(null);
    wakeAll();
  };

  const checkBatch = async (hashed: HashedFile[]) => {
    const hashes = [...new Set(hashed.map((f) => f.sha256))];
    const answer = await client.required("POST", "/files/check-duplicates", { hashes });
    const existing = new Map<string, string>(((answer.matches ?? []) as { hash: string; file_id: string }[]).map((m) => [m.hash, m.file_id]));
    const duplicates = new Set<string>(answer.duplicates ?? []);
    for (const file of hashed) {
      if (aborted) return;
      if (duplicates.has(file.sha256)) {
        finish({ rel: file.rel, status: "already stored", size: file.size, fileId: existing.get(file.sha256) ?? null });
        continue;
      }
      const first = sent.get(file.sha256);
      if (first) {
        // Same bytes as a file of this run: share its fate without sending them again.
        followers.push(
          first.outcome.then((outcome) => {
            if (!outcome) return;
            if (outcome.status === "failed") finish({ rel: file.rel, status: "failed", size: file.size, reason: `same content as ${first.rel}: ${outcome.reason}` });
            else finish({ rel: file.rel, status: "already stored", size: file.size, fileId: outcome.fileId, note: `same content as ${first.rel}` });
          }),
        );
        continue;
      }
      const settled = Promise.withResolvers<FileOutcome | null>();
      sent.set(file.sha256, { rel: file.rel, outcome: settled.promise });
      queue.push({ ...file, settle: settled.resolve });
      wakeAll();
    }
  };

  /** At most one duplicate check is in flight; files hashed meanwhile gather into the next batch. */
  let checking: Promise<void> | null = null;
  let unexpected: unknown = null;
  let batch: HashedFile[] = [];
  let batchBytes = 0;
  const flush = () => {
    const ready = batch;
    batch = [];
    batchBytes = 0;
    checking = checkBatch(ready)
      .catch((err) => {
        if (err instanceof ImportAbort) abort(err);
        else unexpected ??= err;
      })
      .finally(() => {
        checking = null;
      });
  };

  const producer = async () => {
    try {
      for (const file of files) {
        if (aborted || unexpected) break;
        let hashed: { sha256: string; size: number };
        try {
          hashed = await hashFile(file.path);
        } catch (err) {
          finish({ rel: file.rel, status: "failed", size: file.size, reason: `cannot read the file: ${err instanceof Error ? err.message : String(err)}` });
          continue;
        }
        counts.totalBytes += hashed.size - file.size;
        batch.push({ ...file, size: hashed.size, sha256: hashed.sha256 });
        batchBytes += hashed.size;
        // One check per 250 files or 256 MB; sooner when nothing is being checked and a worker waits.
        if (batch.length >= DUPLICATE_CHECK_BATCH || batchBytes >= DUPLICATE_CHECK_BYTES) {
          if (checking) await checking;
          flush();
        } else if (!checking && idleWorkers > 0 && queue.length === 0) {
          flush();
        }
      }
      if (checking) await checking;
      if (batch.length && !aborted && !unexpected) {
        flush();
        await checking;
      }
    } finally {
      producing = false;
      wakeAll();
    }
  };

  const worker = async () => {
    for (;;) {
      if (aborted) return;
      const file = queue.shift();
      if (!file) {
        if (!producing) return;
        idleWorkers += 1;
        await new Promise<void>((resolve) => waiting.push(resolve));
        idleWorkers -= 1;
        continue;
      }
      try {
        const outcome = await uploadOne(file, options, placement, client);
        finish(outcome);
        file.settle(outcome);
      } catch (err) {
        file.settle(null);
        abort(err);
        return;
      }
    }
  };

  await Promise.all([producer(), ...Array.from({ length: options.concurrency }, worker)]);
  await Promise.all(followers);
  if (unexpected) throw unexpected;
  return aborted;
}

/** Bytes of a file's head read to tell its type when the size alone does not pick the path. */
const SNIFF_BYTES = 64 * 1024;

/** The built-in kinds' content, in the order a server asks them (another kind's files are judged by the server). */
const SERVER_CONTENT = [IMAGE_CONTENT, DOCUMENT_CONTENT, VIDEO_CONTENT];

/** The file's type by its content as the server will see it (src/ingest/detect.ts), or null. */
async function sniff(path: string, filename: string): Promise<{ mediaType: string; mime: string } | null> {
  try {
    const head = new Uint8Array(await Bun.file(path).slice(0, SNIFF_BYTES).arrayBuffer());
    const detection = await detectType(SERVER_CONTENT, head, filename, path);
    return detection.ok ? { mediaType: detection.type.mediaType, mime: detection.type.mime } : null;
  } catch {
    return null;
  }
}

/** Sends one file by the streaming upload (falling back to an intent on 413) or an upload intent. */
async function uploadOne(file: HashedFile, options: ImportOptions, placement: Placement, client: ImportClient): Promise<FileOutcome> {
  const filename = basename(file.path);
  // Only files past the document limit need their type to pick a path (and an intent its content_type).
  const detected = file.size > STREAMING_DOCUMENT_LIMIT_BYTES ? await sniff(file.path, filename) : null;
  const intentOptions = { tags: options.tags, projectId: placement.projectId, folderId: placement.folderId, skipDuplicates: options.skipDuplicates };
  const viaIntent = async (): Promise<FileOutcome> => {
    const contentType = (detected ?? (await sniff(file.path, filename)))?.mime ?? (Bun.file(file.path).type.split(";")[0] || "application/octet-stream");
    try {
      const done = await client.intentUpload({ path: file.path, filename, size: file.size, sha256: file.sha256, contentType }, intentOptions);
      return done.deduplicated
        ? { rel: file.rel, status: "already stored", size: file.size, fileId: done.file_id }
        : { rel: file.rel, status: "stored", size: file.size, fileId: done.file_id, via: "intent" };
    } catch (err) {
      if (err instanceof FileRefused) return { rel: file.rel, status: "failed", size: file.size, reason: err.message };
      throw err;
    }
  };
  if (chooseUploadPath(file.size, detected?.mediaType ?? null, filename) === "intent") return viaIntent();

  const fields: Record<string, string> = {};
  if (options.tags.length) fields.tags = options.tags.join(",");
  if (placement.projectId) fields.project_id = placement.projectId;
  if (placement.folderId) fields.folder_id = placement.folderId;
  if (options.skipDuplicates) fields.skip_duplicates = "true";
  let answer;
  try {
    answer = await client.streamingUpload(file.path, file.size, fields);
  } catch (err) {
    if (err instanceof FileRefused) return { rel: file.rel, status: "failed", size: file.size, reason: err.message };
    throw err;
  }
  if (answer.status === 201) {
    return answer.body.skipped
      ? { rel: file.rel, status: "already stored", size: file.size, fileId: answer.body.skipped_existing_image_id ?? answer.body.image_id }
      : { rel: file.rel, status: "stored", size: file.size, fileId: answer.body.image_id, via: "streaming" };
  }
  if (answer.status === 413 && answer.body?.code === "FILE_TOO_LARGE") return viaIntent();
  return { rel: file.rel, status: "failed", size: file.size, reason: describeRefusal(answer) };
}

function summarize(outcomes: FileOutcome[], skipped: ImportSummary["skipped"], elapsedMs: number, aborted: string | null, total: number): ImportSummary {
  const sorted = [...outcomes].sort((a, b) => (a.rel < b.rel ? -1 : a.rel > b.rel ? 1 : 0));
  const failed = sorted.flatMap((o) => (o.status === "failed" ? [{ rel: o.rel, reason: o.reason }] : []));
  return {
    total,
    stored: sorted.filter((o) => o.status === "stored").length,
    alreadyStored: sorted.filter((o) => o.status === "already stored").length,
    failed,
    skipped,
    bytesStored: sorted.reduce((n, o) => n + (o.status === "stored" ? o.size : 0), 0),
    elapsedMs,
    aborted,
    analysis: null,
    outcomes: sorted,
    exitCode: failed.length > 0 || aborted !== null ? 1 : 0,
  };
}

function printSummary(out: ImportOutput, s: ImportSummary): void {
  const notReached = s.total - s.outcomes.length;
  const lines = [
    `Summary: ${s.total} file${s.total === 1 ? "" : "s"}: ${s.stored} stored, ${s.alreadyStored} already stored, ${s.failed.length} failed` +
      `${notReached > 0 ? `, ${notReached} not reached` : ""}${s.skipped.length ? `, ${s.skipped.length} skipped` : ""}; ` +
      `${formatBytes(s.bytesStored)} uploaded in ${formatDuration(s.elapsedMs)}`,
  ];
  if (s.failed.length) {
    lines.push("Failed:");
    for (const f of s.failed) lines.push(`  ${f.rel}: ${f.reason}`);
  }
  if (s.aborted) lines.push(`Stopped early: ${s.aborted}. Run the same import again to resume.`);
  out.write(lines.join("\n") + "\n");
}
