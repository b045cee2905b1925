/**
 * The ffmpeg and ffprobe executables and the one way they are run. Which binaries (explicit
 * paths from settings, else the static builds inside the @ffmpeg-installer / @ffprobe-installer
 * npm packages) is decided once, by resolveFfmpegPaths; a VideoTools then runs them with the
 * guards an untrusted upload needs: no stdin, local files only, container formats from a
 * short list (so a text file cannot turn into an HLS playlist that reads other files), a
 * wall-clock limit after which the process is SIGKILLed, an address-space cap (prlimit --as),
 * a lower CPU priority (nice), a bounded stdout and only the tail of stderr kept for the error.
 * Every failure is a VideoToolError whose `reason` says what kind it is.
 *
 * Each VideoTools knows the processes it started, so close() can kill them all; nothing here
 * is module-level state.
 */
import { accessSync, constants } from "node:fs";
import type { Subprocess } from "bun";
import { bundledBinary, bundledSource } from "./bundled-binaries.ts";

export interface FfmpegPaths {
  ffmpeg: string;
  ffprobe: string;
}

export type VideoToolFailure =
  /** The executable is not there, or not executable. */
  | "missing-binary"
  /** The wall-clock limit passed; the process was killed. */
  | "timeout"
  /** Over the address-space cap (the allocation failed inside ffmpeg). */
  | "memory"
  /** More on stdout than the caller allows; the process was killed. */
  | "output-too-large"
  /** The caller's signal aborted the run, or the VideoTools was closed. */
  | "cancelled"
  /** The file holds no video stream, or is no container ffmpeg reads. */
  | "not-video"
  /** A video container whose data is cut short or damaged. */
  | "corrupt"
  /** Anything else ffmpeg refused; the message carries its stderr tail. */
  | "failed";

export class VideoToolError extends Error {
  override name = "VideoToolError";
  constructor(
    readonly reason: VideoToolFailure,
    message: string,
  ) {
    super(message);
  }
}

/**
 * Demuxers ffmpeg may use on an upload. Without this list ffmpeg picks whatever its probing
 * guesses, including playlist and concat formats that open further files by name.
 */
export const VIDEO_DEMUXERS: readonly string[] = ["mov", "mp4", "matroska", "webm", "avi", "flv", "mpegts", "mpeg", "ogg", "asf", "mxf", "dv", "nut", "rm"];

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function resolveOne(tool: keyof FfmpegPaths, explicit: string | null | undefined): string {
  if (explicit) {
    if (!isExecutable(explicit)) throw new VideoToolError("missing-binary", `${tool} not found or not executable at ${explicit}`);
    return explicit;
  }
  const packaged = bundledBinary(tool);
  if (!packaged || !isExecutable(packaged)) {
    throw new VideoToolError("missing-binary", `${tool} not found: no path was configured and ${packaged ?? bundledSource(tool)} is not there or not executable`);
  }
  return packaged;
}

/**
 * The binaries to run: explicit paths (the MEDIABOX_FFMPEG_PATH / MEDIABOX_FFPROBE_PATH
 * settings) where given, else the npm packages' static builds. Throws VideoToolError
 * ("missing-binary") naming the one that is not there.
 */
export function resolveFfmpegPaths(explicit: { ffmpeg?: string | null; ffprobe?: string | null } = {}): FfmpegPaths {
  return { ffmpeg: resolveOne("ffmpeg", explicit.ffmpeg), ffprobe: resolveOne("ffprobe", explicit.ffprobe) };
}

export interface VideoToolsOptions {
  /** Wall-clock limit of an ffmpeg run unless the call gives its own. Default 10 minutes. */
  timeoutMs?: number;
  /** Wall-clock limit of an ffprobe run unless the call gives its own. Default 60 s. */
  probeTimeoutMs?: number;
  /** Address-space cap of each process. Default 2 GiB (1080p H.264 decoding needs ~350 MB, 4K HEVC ~1 GB). */
  memoryBytes?: number;
  /** CPU niceness of each process. Default 10: requests go first on a busy machine. */
  niceness?: number;
  /** `prlimit` and `nice`; default: found on PATH. Null turns that guard off. */
  prlimitPath?: string | null;
  nicePath?: string | null;
}

export interface RunOptions {
  timeoutMs?: number;
  /** Stdout beyond this kills the process (reason "output-too-large"). Default 16 MiB. */
  maxStdoutBytes?: number;
  /** Takes stdout as it arrives instead of collecting it (the result's stdout is then empty). */
  onStdout?: (chunk: Uint8Array) => void;
  /** Every stderr line, as it arrives. */
  onStderrLine?: (line: string) => void;
  signal?: AbortSignal;
  /** Told the process id once it runs (tests check that it is gone afterwards). */
  onSpawn?: (pid: number) => void;
}

export interface RunResult {
  exitCode: number;
  stdout: Buffer;
  /** The last lines of stderr, for error messages. */
  stderrTail: string[];
}

