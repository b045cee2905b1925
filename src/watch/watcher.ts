/**
 * The server's side of watched folders: polls each active watched directory, takes each file
 * once it is complete (its size and modification time unchanged for MEDIABOX_WATCH_STABLE_MS, and
 * no process holding it open for writing where /proc shows them), stores it through the normal
 * ingest path (type detection, refusal of unsafe files, size limits, pipelines), and moves it to
 * `done/` or `failed/` inside the watched directory, keeping its relative path; a failed file gets
 * `<name>.reason.txt` beside it. Subdirectories become folders under the mapping's folder.
 *
 * Restart-safe by a claim written before the file is touched: the file's row (with the file id it
 * will be stored as) is committed, then the file is renamed into `.mediabox-intake/<item id>`
 * (same directory tree, so the rename is atomic), copied to scratch and ingested; ingesting is
 * idempotent by file id. After a crash, open claims are finished first: a file already stored is
 * only moved to done/, one not stored yet is ingested with the same id, so no file is taken twice
 * and none is left behind. Polling rather than inotify: it works the same on network shares.
 */
import { createHash } from "node:crypto";
import { createReadStream, existsSync, mkdirSync, readdirSync, readFileSync, readlinkSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { copyFile, readdir, stat } from "node:fs/promises";
import { basename, dirname, extname, join, relative, sep } from "node:path";
import type { IngestDeps } from "../ingest/deps.ts";
import { ApiError, errorMessage } from "../errors.ts";
import { originalBlobKey } from "../files/blob-keys.ts";
import { detectType } from "../ingest/detect.ts";
import { ingestStagedFile, sizeLimitViolation } from "../ingest/ingest.ts";
import { DEFAULT_UPLOAD_OPTIONS } from "../ingest/options.ts";
import type { Logger } from "../log.ts";
import {
  activeWatchedFolders,
  claimItem,
  ensureFolderPath,
  finishItem,
  openItems,
  scanned,
  withdrawItem,
  type WatchedFolderRow,
  type WatchItemRow,
} from "./watched-folders.ts";

/** Where a claimed file waits while it is stored (hidden, so scans skip it). */
export const HOLDING_DIR = ".mediabox-intake";
export const DONE_DIR = "done";
export const FAILED_DIR = "failed";
const HEAD_BYTES = 64 * 1024;

interface Seen {
  size: number;
  mtimeMs: number;
  since: number;
}

export class FolderWatcher {
  private timer: ReturnType<typeof setTimeout> | null = null;
  private pass: Promise<void> | null = null;
  private stopped = false;
  /** Size and modification time of each file when last seen changing, by absolute path. */
  private readonly seen = new Map<string, Seen>();
  private readonly log: Logger;

  constructor(private readonly ctx: IngestDeps) {
    this.log = ctx.log.child({ component: "watch" });
  }

  start(): void {
    this.schedule(0);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.pass;
  }

  private schedule(delay: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.pass = this.runPass().finally(() => {
        this.pass = null;
        this.schedule(this.ctx.config.watchPollMs);
      });
    }, delay);
  }

  private async runPass(): Promise<void> {
    for (const watch of await activeWatchedFolders(this.ctx.sql)) {
      if (this.stopped) return;
      try {
        if (!existsSync(watch.path)) throw new Error(`${watch.path} does not exist`);
        for (const item of await openItems(this.ctx.sql, watch.id)) await this.resume(watch, item);
        await this.scan(watch);
        await scanned(this.ctx.sql, this.ctx.clock, watch.id, null);
      } catch (err) {
        this.log.warn("watched folder pass failed", { path: watch.path, err: errorMessage(err) });
        await scanned(this.ctx.sql, this.ctx.clock, watch.id, errorMessage(err));
      }
    }
  }

  /** Finishes a claim a stopped or killed process left open. */
  private async resume(watch: WatchedFolderRow, item: WatchItemRow): Promise<void> {
    const holding = join(watch.path, HOLDING_DIR, item.id);
    const original = join(watch.path, item.rel_path);
    if (!existsSync(holding) && existsSync(original) && statSync(original).size === item.size_bytes) {
      mkdirSync(dirname(holding), { recursive: true });
      renameSync(original, holding);
    }
    if (existsSync(holding)) return this.take(watch, item);
    // The file left the holding place: it was moved out, and only its record was not finished.
    const stored = await this.ctx.files.exists(item.file_id);
    const moved = join(stored ? DONE_DIR : FAILED_DIR, item.rel_path);
    await finishItem(this.ctx.sql, this.ctx.clock, item.id, {
      status: stored ? "done" : "failed",
      movedTo: moved,
      error: stored ? null : existsSync(join(watch.path, moved)) ? "failed before a restart (see the reason file)" : "the file was removed before it was stored",
    });
  }

  /** Every complete file under the watched directory is claimed and taken, one at a time. */
  private async scan(watch: WatchedFolderRow): Promise<void> {
    const now = Date.now();
    const present = new Set<string>();
    for (const path of await filesUnder(watch.path)) {
      if (this.stopped) return;
      present.add(path);
      let info;
      try {
        info = await stat(path);
      } catch {
        continue;
      }
      const last = this.seen.get(path);
      if (!last || last.size !== info.size || last.mtimeMs !== info.mtimeMs) {
        this.seen.set(path, { size: info.size, mtimeMs: info.mtimeMs, since: now });
        if (this.ctx.config.watchStableMs > 0) continue;
      } else if (now - last.since < this.ctx.config.watchStableMs) continue;
      if (openForWriting(path)) continue;
      this.seen.delete(path);
      const relPath = relative(watch.path, path).split(sep).join("/");
      const item = await claimItem(this.ctx.sql, this.ctx.clock, watch, relPath, info.size);
      const holding = join(watch.path, HOLDING_DIR, item.id);
      mkdirSync(dirname(holding), { recursive: true });
      try {
        renameSync(path, holding);
      } catch (err) {
        // Gone meanwhile: another process watching the same folder took it (every process of a
        // deployment on one host watches it), or its owner removed it. Nothing was taken here.
        if ((err as NodeJS.ErrnoException).code === "ENOENT") await withdrawItem(this.ctx.sql, item.id);
        else await finishItem(this.ctx.sql, this.ctx.clock, item.id, { status: "failed", movedTo: relPath, error: `could not take the file: ${errorMessage(err)}` });
        continue;
      }
      await this.take(watch, item);
    }
    for (const path of this.seen.keys()) if (path.startsWith(watch.path + sep) && !present.has(path)) this.seen.delete(path);
  }

  /** Stores the held file (unless a previous run already did) and moves it out. */
  private async take(watch: WatchedFolderRow, item: WatchItemRow): Promise<void> {
    const holding = join(watch.path, HOLDING_DIR, item.id);
    if (await this.ctx.files.exists(item.file_id)) return this.moveOut(watch, item, null);
    const filename = basename(item.rel_path);
    const scratch = join(this.ctx.dataDir.scratch, `watch-${item.id}`);
    try {
      mkdirSync(this.ctx.dataDir.scratch, { recursive: true });
      await copyFile(holding, scratch);
      const { size, sha256, head } = await hashFile(scratch);
      const detection = await detectType(this.ctx.kinds.uploaded(), head, filename, scratch);
      const refusal = !detection.ok ? `unsupported or unsafe file: ${detection.reason}` : sizeLimitViolation(this.ctx.kinds, detection.type, size);
      if (refusal || !detection.ok) throw new Refused(refusal ?? "unsupported file");
      const folders = item.rel_path.split("/").slice(0, -1);
      const folderId = folders.length ? await ensureFolderPath(this.ctx.sql, this.ctx.clock, watch.org_id, watch.project_id, watch.folder_id, folders) : watch.folder_id;
      await ingestStagedFile(this.ctx, scratch, {
        id: item.file_id,
        orgId: watch.org_id,
        filename,
        size,
        sha256,
        type: detection.type,
        blobKey: originalBlobKey(watch.org_id, item.file_id),
        uploadMethod: "streaming",
        sessionId: null,
        uploadedBy: null,
        options: DEFAULT_UPLOAD_OPTIONS,
        placement: { projectId: watch.project_id, folderId },
        origin: { source: "watch", detail: `${watch.path}/${item.rel_path}` },
      });
      this.log.info("watched file stored", { path: join(watch.path, item.rel_path), file_id: item.file_id });
      await this.moveOut(watch, item, null);
    } catch (err) {
      rmSync(scratch, { force: true });
      // A broken disk or database is not the file's fault: the claim stays open and is tried again.
      if (!(err instanceof Refused) && !isFileProblem(err)) throw err;
      this.log.info("watched file refused", { path: join(watch.path, item.rel_path), reason: errorMessage(err) });
      await this.moveOut(watch, item, errorMessage(err));
    }
  }

  /** Moves the held file to done/ or failed/ (with its reason file), then closes its claim. */
  private async moveOut(watch: WatchedFolderRow, item: WatchItemRow, error: string | null): Promise<void> {
    const holding = join(watch.path, HOLDING_DIR, item.id);
    const target = freeName(join(watch.path, error === null ? DONE_DIR : FAILED_DIR, item.rel_path));
    mkdirSync(dirname(target), { recursive: true });
    if (error !== null) writeFileSync(`${target}.reason.txt`, `${error}\n`);
    renameSync(holding, target);
    await finishItem(this.ctx.sql, this.ctx.clock, item.id, { status: error === null ? "done" : "failed", movedTo: relative(watch.path, target).split(sep).join("/"), error });
  }
}

