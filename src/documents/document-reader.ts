/**
 * Reads documents in a child process the server can kill (reader-child.ts), one at a time, with a
 * watchdog; PDF pages are drawn as pictures there too (render), under the same limits. The child is started on first use and again after it dies; reads wait their turn in
 * the parent. While a read runs, the child's resident memory is polled from /proc every ~100 ms
 * and the child is SIGKILLed past the memory budget (MEDIABOX_DOCUMENT_MEMORY_MB) or past the time
 * limit (time spent waiting for the server's OCR does not count). A read stopped for a limit, or
 * by the child dying on its own, rejects with a DocumentReadError: the document fails for
 * good instead of being retried into the same failure. Cancelling a read (its signal) kills the
 * child at once; close() kills it and refuses further reads. However the server process ends, the
 * child goes with it (an exit hook here; the IPC and parent-death checks in the child).
 *
 * Small plain text and Markdown (up to TEXT_THREAD_BYTES, chunk sizes estimated) are read on a
 * worker thread instead: their reading is linear in their size and bounded by it, and the
 * child's round trip (a scratch file, IPC, a process at low priority that waits behind every
 * busy thread) was ~20 ms of a 1 KB note's ~25 ms of processing in a bulk import.
 */
import type { SummaryDraft } from "../text/summary.ts";
import { mkdirSync, rmSync } from "node:fs";
import { getPriority, setPriority, tmpdir } from "node:os";
import { join } from "node:path";
import type { Subprocess } from "bun";
import { errorMessage } from "../errors.ts";
import type { Logger } from "../log.ts";
import { isCompiled } from "../native/packages.ts";
import { BudgetedThread, ThreadBudgetError } from "../native/budgeted-thread.ts";
import { nicerBy } from "../native/thread-priority.ts";
import type { TextReadReply, TextReadRequest } from "./text-read-worker.ts";
import type { Segmentation } from "../ocr/ocr.ts";
import type { OcrLike } from "./read-document.ts";
import { cpuMillis, residentBytes } from "./process-memory.ts";
import type { RenderedPage } from "./render-page.ts";
import { DOCUMENT_READER_COMMAND, READER_PARENT_ENV, type ChunkingRequest, type FromReader, type LayoutRequest, type ToReader } from "./reader-protocol.ts";
import { DocumentReadError, type Chunk, type DocumentContent } from "./types.ts";
import { withWholeText } from "./reader-common.ts";
import type { DocumentType } from "../files/file.ts";

const MiB = 1024 * 1024;
/** Plain text and Markdown up to this size are read on a worker thread by default (at most ~0.4 s of hostile Markdown). */
const TEXT_THREAD_BYTES = 256 * 1024;

export interface DocumentReaderOptions {
  /** The child is killed when its resident memory passes this. */
  memoryBudgetBytes: number;
  /**
   * CPU time the reader may spend on one document. Default 10 minutes. CPU rather than wall-clock
   * time, so a busy machine (the reader runs at low priority) slows a read without killing it; a
   * reader that stalls without using CPU is stopped after 3x the limit plus 30 s of wall-clock
   * time (OCR waits excluded).
   */
  timeLimitMs?: number;
  /** How often the watchdog looks. Default 100 ms. */
  pollMs?: number;
  /** Where documents are written for the child to read. Default: the OS temp directory. */
  scratchDir?: string;
  /** OCR for scanned pages, run in this process (the tesseract workers live here). */
  ocr: OcrLike;
  log?: Logger;
  /** Plain text and Markdown up to this many bytes are read on a worker thread. Default TEXT_THREAD_BYTES; 0: all in the child. */
  textThreadBytes?: number;
  /** The child's command line; default: this program's hidden reader command. */
  command?: string[];
}

export interface ReadOptions {
  /** Aborting kills the child's current read (or drops the queued one); the read rejects with "extraction interrupted". */
  signal?: AbortSignal;
  onPage?: (done: number, total: number) => void;
  /** Also cut the document into chunks, in the child. */
  chunking?: ChunkingRequest;
  /** Also draft its summary and keyphrases (text/summary.ts), where it is read. */
  summarize?: boolean;
  /** Find PDF pages' regions with this layout model (in the child); without it the rules lay pages out alone. */
  layout?: LayoutRequest | null;
}

