/**
 * Hashing threads for file writes (hash-worker.ts): ChunkedFileWriter hands each full batch to a
 * thread that updates the file's SHA-256/MD5 and writes the batch, so the thread reading the
 * request only parses and copies. Profiled on the upload benchmark (100 MB streamed, 2 cores),
 * SHA-256 was ~40% of the request thread's time and MD5 of intent parts ~50%; both ran in
 * series with reading the body. A file's batches all go to one thread (its hash state lives
 * there), files are spread over the threads. Threads start on first use (or startHashThreads)
 * and never keep the process alive; until one has answered, and where none can start, callers
 * hash on their own thread. A thread that dies fails the files it was writing (their hash state
 * is gone), not later ones.
 */
import { cpus } from "node:os";
import { WorkerThread } from "../native/worker-thread.ts";

export type HashRequest =
  | { kind: "open"; stream: number; sha256: boolean; md5: boolean }
  /** `directFd`: an O_DIRECT descriptor of the same file to write through, or -1. */
  | { kind: "batch"; stream: number; buffer: ArrayBuffer; length: number; fd: number; position: number; directFd: number }
  | { kind: "digest"; stream: number }
  | { kind: "drop"; stream: number }
  | { kind: "range"; stream: number; path: string; offset: number; length: number }
  | { kind: "file"; path: string };

export interface HashReply {
  ok: boolean;
  error?: string;
  code?: string;
  /** A batch's buffer, handed back (on failure too). */
  buffer?: ArrayBuffer;
  /** The O_DIRECT descriptor refused the batch (EINVAL): it was written through `fd`. */
  directRefused?: boolean;
  sha256?: string;
  md5?: string | null;
  size?: number;
}

type HashThread = WorkerThread<HashRequest, HashReply>;

const MAX_THREADS = 2;
/** Threads that failed to start or died; past this many none is started again (the process hashes on its own). */
const MAX_FAILURES = 3;

/** The process's hashing threads: stateless between files, so one pool serves every server in the process. */
class HashPool {
  private threads: HashThread[] = [];
  /** Threads that have answered once: a thread that cannot start (a binary missing its entry point) is never handed a file. */
  private readonly ready = new WeakSet<HashThread>();
  private failures = 0;
  private turn = 0;
  private streams = 0;

  nextStream(): number {
    return ++this.streams;
  }

  pick(): HashThread | null {
    const alive = this.threads.filter((t) => !t.broken);
    this.failures += this.threads.length - alive.length;
    this.threads = alive;
    try {
      // Not os.availableParallelism(): Bun reads it from navigator, which pdf.js's legacy build replaces.
      while (this.failures < MAX_FAILURES && this.threads.length < Math.max(1, Math.min(MAX_THREADS, cpus().length))) {
        const thread = new WorkerThread<HashRequest, HashReply>("storage/hash-worker.ts", "hashing thread");
        this.threads.push(thread);
        void thread.ask({ kind: "drop", stream: 0 }).then((reply) => {
          if (!(reply instanceof Error)) this.ready.add(thread);
        });
      }
    } catch {
      this.failures = MAX_FAILURES;
    }
    const usable = this.threads.filter((t) => this.ready.has(t));
    if (usable.length === 0) return null;
    return usable[this.turn++ % usable.length]!;
  }

  /** Resolves once every thread started has answered (or failed), to how many are usable. */
  async started(): Promise<number> {
    this.pick();
    await Promise.all(this.threads.map((t) => t.ask({ kind: "drop", stream: 0 })));
    return this.threads.filter((t) => this.ready.has(t)).length;
  }
}

let pool: HashPool | null = null;
const threads = (): HashPool => (pool ??= new HashPool());

/** Starts the hashing threads so that the first upload does not hash on the request's thread; resolves to how many answered. */
export function startHashThreads(): Promise<number> {
  return threads().started();
}

function failed(reply: HashReply | Error): Error | null {
  if (reply instanceof Error) return reply;
  if (reply.ok) return null;
  return Object.assign(new Error(reply.error ?? "hashing failed"), reply.code ? { code: reply.code } : {});
}

/** One file's hashes on a hashing thread. */
export class ThreadedHash {
  private constructor(
    private readonly thread: HashThread,
    private readonly stream: number,
    private readonly opened: Promise<HashReply | Error>,
  ) {}

  /** null when no hashing thread is available (the caller hashes itself). */
  static open(options: { sha256: boolean; md5: boolean }): ThreadedHash | null {
    const thread = threads().pick();
    if (!thread) return null;
    const stream = threads().nextStream();
    return new ThreadedHash(thread, stream, thread.ask({ kind: "open", stream, ...options }));
  }

  /**
   * Hashes buffer[0..length] and writes it at `position`, through `directFd` (O_DIRECT) unless it
   * is -1 or refuses the write, else through `fd`. `buffer` (whole, not a view) is transferred: it
   * is unusable until this resolves to it again. Rejects with the write's error, carrying the
   * buffer when the thread handed it back.
   */
  async batch(buffer: Uint8Array, length: number, fd: number, position: number, directFd = -1): Promise<{ buffer: Uint8Array; directRefused: boolean }> {
    const reply = await this.thread.ask({ kind: "batch", stream: this.stream, buffer: buffer.buffer as ArrayBuffer, length, fd, position, directFd }, [buffer.buffer as ArrayBuffer]);
    const back = reply instanceof Error || !reply.buffer ? null : new Uint8Array(reply.buffer);
    const error = failed(reply);
    if (error) throw Object.assign(error, { buffer: back });
    return { buffer: back!, directRefused: (reply as HashReply).directRefused === true };
  }

  /** Adds bytes offset..offset+length of the file at `path` to the SHA-256 (read on the thread). */
  async range(path: string, offset: number, length: number): Promise<void> {
    const error = failed(await this.thread.ask({ kind: "range", stream: this.stream, path, offset, length }));
    if (error) throw error;
  }

  async digest(): Promise<{ sha256: string; md5: string | null }> {
    const error = failed(await this.opened);
    const reply = await this.thread.ask({ kind: "digest", stream: this.stream });
    const failure = error ?? failed(reply);
    if (failure) throw failure;
    const { sha256, md5 } = reply as HashReply;
    return { sha256: sha256 ?? "", md5: md5 ?? null };
  }

  /** Forgets the hash state (a discarded file). */
  drop(): void {
    void this.thread.ask({ kind: "drop", stream: this.stream });
  }
}

/** SHA-256 and size of a file on disk, read and hashed on a hashing thread when one is available. */
export async function digestFileOffThread(path: string): Promise<{ sha256: string; size: number } | null> {
  const thread = threads().pick();
  if (!thread) return null;
  const reply = await thread.ask({ kind: "file", path });
  // A thread that died answers an Error: the caller reads the file itself.
  if (reply instanceof Error) return null;
  const error = failed(reply);
  if (error) throw error;
  return { sha256: (reply as HashReply).sha256!, size: (reply as HashReply).size! };
}