/** A refusal of the file itself (type, size, a folder name): it goes to failed/. */
class Refused extends Error {}

/** Errors that say the file cannot be stored as it is, not that the server is unwell. */
function isFileProblem(err: unknown): boolean {
  const code = (err as { code?: unknown }).code;
  return (err instanceof ApiError && err.status < 500) || code === "ENAMETOOLONG";
}

/** `done/a.pdf` when free, else `done/a (2).pdf`, `done/a (3).pdf`, ... */
function freeName(path: string): string {
  if (!existsSync(path)) return path;
  const ext = extname(path);
  const stem = path.slice(0, path.length - ext.length);
  for (let n = 2; ; n++) {
    const candidate = `${stem} (${n})${ext}`;
    if (!existsSync(candidate)) return candidate;
  }
}

/** Regular files under `root`, skipping hidden names and the top-level done/ and failed/. */
async function filesUnder(root: string): Promise<string[]> {
  const found: string[] = [];
  const walk = async (dir: string, top: boolean) => {
    for (const entry of await readdir(dir, { withFileTypes: true })) {
      if (entry.name.startsWith(".")) continue;
      if (top && (entry.name === DONE_DIR || entry.name === FAILED_DIR)) continue;
      const path = join(dir, entry.name);
      if (entry.isDirectory()) await walk(path, false);
      else if (entry.isFile()) found.push(path);
    }
  };
  await walk(root, true);
  return found.sort();
}