const MiB = 1024 * 1024;
const MEMORY_FAILURE = /Cannot allocate memory|Out of memory|bad_alloc|Resource temporarily unavailable|thread_encoder_init failed|pthread_create/i;
const STDERR_TAIL_LINES = 12;
const STDERR_LINE_CHARS = 400;

export class VideoTools {
  readonly paths: FfmpegPaths;
  readonly timeoutMs: number;
  readonly probeTimeoutMs: number;
  readonly memoryBytes: number;
  readonly niceness: number;
  /** The wrappers in use; null where the guard is off (tool missing or turned off). */
  readonly prlimitPath: string | null;
  readonly nicePath: string | null;
  private readonly live = new Set<Subprocess>();
  private closed = false;

  constructor(paths: FfmpegPaths, options: VideoToolsOptions = {}) {
    this.paths = paths;
    this.timeoutMs = options.timeoutMs ?? 10 * 60_000;
    this.probeTimeoutMs = options.probeTimeoutMs ?? 60_000;
    this.memoryBytes = options.memoryBytes ?? 2 * 1024 * MiB;
    this.niceness = options.niceness ?? 10;
    this.prlimitPath = options.prlimitPath === undefined ? Bun.which("prlimit") : options.prlimitPath;
    this.nicePath = options.nicePath === undefined ? Bun.which("nice") : options.nicePath;
  }

  /** Number of processes running now. */
  get running(): number {
    return this.live.size;
  }

  /** Kills every running process (their runs fail as "cancelled") and refuses new runs. */
  async close(): Promise<void> {
    this.closed = true;
    const procs = [...this.live];
    for (const proc of procs) proc.kill("SIGKILL");
    await Promise.all(procs.map((proc) => proc.exited));
  }

  /**
   * The arguments every run starts with: no stdin, no banner or progress lines, and inputs
   * limited to local files and pipes in the listed container formats.
   */
  private baseArgs(tool: keyof FfmpegPaths): string[] {
    const common = ["-hide_banner", "-protocol_whitelist", "file,pipe", "-format_whitelist", VIDEO_DEMUXERS.join(",")];
    return tool === "ffmpeg" ? ["-nostdin", "-nostats", ...common] : common;
  }

  /** The command line: nice and prlimit (when present) exec into the tool, so the pid is the tool's. */
  private commandLine(tool: keyof FfmpegPaths, args: string[]): string[] {
    const cmd: string[] = [];
    if (this.nicePath) cmd.push(this.nicePath, "-n", String(this.niceness));
    if (this.prlimitPath) cmd.push(this.prlimitPath, `--as=${Math.floor(this.memoryBytes)}`, "--");
    return [...cmd, this.paths[tool], ...this.baseArgs(tool), ...args];
  }