export interface ReadResult {
  document: DocumentContent;
  /** Null unless chunking was asked for. */
  chunks: Chunk[] | null;
  /** False when chunk sizes were estimated rather than counted by the model's tokenizer. */
  exactTokens: boolean;
  /** Null unless a summary was asked for and the document has text. */
  summary: SummaryDraft | null;
}

/** What the watchdog saw of one read (for logs, tests and the bombs benchmark). */
export interface ReadStats {
  peakRssBytes: number;
  /** Wall-clock time of the read, OCR waits excluded. */
  readerMs: number;
  /** CPU time the child spent on it. */
  readerCpuMs: number;
}

type StopReason = "memory" | "time" | "cancelled" | "closed" | "startup" | "recycled";

/** What the child is asked to do with the bytes: read the document, or draw one page of a PDF. */
type Request = { kind: "read"; type: DocumentType; options: ReadOptions } | { kind: "render"; page: number; width: number | null };

interface Task {
  id: number;
  bytes: Uint8Array;
  request: Request;
  signal: AbortSignal | undefined;
  resolve: (result: ReadResult | RenderedPage) => void;
  reject: (err: Error) => void;
}

interface Child {
  proc: Subprocess;
  pid: number;
  /** True once the child has loaded and said so; false if it died or hung first. */
  ready: Promise<boolean>;
  exited: Promise<number>;
  /** Why the parent killed it, when it did. */
  stopReason: StopReason | null;
  onMessage: ((message: FromReader) => void) | null;
  /** The read in progress, told when the child exits (one slot: a handler per read on `exited` would keep every read's bytes alive). */
  onExit: ((code: number) => void) | null;
}

/** How long a starting child may take to say it is ready (it loads the whole program). */
const STARTUP_LIMIT_MS = 60_000;

/** Children alive in this process, killed on the way out whatever stops the process. */
const liveChildren = new Set<Subprocess>();
let exitHookInstalled = false;
function track(proc: Subprocess): void {
  liveChildren.add(proc);
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on("exit", () => {
    for (const child of liveChildren) child.kill("SIGKILL");
  });
}

/** The command that starts the reader: this program again, with the hidden command. */
export function readerCommand(): string[] {
  if (isCompiled) return [process.execPath, DOCUMENT_READER_COMMAND];
  return [process.execPath, join(import.meta.dir, "..", "main.ts"), DOCUMENT_READER_COMMAND];
}

export class DocumentReader {
  private readonly queue: Task[] = [];
  private child: Child | null = null;
  private busy = false;
  private readonly textThread = new BudgetedThread<TextReadRequest, TextReadReply>("documents/text-read-worker.ts", "the text reading thread");
  private closed = false;
  private nextId = 0;
  private scratchReady = false;
  private readonly scratchDir: string;
  private readonly timeLimitMs: number;
  /** Wall-clock backstop for a reader that stalls without using CPU. */
  private readonly stallLimitMs: number;
  private readonly pollMs: number;
  /** Stats of the last finished read. */
  lastRead: ReadStats | null = null;

  constructor(private readonly options: DocumentReaderOptions) {
    this.scratchDir = options.scratchDir ?? tmpdir();
    this.timeLimitMs = options.timeLimitMs ?? 10 * 60 * 1000;
    this.stallLimitMs = 3 * this.timeLimitMs + 30_000;
    this.pollMs = options.pollMs ?? 100;
  }

  /** The child's pid while one runs. */
  get pid(): number | null {
    return this.child?.pid ?? null;
  }

  read(bytes: Uint8Array, type: DocumentType, options: ReadOptions = {}): Promise<ReadResult> {
    if ((type === "txt" || type === "md") && bytes.byteLength <= (this.options.textThreadBytes ?? TEXT_THREAD_BYTES) && !options.chunking?.tokenizer) {
      return this.readTextOnThread(bytes, type, options);
    }
    return this.enqueue(bytes, { kind: "read", type, options }, options.signal) as Promise<ReadResult>;
  }