async function hashFile(path: string): Promise<{ size: number; sha256: string; head: Uint8Array }> {
  const hash = createHash("sha256");
  const head: Buffer[] = [];
  let headSize = 0;
  let size = 0;
  for await (const chunk of createReadStream(path) as AsyncIterable<Buffer>) {
    hash.update(chunk);
    size += chunk.byteLength;
    if (headSize < HEAD_BYTES) {
      head.push(chunk.subarray(0, HEAD_BYTES - headSize));
      headSize += Math.min(chunk.byteLength, HEAD_BYTES - headSize);
    }
  }
  return { size, sha256: hash.digest("hex"), head: Buffer.concat(head) };
}

/**
 * Whether a process has the file open for writing, as far as /proc shows (processes of this
 * machine or container; a writer on another host of a network share is not seen, which the
 * stability window covers). Looked up only for files that have stopped changing.
 */
function openForWriting(path: string): boolean {
  let pids: string[];
  try {
    pids = readdirSync("/proc").filter((name) => /^\d+$/.test(name));
  } catch {
    return false;
  }
  for (const pid of pids) {
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      try {
        if (readlinkSync(`/proc/${pid}/fd/${fd}`) !== path) continue;
        const flags = /flags:\s*(\d+)/.exec(readFileSync(`/proc/${pid}/fdinfo/${fd}`, "utf8"))?.[1];
        // O_WRONLY (1) or O_RDWR (2) in the low bits of the octal flags.
        if (flags && (Number.parseInt(flags, 8) & 3) !== 0) return true;
      } catch {
        // The descriptor closed meanwhile.
      }
    }
  }
  return false;
}