  /**
   * Runs ffmpeg or ffprobe with `args` after the common ones. Resolves with the exit code
   * whatever it is (callers decide what a failure means); rejects with a VideoToolError when the
   * run was stopped (time, output size, abort) or could not start. The process is dead when
   * this settles, however it settles.
   */
  async run(tool: keyof FfmpegPaths, args: string[], options: RunOptions = {}): Promise<RunResult> {
    if (this.closed) throw new VideoToolError("cancelled", `${tool} not run: the video tools are closed`);
    if (options.signal?.aborted) throw new VideoToolError("cancelled", `${tool} not run: cancelled`);
    const binary = this.paths[tool];
    // Checked here rather than left to the spawn: behind nice/prlimit a missing binary is only an exit code.
    if (!isExecutable(binary)) throw new VideoToolError("missing-binary", `${tool} not found or not executable at ${binary}`);

    const timeoutMs = options.timeoutMs ?? (tool === "ffprobe" ? this.probeTimeoutMs : this.timeoutMs);
    const maxStdout = options.maxStdoutBytes ?? 16 * MiB;
    let proc: Subprocess<"ignore", "pipe", "pipe">;
    try {
      proc = Bun.spawn(this.commandLine(tool, args), {
        stdin: "ignore",
        stdout: "pipe",
        stderr: "pipe",
        // A clean environment: FFREPORT and friends in the server's environment must not make ffmpeg write files.
        // GCONV_PATH: the static builds' glibc would load the system's gconv modules (built for another
        // glibc) to convert an MPEG-TS service name, and crash (SIGSEGV on any .ts/.mts/.m2ts with an SDT);
        // with no modules found the name stays unconverted.
        env: { PATH: process.env.PATH ?? "/usr/bin:/bin", LC_ALL: "C", AV_LOG_FORCE_NOCOLOR: "1", GCONV_PATH: "/nonexistent-gconv" },
      });
    } catch (err) {
      throw new VideoToolError("missing-binary", `${tool} could not be started: ${(err as Error).message}`);
    }
    this.live.add(proc);
    let stopped: VideoToolError | null = null;
    const stop = (error: VideoToolError) => {
      stopped ??= error;
      proc.kill("SIGKILL");
    };
    const timer = setTimeout(() => stop(new VideoToolError("timeout", `${tool} timed out after ${formatSeconds(timeoutMs)} s`)), timeoutMs);
    const onAbort = () => stop(new VideoToolError("cancelled", `${tool} cancelled`));
    options.signal?.addEventListener("abort", onAbort, { once: true });

    const stderrTail: string[] = [];
    const chunks: Uint8Array[] = [];
    let stdoutBytes = 0;
    try {
      options.onSpawn?.(proc.pid);
      const readStdout = (async () => {
        for await (const chunk of proc.stdout) {
          stdoutBytes += chunk.byteLength;
          if (stdoutBytes > maxStdout) {
            stop(new VideoToolError("output-too-large", `${tool} wrote more than ${Math.round(maxStdout / MiB)} MiB`));
            break;
          }
          if (options.onStdout) options.onStdout(chunk);
          else chunks.push(chunk);
        }
      })();
      const readStderr = readLines(proc.stderr, (line) => {
        stderrTail.push(line.length > STDERR_LINE_CHARS ? `${line.slice(0, STDERR_LINE_CHARS)}…` : line);
        if (stderrTail.length > STDERR_TAIL_LINES) stderrTail.shift();
        options.onStderrLine?.(line);
      });
      // A consumer that throws (a bad frame) must still end with the process dead: the finally below.
      await Promise.all([readStdout, readStderr]);
      const exitCode = await proc.exited;
      if (stopped) throw stopped;
      if (this.closed && proc.signalCode) throw new VideoToolError("cancelled", `${tool} stopped: the video tools were closed`);
      const crash = proc.signalCode;
      // Under the cap an allocation fails wherever it happens: a message naming memory or a thread
      // that could not start, or a crash (a static binary too big for the cap dies while loading).
      if (this.prlimitPath && (crash || (exitCode !== 0 && stderrTail.some((line) => MEMORY_FAILURE.test(line))))) {
        throw new VideoToolError("memory", `${tool} ran out of memory (cap ${Math.round(this.memoryBytes / MiB)} MiB)${crash ? `, killed by ${crash}` : ""}: ${tailText(stderrTail)}`);
      }
      if (crash) throw new VideoToolError("failed", `${tool} crashed (${crash}): ${tailText(stderrTail)}`);
      return { exitCode, stdout: Buffer.concat(chunks), stderrTail };
    } finally {
      clearTimeout(timer);
      options.signal?.removeEventListener("abort", onAbort);
      if (proc.exitCode === null && proc.signalCode === null) {
        proc.kill("SIGKILL");
        await proc.exited;
      }
      this.live.delete(proc);
    }
  }
}

/** Feeds each line of a stream (split at \n or \r) to `onLine`. */
async function readLines(stream: ReadableStream<Uint8Array>, onLine: (line: string) => void): Promise<void> {
  const decoder = new TextDecoder();
  let pending = "";
  for await (const chunk of stream) {
    pending += decoder.decode(chunk, { stream: true });
    const lines = pending.split(/\r\n|\r|\n/);
    pending = lines.pop() ?? "";
    // A line with no end in sight is cut, so a stream without newlines cannot grow `pending` forever.
    if (pending.length > 64 * 1024) {
      lines.push(pending);
      pending = "";
    }
    for (const line of lines) if (line) onLine(line);
  }
  pending += decoder.decode();
  if (pending) onLine(pending);
}

/** A stderr tail as one line for a message, the meaningful last lines first in order. */
export function tailText(lines: string[], count = 3): string {
  const text = lines
    .slice(-count)
    .map((line) => line.replace(/^\[[^\]]+ @ 0x[0-9a-f]+\]\s*/, "").trim())
    .join("; ");
  return text || "no message";
}

const formatSeconds = (ms: number) => String(Number((ms / 1000).toFixed(3)));

export interface ToolsDescription {
  ffmpeg: { path: string; version: string };
  ffprobe: { path: string; version: string };
  /** The guards in force: false where the wrapper is missing. */
  limits: { memoryCap: boolean; memoryBytes: number; lowPriority: boolean };
}

/** The version line of each binary, for a doctor/verify command. Throws VideoToolError when one does not run. */
export async function describeTools(tools: VideoTools): Promise<ToolsDescription> {
  const version = async (tool: keyof FfmpegPaths) => {
    const result = await tools.run(tool, ["-version"], { timeoutMs: 30_000, maxStdoutBytes: MiB });
    const first = result.stdout.toString("utf8").split("\n")[0] ?? "";
    const match = first.match(/version\s+(\S+)/);
    if (result.exitCode !== 0 || !match) throw new VideoToolError("failed", `${tool} -version failed (exit ${result.exitCode}): ${tailText(result.stderrTail)}`);
    return { path: tools.paths[tool], version: match[1]! };
  };
  return {
    ffmpeg: await version("ffmpeg"),
    ffprobe: await version("ffprobe"),
    limits: { memoryCap: tools.prlimitPath !== null, memoryBytes: tools.memoryBytes, lowPriority: tools.nicePath !== null },
  };
}