  private async readTextOnThread(bytes: Uint8Array, type: "txt" | "md", options: ReadOptions): Promise<ReadResult> {
    if (this.closed) throw new Error("the document reader is shut down");
    if (options.signal?.aborted) throw new Error("extraction interrupted");
    let reply: TextReadReply;
    try {
      // The reader's time limit holds here too (wall-clock: the thread has the work to itself).
      reply = await this.textThread.run(
        { bytes, type, maxTokens: options.chunking?.maxTokens ?? null, summarize: options.summarize ?? false },
        { budgetMs: this.timeLimitMs, work: "reading the document", ...(options.signal ? { signal: options.signal } : {}) },
      );
    } catch (err) {
      if (err instanceof ThreadBudgetError) throw new DocumentReadError(err.message);
      if (options.signal?.aborted) throw new Error("extraction interrupted");
      throw err;
    }
    if ("error" in reply) throw reply.permanent ? new DocumentReadError(reply.error) : new Error(reply.error);
    options.onPage?.(reply.doc.page_count, reply.doc.page_count);
    return { document: withWholeText(reply.doc), chunks: reply.chunks, exactTokens: false, summary: reply.summary };
  }

  /**
   * Draws page `page` (1-indexed) of a PDF `width` pixels wide (null: render-page.ts's default size) as WebP, in the child under the
   * same limits as a read: a page past them rejects with a DocumentReadError saying which, as
   * does a file without that page.
   */
  render(bytes: Uint8Array, page: number, width: number | null, options: { signal?: AbortSignal } = {}): Promise<RenderedPage> {
    return this.enqueue(bytes, { kind: "render", page, width }, options.signal) as Promise<RenderedPage>;
  }

  private enqueue(bytes: Uint8Array, request: Request, signal: AbortSignal | undefined): Promise<ReadResult | RenderedPage> {
    if (this.closed) return Promise.reject(new Error("the document reader is shut down"));
    if (signal?.aborted) return Promise.reject(new Error("extraction interrupted"));
    return new Promise<ReadResult | RenderedPage>((resolve, reject) => {
      const task: Task = { id: ++this.nextId, bytes, request, signal, resolve, reject };
      this.queue.push(task);
      // A read cancelled while it waits leaves the queue; a running one is handled by run().
      signal?.addEventListener(
        "abort",
        () => {
          const at = this.queue.indexOf(task);
          if (at < 0) return;
          this.queue.splice(at, 1);
          reject(new Error("extraction interrupted"));
        },
        { once: true },
      );
      this.pump();
    });
  }

  /** Kills the child and fails every waiting read; later reads are refused. */
  async close(): Promise<void> {
    this.closed = true;
    this.textThread.close();
    for (const task of this.queue.splice(0)) task.reject(new Error("the document reader is shut down"));
    const child = this.child;
    if (child) {
      this.kill(child, "closed");
      await child.exited;
    }
  }

  private pump(): void {
    if (this.busy || this.closed) return;
    const task = this.queue.shift();
    if (!task) return;
    this.busy = true;
    this.run(task)
      .then(task.resolve, task.reject)
      .finally(() => {
        this.busy = false;
        this.pump();
      });
  }

  private spawn(): Child {
    const proc = Bun.spawn(this.options.command ?? readerCommand(), {
      env: {
        ...process.env,
        [READER_PARENT_ENV]: String(process.pid),
        // JavaScriptCore sizes its heap from the machine's RAM; sized to the budget, it collects
        // garbage well before the watchdog would have to step in.
        BUN_JSC_forceRAMSize: String(this.options.memoryBudgetBytes),
      },
      stdio: ["ignore", "ignore", "inherit"],
      serialization: "advanced",
      ipc: (message: FromReader) => child.onMessage?.(message),
    });
    track(proc);
    try {
      // A lower CPU priority than the server's: on a busy machine its event loop (requests, /healthz) goes first.
      setPriority(proc.pid, nicerBy(getPriority()));
    } catch {
      // Not permitted here (some sandboxes): the reader then competes for the CPU as an equal.
    }
    let settleReady!: (ready: boolean) => void;
    const child: Child = {
      proc,
      pid: proc.pid,
      ready: new Promise<boolean>((resolve) => (settleReady = resolve)),
      exited: proc.exited,
      stopReason: null,
      onMessage: (message) => {
        if (message.type === "ready") settleReady(true);
      },
      onExit: null,
    };
    const startup = setTimeout(() => {
      this.kill(child, "startup");
      settleReady(false);
    }, STARTUP_LIMIT_MS);
    void child.ready.then(() => clearTimeout(startup));
    void proc.exited.then((code) => {
      liveChildren.delete(proc);
      child.onExit?.(code);
      settleReady(false);
      if (this.child === child) this.child = null;
    });
    this.options.log?.debug("document reader started", { pid: proc.pid });
    return child;
  }

