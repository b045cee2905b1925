/**
 * Hashing threads for file writes (hash-worker.ts): ChunkedFileWriter hands each full batch to a
 * thread that updates the file's SHA-256/MD5 and writes the batch, so the thread reading the
 * request only parses and copies. Profiled on the upload benchmark (100 MB streamed, 2 cores),
 * SHA-256 was ~40% of the request thread's time and MD5 of intent parts ~50%; both ran in
 * series with reading the body. A file's batches all go to one thread (its hash state lives
 * there), files are spread over the threads. Threads start on first use and never keep the
 * process alive; where none can start, or one has died, callers hash on their own thread.
 */
import { cpus } from "node:os";
import { WorkerThread } from "../native/worker-thread.ts";

export type HashRequest =
  | { kind: "open"; stream: number; sha256: boolean; md5: boolean }
  | { kind: "batch"; stream: number; buffer: ArrayBuffer; length: number; fd: number; position: number }
  | { kind: "digest"; stream: number }
  | { kind: "drop"; stream: number }
  | { kind: "file"; path: string };

export interface HashReply {
  ok: boolean;
  error?: string;
  code?: string;
  /** A batch's buffer, handed back (on failure too). */
  buffer?: ArrayBuffer;
  sha256?: string;
  md5?: string | null;
  size?: number;
}

type HashThread = WorkerThread<HashRequest, HashReply>;

const MAX_THREADS = 2;
let threads: HashThread[] = [];
let turn = 0;
let streams = 0;

function pick(): HashThread | null {
  threads = threads.filter((t) => !t.broken);
  try {
    // Not os.availableParallelism(): Bun reads it from navigator, which pdf.js's legacy build replaces.
    while (threads.length < Math.max(1, Math.min(MAX_THREADS, cpus().length))) threads.push(new WorkerThread<HashRequest, HashReply>("storage/hash-worker.ts", "hashing thread"));
  } catch {
    // No worker threads here: callers hash on their own thread.
  }
  if (threads.length === 0) return null;
  return threads[turn++ % threads.length]!;
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
    const thread = pick();
    if (!thread) return null;
    const stream = ++streams;
    return new ThreadedHash(thread, stream, thread.ask({ kind: "open", stream, ...options }));
  }

  /**
   * Hashes buffer[0..length] and writes it to `fd` at `position`. `buffer` (whole, not a view) is
   * transferred: it is unusable until this resolves to it again. Rejects with the write's error,
   * carrying the buffer when the thread handed it back.
   */
  async batch(buffer: Uint8Array, length: number, fd: number, position: number): Promise<Uint8Array> {
    const reply = await this.thread.ask({ kind: "batch", stream: this.stream, buffer: buffer.buffer as ArrayBuffer, length, fd, position }, [buffer.buffer as ArrayBuffer]);
    const back = reply instanceof Error || !reply.buffer ? null : new Uint8Array(reply.buffer);
    const error = failed(reply);
    if (error) throw Object.assign(error, { buffer: back });
    return back!;
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
  const thread = pick();
  if (!thread) return null;
  const reply = await thread.ask({ kind: "file", path });
  // A thread that died answers an Error: the caller reads the file itself.
  if (reply instanceof Error) return null;
  const error = failed(reply);
  if (error) throw error;
  return { sha256: (reply as HashReply).sha256!, size: (reply as HashReply).size! };
}