  private kill(child: Child, reason: StopReason): void {
    child.stopReason ??= reason;
    child.proc.kill("SIGKILL");
  }

  private scratchPath(id: number): string {
    if (!this.scratchReady) {
      mkdirSync(this.scratchDir, { recursive: true });
      this.scratchReady = true;
    }
    return join(this.scratchDir, `document-read-${process.pid}-${id}-${crypto.randomUUID().slice(0, 8)}`);
  }

  private async run(task: Task): Promise<ReadResult | RenderedPage> {
    const { signal } = task;
    if (signal?.aborted) throw new Error("extraction interrupted");
    const child = (this.child ??= this.spawn());
    const onAbort = () => this.kill(child, "cancelled");
    signal?.addEventListener("abort", onAbort, { once: true });
    const path = this.scratchPath(task.id);
    const stats: ReadStats = { peakRssBytes: 0, readerMs: 0, readerCpuMs: 0 };
    try {
      await Bun.write(path, task.bytes);
      if (!(await child.ready)) throw this.stoppedError(child, await child.exited, false, task.request);
      return await this.exchange(child, task, path, stats);
    } finally {
      signal?.removeEventListener("abort", onAbort);
      rmSync(path, { force: true });
      this.lastRead = stats;
      this.recycleIfBloated(child);
    }
  }

  /** Sends the read and serves the child's messages (pages, OCR) until its answer, its death or a limit. */
  private exchange(child: Child, task: Task, path: string, stats: ReadStats): Promise<ReadResult | RenderedPage> {
    const { request } = task;
    return new Promise<ReadResult | RenderedPage>((resolve, reject) => {
      let settled = false;
      let reading = false;
      let ocrWaits = 0;
      let last = performance.now();
      const cpuAtStart = cpuMillis(child.pid);
      const check = () => {
        const now = performance.now();
        if (ocrWaits === 0) stats.readerMs += now - last;
        last = now;
        const cpu = cpuMillis(child.pid);
        if (cpu !== null && cpuAtStart !== null) stats.readerCpuMs = cpu - cpuAtStart;
        const rss = residentBytes(child.pid);
        if (rss !== null) stats.peakRssBytes = Math.max(stats.peakRssBytes, rss);
        if (rss !== null && rss > this.options.memoryBudgetBytes) this.kill(child, "memory");
        else if (stats.readerCpuMs > this.timeLimitMs || stats.readerMs > this.stallLimitMs) this.kill(child, "time");
      };
      // Once before the read starts (a child already over budget reads nothing), then every pollMs.
      check();
      const watchdog = setInterval(check, this.pollMs);
      const settle = (outcome: () => void) => {
        if (settled) return;
        settled = true;
        clearInterval(watchdog);
        if (child.onMessage === onMessage) child.onMessage = null;
        if (child.onExit === onExit) child.onExit = null;
        outcome();
      };
      const onMessage = (message: FromReader) => {
        if (!("id" in message) || message.id !== task.id) return;
        switch (message.type) {
          case "reading":
            reading = true;
            break;
          case "page":
            if (request.kind === "read") request.options.onPage?.(message.done, message.total);
            break;
          case "ocr":
            ocrWaits += 1;
            this.recognize(message.png, message.segmentation)
              .then(
                (result) => this.send(child, { type: "ocr-result", id: task.id, ocrId: message.ocrId, result }),
                (err: unknown) => this.send(child, { type: "ocr-result", id: task.id, ocrId: message.ocrId, error: errorMessage(err) }),
              )
              .finally(() => {
                ocrWaits -= 1;
                last = performance.now();
              });
            break;
          case "done":
            settle(() => resolve({ document: withWholeText(message.doc), chunks: message.chunks, exactTokens: message.exactTokens, summary: message.summary }));
            break;
          case "rendered":
            settle(() => resolve({ webp: message.webp, width: message.width, height: message.height }));
            break;
          case "failed":
            settle(() => reject(message.permanent ? new DocumentReadError(message.message) : new Error(message.message)));
            break;
        }
      };
      const onExit = (code: number) => settle(() => reject(this.stoppedError(child, code, reading, request)));
      child.onMessage = onMessage;
      child.onExit = onExit;
      // The child may already be gone (it died between reads and its exit was not yet seen).
      if (child.proc.exitCode !== null || child.proc.signalCode !== null) void child.exited.then(onExit);
      this.send(
        child,
        request.kind === "read"
          ? { type: "read", id: task.id, path, documentType: request.type, chunking: request.options.chunking ?? null, summarize: request.options.summarize ?? false, layout: request.options.layout ?? null }
          : { type: "render", id: task.id, path, page: request.page, width: request.width },
      );
    });
  }

  private recognize(png: Uint8Array, segmentation: Segmentation | undefined): ReturnType<OcrLike["recognize"]> {
    return this.options.ocr.recognize(Buffer.from(png.buffer, png.byteOffset, png.byteLength), { segmentation });
  }

  private send(child: Child, message: ToReader): void {
    try {
      child.proc.send(message);
    } catch {
      // The child is gone; its exit fails the read.
    }
  }

  /** A child that kept more than half its budget after a read starts the next read bloated: replace it. */
  private recycleIfBloated(child: Child): void {
    if (this.child !== child || child.proc.exitCode !== null || child.proc.signalCode !== null) return;
    const rss = residentBytes(child.pid);
    if (rss !== null && rss > this.options.memoryBudgetBytes / 2) {
      this.options.log?.info("document reader replaced: it kept too much memory after a read", { rss_mb: Math.round(rss / MiB) });
      this.child = null;
      this.kill(child, "recycled");
    }
  }

  /**
   * Why a read ended with the child gone: a limit, a cancellation, shutdown, or a crash. A crash
   * is the document's doing (permanent) only once the child had the read in hand (`reading`).
   */
  private stoppedError(child: Child, code: number, reading: boolean, request: Request): Error {
    // What the limit stopped, in the words its answer shows (a document's error, or a page image's 422).
    const work = request.kind === "read" ? "reading the document" : "drawing the page";
    switch (child.stopReason) {
      case "memory":
        return new DocumentReadError(
          `${work} needed more than ${Math.round(this.options.memoryBudgetBytes / MiB)} MB of memory ` +
            "(the limit set by MEDIABOX_DOCUMENT_MEMORY_MB), so it was stopped",
        );
      case "time":
        return new DocumentReadError(`${work} took longer than ${formatDuration(this.timeLimitMs)}, so it was stopped`);
      case "cancelled":
        return new Error("extraction interrupted");
      case "closed":
      case "recycled":
        return new Error("the document reader is shut down");
      case "startup":
        return new Error(`the document reader did not start within ${formatDuration(STARTUP_LIMIT_MS)}`);
      default:
        if (!reading) return new Error(`the document reader exited before it could read the document (${exitDescription(child.proc, code)})`);
        return new DocumentReadError(`the document reader stopped unexpectedly while ${request.kind === "read" ? "reading this document" : "drawing this page"} (${exitDescription(child.proc, code)})`);
    }
  }
}

function exitDescription(proc: Subprocess, code: number): string {
  return proc.signalCode ? `killed by ${proc.signalCode}` : `exit code ${code}`;
}

function formatDuration(ms: number): string {
  if (ms >= 60_000 && ms % 60_000 === 0) return `${ms / 60_000} minute${ms === 60_000 ? "" : "s"}`;
  return `${Math.round(ms / 100) / 10} s`;
}
